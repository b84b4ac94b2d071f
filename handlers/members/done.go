package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// DonePage answers GET /membership/register/:periodId/done: the order and
// the payment link, followed after a visible countdown.
func (s *Server) DonePage(c echo.Context) error {
	r, ok, err := s.registrationOf(c)
	if !ok {
		return err
	}
	o, err := registration.Of(s.engine).LoadOverview(c.Request().Context(), r.userKey, r.periodID)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return s.AccessDenied(c, "period")
		}
		return err
	}
	if o.Form.State != engine.StateDone {
		return c.Redirect(http.StatusSeeOther, stepURL(c, o.Form))
	}
	m := memberview.DoneModel{Chrome: s.Chrome(server.Tr(c, "title_done")), Period: o.Period.Name,
		Persons:    personStatuses(server.LangOf(c), o.Form.People, func(p registration.FormPerson) string { return p.Status }),
		PaymentURL: o.Form.PaymentURL, Seconds: paymentCountdown}
	m.Lines, m.Total = quoteLines(server.LangOf(c), o.Order)
	if m.BankTransfer, err = s.bankTransferOf(c.Request().Context(), o.Period.OrganisationID, o.Form.PaymentURL); err != nil {
		return err
	}
	return server.Render(c, http.StatusOK, memberview.Done(m))
}
