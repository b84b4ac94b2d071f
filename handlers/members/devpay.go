package members

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/handlers/server"
	"portal/views/memberview"
)

// TestGatewayPage answers GET /dev/pay/:reference: the built-in gateway's
// payment page with the order lines and total.
func (s *Server) TestGatewayPage(c echo.Context) error {
	if !LoopbackPeer(c.Request()) {
		return echo.ErrNotFound
	}
	view, err := s.OwnPayment(c, c.Param("reference"))
	if err != nil {
		return err
	}
	lines, total := server.OrderLines(server.LangOf(c), view.Order)
	return server.Render(c, http.StatusOK, memberview.TestGateway(memberview.TestGatewayModel{
		Chrome:    s.Chrome("Test payment"),
		Reference: view.Payment.Reference, Action: server.OrganisationPath(c, server.TestGatewayPayPath(view.Payment.Reference)),
		Lines: lines, Total: total, Open: view.Payment.Status == engine.PaymentPending, Status: string(view.Payment.Status),
	}))
}

// TestGatewayDecide answers POST /dev/pay/:reference with status=success|failed|cancelled:
// it sends the browser back to the portal with a signed return, as a real
// gateway would.
func (s *Server) TestGatewayDecide(c echo.Context) error {
	status := c.FormValue("status")
	switch engine.PaymentOutcome(status) {
	case engine.OutcomeSuccess, engine.OutcomeFailed, engine.OutcomeCancelled:
	default:
		return server.NewAPIError(http.StatusBadRequest, "Choose success, failed or cancelled.",
			server.FieldErrorBody{Field: "status", Message: "must be success, failed or cancelled"})
	}
	if !LoopbackPeer(c.Request()) {
		return echo.ErrNotFound
	}
	view, err := s.OwnPayment(c, c.Param("reference"))
	if err != nil {
		return err
	}
	if view.Payment.Status != engine.PaymentPending {
		// The gateway decides open attempts only: a settled one stays as it is.
		return engine.Errorf(engine.CodeConflict, "this payment attempt is already settled")
	}
	tx := engine.NewReference("TX-")
	return c.Redirect(http.StatusSeeOther, sameSite(c, s.Gateway.ReturnURL(view.Payment.Reference, status, tx, view.Payment.AmountMinor, view.Payment.Currency)))
}

// LoopbackPeer says the request comes straight from this machine. The test
// gateway lets whoever reaches it mark their own payment paid: serve allows
// it only on a loopback PORTAL_BASE_URL, but PORTAL_ADDR may still listen
// on every interface (the default :8080), so its pages answer only to
// clients on this machine.
func LoopbackPeer(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
