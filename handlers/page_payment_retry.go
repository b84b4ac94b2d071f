package handlers

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
)

// paymentRetry answers POST /membership/payment-retry (form field reference):
// a new payment attempt for the registration that reference belongs to, for
// the signed-in user only.
func (s *Server) paymentRetry(c echo.Context) error {
	ctx := c.Request().Context()
	view, err := s.ownPayment(c, c.FormValue("reference"))
	if err != nil {
		return err
	}
	form, err := s.engine.RetryPayment(ctx, view.Order.UserKey, fmt.Sprint(view.Order.ProcessInstanceID))
	if err != nil {
		return err
	}
	if form.PaymentURL == "" {
		return &engine.Error{Code: engine.CodeUnavailable, Message: "The payment provider is unavailable. Please try again shortly."}
	}
	return c.Redirect(http.StatusSeeOther, form.PaymentURL)
}
