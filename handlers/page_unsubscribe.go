package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/message"
	"portal/outbound/optout"
	"portal/views"
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
	t, err := optout.Verify(s.hashSecret, c.QueryParam("t"))
	if err != nil || !message.OptOutCategory(t.Category) {
		return optout.Token{}, false
	}
	if tn := organisationOfRequest(c); tn != nil && tn.ID != t.Organisation {
		return optout.Token{}, false
	}
	return t, true
}

// unsubscribePage answers GET /unsubscribe?t=...: the question, with a
// button that posts. Opening the link changes nothing, since mail
// scanners and previews open links.
func (s *Server) unsubscribePage(c echo.Context) error {
	return s.unsubscribe(c, false)
}

// unsubscribeNow answers POST /unsubscribe?t=...: the mail client's
// one-click request (body List-Unsubscribe=One-Click) or the page's
// button. It needs no session: the signed token is the credential.
func (s *Server) unsubscribeNow(c echo.Context) error {
	return s.unsubscribe(c, true)
}

func (s *Server) unsubscribe(c echo.Context, confirm bool) error {
	c.Response().Header().Set("X-Robots-Tag", "noindex, nofollow")
	c.Response().Header().Set("Cache-Control", "no-store")
	t, ok := s.unsubscribeToken(c)
	if !ok {
		s.renderErrorPage(c, http.StatusNotFound, tr(c, "unsubscribe_invalid"))
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
	title := tr(c, "unsubscribe_title")
	if confirm {
		title = tr(c, "unsubscribe_title_done")
	}
	return render(c, http.StatusOK, views.UnsubscribePage(views.UnsubscribeModel{Chrome: s.chrome(title), Club: org.Name,
		What: tr(c, unsubscribeWords[t.Category]), Addresses: t.Addresses, Action: organisationPath(c, UnsubscribePath) + "?t=" + c.QueryParam("t"), Done: confirm}))
}
