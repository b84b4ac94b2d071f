package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/relay/session"
)

// externalLoginRequest is the body of POST /api/auth/external-login.
type externalLoginRequest struct {
	UserKey string `json:"userKey"`
	Hash    string `json:"hash"`
}

// ExternalLogin answers POST /api/auth/external-login: a valid hash of the
// user key starts a new server-side session (a new id, so a planted cookie
// is worthless) and answers 200 with an empty body. Failed sign-ins are
// throttled per client address and user key (429, signin.go).
func (s *Server) ExternalLogin(c echo.Context) error {
	var body externalLoginRequest
	if err := DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	if err := s.CheckSignIn(c, body.UserKey); err != nil { // signin.go: 429 over the budget of failures
		return err
	}
	if problem := s.SignInProblem(c, body.UserKey, body.Hash); problem != "" {
		s.SignInFailed(c, body.UserKey, problem)
		return NewAPIError(http.StatusUnauthorized, "The user key and hash do not match.")
	}
	values, err := s.backendLogin(c, body.UserKey, body.Hash) // signin.go: BACKEND_JWT when a backend is set
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusUnauthorized {
			s.SignInFailed(c, body.UserKey, failRejected) // a backend that is down (502) is not the member's failure
		}
		return err
	}
	if _, err := s.sessions.Start(c.Request().Context(), c.Response(), c.Request(), body.UserKey, StartValues(c, values)); err != nil {
		return SessionStoreError(err)
	}
	return c.NoContent(http.StatusOK)
}

// DecodeJSON reads one JSON object into dst, answering 400 when it is not
// one: naming the field whose value has the wrong type, else the body.
func DecodeJSON(r io.Reader, dst any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(dst); err != nil {
		if tooLarge(err) {
			return err
		}
		return NewAPIError(http.StatusBadRequest, "The request body is not valid JSON for this operation.", decodeProblem(err))
	}
	if dec.More() {
		return NewAPIError(http.StatusBadRequest, "The request body must hold one JSON object.")
	}
	return nil
}

// SessionStoreError answers 503 for a store that is down (the session is
// kept: the client is not logged out by a transient failure).
func SessionStoreError(err error) error {
	if errors.Is(err, session.ErrUnavailable) {
		return NewAPIError(http.StatusServiceUnavailable, "Sessions are temporarily unavailable. Please try again shortly.")
	}
	return err
}

type sessionKey struct{}

// RequireSession lets a request through only with a valid session, which
// it puts in the request context.
func (s *Server) RequireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		sess, err := s.SessionFor(c) // organisation_scope.go: a session of another organisation is none
		MarkSessionLoaded(req.Context())
		switch {
		case errors.Is(err, session.ErrNotFound):
			return NewAPIError(http.StatusUnauthorized, "Sign in first: this request needs an authenticated session.")
		case err != nil:
			return SessionStoreError(err)
		case sess.UserKey == "":
			return NewAPIError(http.StatusUnauthorized, "This session is not signed in with a user key.")
		}
		c.SetRequest(req.WithContext(withSession(req.Context(), sess)))
		return next(c)
	}
}
