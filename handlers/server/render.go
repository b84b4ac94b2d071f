package server

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/views"
	"portal/views/lang"
)

// Render buffers a component before writing it, so that a rendering error
// becomes a clean 500 instead of half a page. Pages carry personal data and
// are never cached.
func Render(c echo.Context, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// RenderErrorPage shows an error page: the status's title in the
// request's language (error_title_<status>) and the message.
func (s *Server) RenderErrorPage(c echo.Context, status int, message string) {
	title := http.StatusText(status)
	if id := fmt.Sprintf("error_title_%d", status); lang.Has(id) {
		title = Tr(c, id)
	}
	if err := Render(c, status, views.ErrorPage(views.ErrorModel{Chrome: s.Chrome(title), Message: message})); err != nil {
		s.LogFor(c).Error("render error page", "err", err)
	}
}
