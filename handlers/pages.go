package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/relay/session"
	"portal/static"
	"portal/views"
)

// Access-denied reasons: the `error` query value of a denied hash link, and
// the message each one shows.
var deniedMessages = map[string]string{
	"missing": "The security verification parameters are missing from this link. Open the link from your e-mail again, in full.",
	"invalid": "The security verification of this link is invalid. Open the link from your e-mail again, or ask the club for a new one.",
	"period":  "This membership period is unknown, closed or expired. Registration is not possible with this link.",
	"session": "Your session has ended. Open the link from your e-mail again to continue.",
}

const deniedDefault = "Access denied. Open the link from your e-mail again, or ask the club for help."

func (s *Server) chrome(title string) views.Chrome {
	return views.Chrome{Title: title, Assets: views.Assets{CSS: static.URL("app.css"), HTMX: static.URL("htmx.min.js"), App: static.URL("app.js")}}
}

// accessDenied renders the access-denied page for a reason.
func (s *Server) accessDenied(c echo.Context, reason string) error {
	msg, ok := deniedMessages[reason]
	if !ok {
		msg = deniedDefault
	}
	m := views.ErrorModel{Chrome: s.chrome("Access denied"), Message: msg}
	return render(c, http.StatusForbidden, views.ErrorPage(m))
}

// registerPath is the clean address of a period's registration, plus an optional sub-path.
func registerPath(periodID int64, sub ...string) string {
	p := fmt.Sprintf("/membership/register/%d", periodID)
	if len(sub) > 0 {
		p += "/" + strings.Join(sub, "/")
	}
	return p
}

func periodParam(c echo.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("periodId"), 10, 64)
	return id, err == nil && id > 0
}

// registerEntry answers GET /membership/register/:periodId[/:u]?u=&h=&error=.
// With a hash link it runs the guard: on success it starts a new session
// bound to the user key and answers 303 to the clean address, so that the
// hash stays out of history, logs and Referer; on failure it redirects to
// the same route with ?error=. Failed links are throttled per client
// address and user key (a 429 page, signin.go). Without a hash link it
// shows the overview of the signed-in user.
func (s *Server) registerEntry(c echo.Context) error {
	periodID, ok := periodParam(c)
	if !ok {
		return s.accessDenied(c, "period")
	}
	q := c.Request().URL.Query()
	if q.Has("error") {
		return s.accessDenied(c, q.Get("error"))
	}
	userKey, hash := q.Get("u"), q.Get("h")
	if pathKey := c.Param("u"); pathKey != "" {
		userKey = pathKey
	}
	if userKey == "" && hash == "" {
		return s.overview(c, periodID)
	}
	deny := func(reason string) error {
		return c.Redirect(http.StatusSeeOther, registerPath(periodID)+"?error="+reason)
	}
	if err := s.checkSignIn(c, userKey); err != nil { // signin.go: a 429 page over the budget of failures
		return err
	}
	switch problem := s.signInProblem(userKey, hash); problem {
	case "":
	case failMissing:
		s.signInFailed(c, userKey, problem)
		return deny("missing")
	default:
		s.signInFailed(c, userKey, problem)
		return deny("invalid")
	}
	if err := s.engine.CheckRegistrationAccess(c.Request().Context(), userKey, periodID); err != nil {
		// A period of an organisation the key has no persons in is "not
		// found" in the engine, so it reads as an unknown period here too.
		switch engine.ErrorCode(err) {
		case engine.CodeNotFound, engine.CodeConflict:
			return deny("period")
		}
		return err
	}
	if _, err := s.sessions.Start(c.Request().Context(), c.Response(), c.Request(), userKey, nil); err != nil {
		return sessionStoreError(err)
	}
	return c.Redirect(http.StatusSeeOther, registerPath(periodID))
}

// browserSession returns the signed-in user of a page request, or renders
// what the member needs instead: a page that carries a cross-site arrival
// over (SameSite=Strict withholds the cookie on the first, cross-site
// request), or access denied.
func (s *Server) browserSession(c echo.Context) (*session.Session, bool, error) {
	req := c.Request()
	sess, err := s.sessions.Get(req.Context(), req)
	switch {
	case err == nil && sess.UserKey != "":
		return sess, true, nil
	case err != nil && !errors.Is(err, session.ErrNotFound):
		return nil, false, sessionStoreError(err)
	}
	if req.Method == http.MethodGet && req.Header.Get("Sec-Fetch-Site") == "cross-site" && req.URL.Query().Get("continue") == "" {
		target := req.URL.Path + "?continue=1"
		m := views.ContinueModel{Chrome: s.chrome("Continue to your registration"), URL: target}
		return nil, false, render(c, http.StatusOK, views.ContinuePage(m))
	}
	return nil, false, s.accessDenied(c, "session")
}
