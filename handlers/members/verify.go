package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/message"
	"portal/handlers/server"
	"portal/views/memberview"
)

// VerifyCard answers GET /verify/:token, the page a membership card's QR
// code opens: public (a volunteer at the club door has no session), so it
// shows only the name, the type, the period and validity, and an unknown
// token is a plain 404. Search engines are asked not to index it.
func (s *Server) VerifyCard(c echo.Context) error {
	c.Response().Header().Set("X-Robots-Tag", "noindex, nofollow")
	c.Response().Header().Set("Cache-Control", "no-store")
	check, err := message.Of(s.engine).VerifyCard(c.Request().Context(), c.Param("token"))
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			s.RenderErrorPage(c, http.StatusNotFound, server.Tr(c, "verify_unknown"))
			return nil
		}
		return err
	}
	m := memberview.VerifyModel{Chrome: s.Chrome(server.Tr(c, "title_verify")), Name: check.Name, Type: check.Type, Period: check.Period,
		Dates: server.LangOf(c).Date(check.StartDate) + " – " + server.LangOf(c).Date(check.EndDate), Valid: check.Valid}
	switch {
	case check.Valid:
		m.State = server.Tr(c, "verify_valid")
	case check.Expired:
		m.State = server.Tr(c, "verify_expired")
	case check.NotStarted:
		m.State = server.Tr(c, "verify_not_yet")
	default:
		m.State = server.Tr(c, "verify_not_valid", map[string]any{"Status": check.Status})
	}
	return server.Render(c, http.StatusOK, memberview.Verify(m))
}
