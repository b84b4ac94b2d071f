package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/relay/session"
	"portal/views"
	"portal/views/lang"
)

// Routes of the payment pages. The test gateway gets their full addresses
// from TestGatewayURLs, so the engine need not know them.
const (
	TestGatewayPayPrefix = "/dev/pay/"
	PaymentReturnPath    = "/membership/payment-return"
	// PayLinkPrefix is the stable pay link of an order (the spec's paymentUrl).
	PayLinkPrefix = "/pay/"
	// StripeWebhookPath is where Stripe sends its events; register
	// {base}/webhooks/stripe at Stripe (the environment's account), and
	// {base}/webhooks/stripe/{slug} for an organisation's own account.
	StripeWebhookPath = "/webhooks/stripe"
)

// isStripeWebhook says whether p is a Stripe webhook address (the
// environment's or an organisation's): a server-to-server call,
// authenticated by its signature, without session or cross-origin check.
func isStripeWebhook(p string) bool {
	rest, ok := strings.CutPrefix(p, StripeWebhookPath)
	return ok && (rest == "" || rest[0] == '/' && !strings.Contains(rest[1:], "/"))
}

// PaymentLinks returns the portal's payment addresses for
// engine.WithPaymentLinks: the stable pay link {base}/pay/{reference} with
// reference and amount in the query (as the spec's paymentUrl), and the
// return and cancel addresses a provider sends the browser back to. base is
// the organisation's address the engine passes, baseURL when it passes none.
func PaymentLinks(baseURL string) engine.PaymentLinks {
	or := func(base string) string {
		if base == "" {
			return baseURL
		}
		return base
	}
	back := func(status string) func(string, string) string {
		return func(base, ref string) string {
			return or(base) + PaymentReturnPath + "?" + url.Values{"reference": {ref}, "status": {status}}.Encode()
		}
	}
	return engine.PaymentLinks{
		PayLink: func(base, ref string, amountMinor int64) string {
			return or(base) + PayLinkPrefix + url.PathEscape(ref) + "?" +
				url.Values{"reference": {ref}, "amount": {engine.FormatAmount(amountMinor)}}.Encode()
		},
		ReturnURL: back(string(engine.OutcomeSuccess)),
		CancelURL: back(string(engine.OutcomeCancelled)),
	}
}

// TestGatewayPayPath is the test gateway's page for a payment, relative to the base URL.
func TestGatewayPayPath(reference string) string {
	return TestGatewayPayPrefix + url.PathEscape(reference)
}

// TestGatewayURLs returns the addresses of the test gateway's payment page
// and of the payment return under baseURL, for engine.NewTestGateway.
func TestGatewayURLs(baseURL string) payment.TestGatewayURLs {
	return payment.TestGatewayURLs{
		PayURL:    func(reference string) string { return baseURL + TestGatewayPayPath(reference) },
		ReturnURL: baseURL + PaymentReturnPath,
	}
}

func OrderLines(lg lang.Language, order *engine.Order) ([]views.OrderLineModel, string) {
	lines := make([]views.OrderLineModel, len(order.Lines))
	for i, l := range order.Lines {
		lines[i] = views.OrderLineModel{Description: l.Description, Amount: lg.Money(l.AmountMinor, l.Currency)}
	}
	return lines, lg.Money(order.TotalMinor, order.Currency)
}

// OwnPayment loads a payment attempt for the signed-in user who owns its
// order. The test gateway signs whatever outcome it is told, so only the
// member who registered may use it, and nobody else sees their order.
func (s *Server) OwnPayment(c echo.Context, reference string) (*payment.PaymentView, error) {
	ctx := c.Request().Context()
	sess, err := s.SessionFor(c)
	if errors.Is(err, session.ErrNotFound) {
		return nil, NewAPIError(http.StatusUnauthorized, "Your session has ended. Open the link from your e-mail again to continue.")
	} else if err != nil {
		return nil, SessionStoreError(err)
	}
	view, err := payment.Of(s.engine).PaymentForPage(ctx, reference)
	if err != nil {
		return nil, err
	}
	if view.Order.UserKey != sess.UserKey || !BoundTo(sess, view.Order.OrganisationID) {
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	return view, nil
}

// PaymentRetryPath is where the payment return page's retry form posts.
const PaymentRetryPath = "/membership/payment-retry"

// VerifyPrefix starts the public card check a membership card's QR code opens.
const VerifyPrefix = "/verify/"
