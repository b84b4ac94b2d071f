package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/handlers/server"
)

// maxWebhookBytes caps a provider event's body. Stripe's checkout events
// are a few KiB; the cap is below the 64 KiB of the rest of the site.
const maxWebhookBytes = 64 << 10

// StripeWebhook answers POST /webhooks/stripe: Stripe's events. The raw
// body is read (capped) and its Stripe-Signature verified by the engine's
// provider before anything is believed; there is no session, CSRF or
// cross-origin check on this route (Stripe is not a browser; the signature
// is the authentication). It answers fast: 200 for an event settled, seen
// before, or of no concern (so that Stripe stops resending it), 400 for a
// forged or unreadable one, 503 when the database is down (Stripe retries).
func (s *Server) StripeWebhook(c echo.Context) error {
	return s.receiveStripeEvent(c, func(ctx context.Context, body []byte, signature string) (*payment.PaymentResult, error) {
		return payment.Of(s.engine).ReceivePaymentEvent(ctx, payment.StripeProvider, body, signature)
	})
}

// OrganisationStripeWebhook answers POST /webhooks/stripe/{slug}: the
// events of an organisation's own Stripe account (its payment settings),
// verified with that account's webhook secret, settling only its
// attempts. One address per account, rather than one address trying every
// club's secret in turn: each event is checked against exactly one
// secret, a club's events never reach another's account, and Stripe's
// dashboard shows each club the address it registered. An unknown slug
// is 404 (nothing to acknowledge: Stripe's endpoint is misconfigured).
func (s *Server) OrganisationStripeWebhook(c echo.Context) error {
	t, err := s.Organisations().BySlugOf(c.Request().Context(), c.Param("org"))
	if err != nil {
		return err
	}
	if t == nil {
		return server.NewAPIError(http.StatusNotFound, "No organisation has this webhook address.")
	}
	return s.receiveStripeEvent(c, func(ctx context.Context, body []byte, signature string) (*payment.PaymentResult, error) {
		return payment.Of(s.engine).ReceiveOrganisationPaymentEvent(ctx, t.ID, payment.StripeProvider, body, signature)
	})
}

// receiveStripeEvent reads a webhook's body and answers what receive made of it.
func (s *Server) receiveStripeEvent(c echo.Context, receive func(ctx context.Context, body []byte, signature string) (*payment.PaymentResult, error)) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxWebhookBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return server.NewAPIError(http.StatusRequestEntityTooLarge, "The event is too large.")
		}
		return server.NewAPIError(http.StatusBadRequest, "The event could not be read.")
	}
	res, err := receive(c.Request().Context(), body, c.Request().Header.Get("Stripe-Signature"))
	switch code := engine.ErrorCode(err); {
	case err == nil:
	case code == engine.CodeNotFound:
		// Not one of our attempts (another system on the same account, or
		// a provider switched off): acknowledged, so that it is not resent.
		s.LogFor(c).Warn("payment event for an unknown attempt ignored", "err", err)
		return c.JSON(http.StatusOK, map[string]string{"status": "ignored"})
	case code == engine.CodeInvalid:
		s.LogFor(c).Warn("payment event refused", "err", err)
		return server.NewAPIError(http.StatusBadRequest, "The event could not be verified.")
	default:
		return err
	}
	status := "ignored"
	switch {
	case res == nil:
	case res.Replayed:
		status = "duplicate"
	case res.Mismatch:
		status = "recorded"
	default:
		status = "settled"
	}
	return c.JSON(http.StatusOK, map[string]string{"status": status})
}
