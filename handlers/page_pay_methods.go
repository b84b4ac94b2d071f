package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/views"
)

// payMethodChoice is the pay link of an unpaid order whose club offers
// several payment methods: the amount and the methods again, the order's
// current one checked (issue 29).
func (s *Server) payMethodChoice(c echo.Context, choice *engine.PayLinkChoice) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	m := views.PayChooseModel{Chrome: s.chrome(views.PaymentMethodTextIn(c.Request().Context()).PayTitle),
		Action:  tenantPath(c, payLinkPrefix+choice.Order.PayReference),
		Total:   langOf(c).Money(choice.Order.TotalMinor, choice.Order.Currency),
		Methods: views.PaymentMethodChoiceModel{Methods: choice.Methods, Current: choice.Current}}
	return render(c, http.StatusOK, views.PayChoose(m))
}

// choosePayMethod answers POST /pay/:reference: the member's choice on the
// pay link. The order is paid with that method from now on (an open
// attempt of another is closed), and the member goes on to its checkout.
func (s *Server) choosePayMethod(c echo.Context) error {
	p, err := s.engine.ChoosePaymentMethod(c.Request().Context(), c.Param("reference"), c.FormValue("paymentMethod"))
	if err != nil {
		return err
	}
	return s.toCheckout(c, p)
}
