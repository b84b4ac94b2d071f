package handlers

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPIDocument is the OpenAPI 3 description of the JSON API.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// openAPI answers GET /api/openapi.json. It is public so that client
// generators can fetch it without a session.
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPIDocument)
}
