package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
)

// RegisterEntry answers GET /membership/register/:periodId[/:u]?u=&h=&error=.
// With a hash link it runs the guard: on success it starts a new session
// bound to the user key and answers 303 to the clean address, so that the
// hash stays out of history, logs and Referer; on failure it redirects to
// the same route with ?error=. Failed links are throttled per client
// address and user key (a 429 page, signin.go). Without a hash link it
// shows the overview of the signed-in user.
func (s *Server) RegisterEntry(c echo.Context) error {
	periodID, ok := server.PathID(c, "periodId")
	if !ok {
		return s.AccessDenied(c, "period")
	}
	q := c.Request().URL.Query()
	if q.Has("error") {
		return s.AccessDenied(c, q.Get("error"))
	}
	userKey, hash := q.Get("u"), q.Get("h")
	if pathKey := c.Param("u"); pathKey != "" {
		userKey = pathKey
	}
	if userKey == "" && hash == "" {
		return s.overview(c, periodID)
	}
	deny := func(reason string) error {
		return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, periodID)+"?error="+reason)
	}
	if err := s.CheckSignIn(c, userKey); err != nil { // signin.go: a 429 page over the budget of failures
		return err
	}
	switch problem := s.SignInProblem(c, userKey, hash); problem {
	case "":
	case server.FailMissing:
		s.SignInFailed(c, userKey, problem)
		return deny("missing")
	case server.FailLinksOff: // not a guess: the link is right but no longer accepted
		return deny("links_off")
	default:
		s.SignInFailed(c, userKey, problem)
		return deny("invalid")
	}
	if err := registration.Of(s.engine).CheckRegistrationAccess(c.Request().Context(), userKey, periodID); err != nil {
		// A period of an organisation the key has no persons in is "not
		// found" in the engine, so it reads as an unknown period here too.
		switch engine.ErrorCode(err) {
		case engine.CodeNotFound, engine.CodeConflict:
			return deny("period")
		}
		return err
	}
	if _, err := s.Sessions().Start(c.Request().Context(), c.Response(), c.Request(), userKey, server.StartValues(c, nil)); err != nil {
		return server.SessionStoreError(err)
	}
	return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, periodID))
}
