package members

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/handlers/server"
	"portal/views/memberview"
)

// PayLink answers GET /pay/:reference?reference=&amount=: the stable pay
// link of an order, in the done page, the API's paymentUrl and e-mails. It
// creates or reuses the provider's checkout for the order's open attempt
// (a new one when the last expired, failed or was cancelled) and sends the
// browser there. The query only mirrors the spec's paymentUrl: the order
// and its amount come from the database, never from it. For a bank
// transfer the portal's own page is the checkout: the account, amount,
// reference and QR code (no order lines: the link travels in e-mails).
//
// A club with several payment methods is asked first which one
// (payMethodChoice); the answer comes back as POST to the same address.
func (s *Server) PayLink(c echo.Context) error {
	ctx := c.Request().Context()
	choice, err := payment.Of(s.engine).PayLinkMethods(ctx, c.Param("reference"))
	if err != nil {
		return err
	}
	if len(choice.Methods) > 1 && (choice.Order.DebitMandateID == nil || choice.Order.DebitDueOn == nil) {
		// Once the order is due under a mandate the member chose: the
		// page shows it. An order no longer due (its mandate ended, its
		// debit returned) is offered the methods again.
		return s.payMethodChoice(c, choice)
	}
	p, err := payment.Of(s.engine).FollowPayLink(ctx, c.Param("reference"))
	if err != nil {
		return err
	}
	return s.toCheckout(c, p)
}

// toCheckout sends the member to an attempt's checkout: the portal's own
// page for a bank transfer, the provider's for the others.
func (s *Server) toCheckout(c echo.Context, p *engine.Payment) error {
	ctx := c.Request().Context()
	bt, err := s.bankTransferModel(ctx, p)
	if err != nil {
		return err
	}
	if bt != nil {
		return server.Render(c, http.StatusOK, memberview.PayByTransfer(memberview.PayByTransferModel{Chrome: s.Chrome(server.Tr(c, "title_pay_transfer")), Transfer: *bt}))
	}
	if p.Provider == payment.DirectDebitProvider {
		// The checkout of a debit is this page itself: never redirect to it.
		return s.payByDebit(c, p)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, sameSite(c, p.PaymentURL))
}

// sameSite keeps a relative address of this site (the test gateway's
// pages, which serve puts under no host of their own) on the request's
// organisation: its /o/{slug} prefix goes in front. The member stays on the
// host and prefix where their session cookie and organisation are, whichever
// club's hostname they paid from. Absolute addresses (a provider's) pass.
func sameSite(c echo.Context, u string) string {
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return server.OrganisationPath(c, u)
	}
	return u
}
