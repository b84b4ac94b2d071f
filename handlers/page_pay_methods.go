package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/directdebit"
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

// payByDebit shows an attempt of direct debit: the amount the club
// collects, its name and Creditor Identifier.
func (s *Server) payByDebit(c echo.Context, p *engine.Payment) error {
	view, err := s.engine.PaymentForPage(c.Request().Context(), p.Reference)
	if err != nil {
		return err
	}
	dd, ok := s.engine.MethodProvider(view.Order.OrganisationID, engine.DirectDebitProvider).(*directdebit.Provider)
	if !ok {
		return &engine.Error{Code: engine.CodeUnavailable, Message: "direct debit is not set up for this club"}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	t := views.PaymentMethodTextIn(c.Request().Context())
	return render(c, http.StatusOK, views.PayByDebit(views.PayByDebitModel{Chrome: s.chrome(t.DebitTitle),
		Total: langOf(c).Money(p.AmountMinor, p.Currency), Creditor: dd.Creditor().Name, CreditorID: dd.CreditorID()}))
}
