package server

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPIDocument is the OpenAPI 3 description of the JSON API.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// headerForwardedPrefix is the path prefix a proxy serves the portal under.
const headerForwardedPrefix = "X-Forwarded-Prefix"

// OpenAPI answers GET /api/openapi.json. It is public so that client
// generators can fetch it without a session. Behind a trusted proxy that
// sets X-Forwarded-Prefix the servers entry carries the prefix, so that a
// client generated from it calls the portal through the proxy.
func (s *Server) OpenAPI(c echo.Context) error {
	c.Response().Header().Add(echo.HeaderVary, headerForwardedPrefix)
	doc := OpenAPIDocument
	if prefix := c.Request().Header.Get(headerForwardedPrefix); prefix != "" && s.Proxies.Trusts(c.Request()) {
		prefixed, err := WithServerPrefix(doc, prefix)
		if err != nil {
			s.LogFor(c).Warn("ignored X-Forwarded-Prefix from a trusted proxy", "prefix", prefix, "err", err)
		} else {
			doc = prefixed
		}
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc)
}
