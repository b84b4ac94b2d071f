package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/views"
)

// testGatewayPage answers GET /dev/pay/:reference: the built-in gateway's
// payment page with the order lines and total.
func (s *Server) testGatewayPage(c echo.Context) error {
	view, err := s.ownPayment(c, c.Param("reference"))
	if err != nil {
		return err
	}
	lines, total := orderLines(view.Order)
	return render(c, http.StatusOK, views.TestGatewayPage(views.TestGatewayModel{
		Chrome:    s.chrome("Test payment"),
		Reference: view.Payment.Reference, Action: testGatewayPayPath(view.Payment.Reference),
		Lines: lines, Total: total, Open: view.Payment.Status == engine.PaymentPending, Status: string(view.Payment.Status),
	}))
}

// testGatewayDecide answers POST /dev/pay/:reference with status=success|failed|cancelled:
// it sends the browser back to the portal with a signed return, as a real
// gateway would.
func (s *Server) testGatewayDecide(c echo.Context) error {
	status := c.FormValue("status")
	switch engine.PaymentOutcome(status) {
	case engine.OutcomeSuccess, engine.OutcomeFailed, engine.OutcomeCancelled:
	default:
		return newAPIError(http.StatusBadRequest, "Choose success, failed or cancelled.",
			FieldErrorBody{Field: "status", Message: "must be success, failed or cancelled"})
	}
	view, err := s.ownPayment(c, c.Param("reference"))
	if err != nil {
		return err
	}
	if view.Payment.Status != engine.PaymentPending {
		// The gateway decides open attempts only: a settled one stays as it is.
		return engine.Errorf(engine.CodeConflict, "this payment attempt is already settled")
	}
	tx := engine.NewReference("TX-")
	return c.Redirect(http.StatusSeeOther, s.gateway.ReturnURL(view.Payment.Reference, status, tx, view.Payment.AmountMinor, view.Payment.Currency))
}
