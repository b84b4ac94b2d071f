package handlers

import (
	"bytes"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/views"
)

// render buffers a component before writing it, so that a rendering error
// becomes a clean 500 instead of half a page. Pages carry personal data and
// are never cached.
func render(c echo.Context, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

var statusTitles = map[int]string{
	http.StatusBadRequest:          "The request was not valid",
	http.StatusUnauthorized:        "Please sign in",
	http.StatusForbidden:           "Access denied",
	http.StatusNotFound:            "Page not found",
	http.StatusConflict:            "This cannot be done now",
	http.StatusTooManyRequests:     "Too many attempts",
	http.StatusServiceUnavailable:  "Temporarily unavailable",
	http.StatusInternalServerError: "Something went wrong",
}

func (s *Server) renderErrorPage(c echo.Context, status int, message string) {
	title := statusTitles[status]
	if title == "" {
		title = http.StatusText(status)
	}
	if err := render(c, status, views.ErrorPage(views.ErrorModel{Chrome: s.chrome(title), Message: message})); err != nil {
		s.logFor(c).Error("render error page", "err", err)
	}
}
