package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"portal/relay/session"
)

func withSession(ctx context.Context, s *session.Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionOf returns the session requireSession put in the context. Routes
// without that middleware must not call it; an empty session makes every
// user-key check fail rather than panic.
func SessionOf(c echo.Context) *session.Session {
	if s, ok := c.Request().Context().Value(sessionKey{}).(*session.Session); ok {
		return s
	}
	return &session.Session{}
}
