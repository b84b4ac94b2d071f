package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
)

// PaymentRetry answers POST /membership/payment-retry (form field reference):
// a new payment attempt for the registration that reference belongs to, for
// the signed-in user only: the browser goes straight to its checkout.
func (s *Server) PaymentRetry(c echo.Context) error {
	ctx := c.Request().Context()
	view, err := s.OwnPayment(c, c.FormValue("reference"))
	if err != nil {
		return err
	}
	if view.Order.Status != engine.OrderUnpaid {
		return engine.Errorf(engine.CodeConflict, "this registration is not waiting for payment")
	}
	p, err := payment.Of(s.engine).FollowPayLink(ctx, view.Order.PayReference)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, p.PaymentURL)
}
