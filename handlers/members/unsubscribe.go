package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/message"
	"portal/handlers/server"
	"portal/outbound/optout"
	"portal/views/memberview"
)

// UnsubscribePath is the one-click unsubscribe link of reminders and
// renewal prompts (List-Unsubscribe, RFC 8058), with its token in t.
const UnsubscribePath = "/unsubscribe"

// unsubscribeWords are the message ids of the categories in the page's words.
var unsubscribeWords = map[string]string{message.OptOutReminders: "unsubscribe_what_reminders", message.OptOutRenewals: "unsubscribe_what_renewals"}

// unsubscribeToken checks the request's token: signed with the portal's
// hash secret, for a known category, and for the organisation the request
// resolved to (when one did), so a link works on its club's address only.
func (s *Server) unsubscribeToken(c echo.Context) (optout.Token, bool) {
	t, err := optout.Verify(s.HashSecret(), c.QueryParam("t"))
	if err != nil || !message.OptOutCategory(t.Category) {
		return optout.Token{}, false
	}
	if tn := server.OrganisationOfRequest(c); tn != nil && tn.ID != t.Organisation {
		return optout.Token{}, false
	}
	return t, true
}

// UnsubscribePage answers GET /unsubscribe?t=...: the question, with a
// button that posts. Opening the link changes nothing, since mail
// scanners and previews open links.
func (s *Server) UnsubscribePage(c echo.Context) error {
	return s.unsubscribe(c, false)
}

// UnsubscribeNow answers POST /unsubscribe?t=...: the mail client's
// one-click request (body List-Unsubscribe=One-Click) or the page's
// button. It needs no session: the signed token is the credential.
func (s *Server) UnsubscribeNow(c echo.Context) error {
	return s.unsubscribe(c, true)
}

func (s *Server) unsubscribe(c echo.Context, confirm bool) error {
	c.Response().Header().Set("X-Robots-Tag", "noindex, nofollow")
	c.Response().Header().Set("Cache-Control", "no-store")
	t, ok := s.unsubscribeToken(c)
	if !ok {
		s.RenderErrorPage(c, http.StatusNotFound, server.Tr(c, "unsubscribe_invalid"))
		return nil
	}
	ctx := c.Request().Context()
	if confirm {
		if err := message.Of(s.engine).Unsubscribe(ctx, t.Organisation, t.Category, t.Addresses); err != nil {
			return err
		}
	}
	org, err := s.engine.Organisation(ctx, t.Organisation)
	if err != nil {
		return err
	}
	title := server.Tr(c, "unsubscribe_title")
	if confirm {
		title = server.Tr(c, "unsubscribe_title_done")
	}
	return server.Render(c, http.StatusOK, memberview.Unsubscribe(memberview.UnsubscribeModel{Chrome: s.Chrome(title), Club: org.Name,
		What: server.Tr(c, unsubscribeWords[t.Category]), Addresses: t.Addresses, Action: server.OrganisationPath(c, UnsubscribePath) + "?t=" + c.QueryParam("t"), Done: confirm}))
}
