package adminapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/privacy"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
)

// ErasureRequest is the body of POST /api/admin/persons/{id}/erase.
type ErasureRequest struct {
	// Force erases despite an active membership or an open payment.
	Force bool `json:"force"`
}

// exportPersonAPI answers GET /api/admin/persons/:id/export: the person's
// export (portal-personal-data/1).
func (s *Server) exportPersonAPI(c echo.Context) error {
	id, ok := server.PathID(c, "id")
	if !ok {
		return server.NewAPIError(http.StatusNotFound, "person not found")
	}
	x, err := privacy.Of(s.engine).ExportPerson(c.Request().Context(), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	if err := registrations.Of(s.Server).RecordPersonAccess(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, privacy.AccessExport, x); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, x)
}

// erasePersonAPI answers POST /api/admin/persons/:id/erase with an
// optional JSON body {"force": true}: the erasure's report, or 409 with
// the reason it was refused.
func (s *Server) erasePersonAPI(c echo.Context) error {
	id, ok := server.PathID(c, "id")
	if !ok {
		return server.NewAPIError(http.StatusNotFound, "person not found")
	}
	var body ErasureRequest
	if c.Request().ContentLength != 0 {
		if server.MediaType(c.Request()) != echo.MIMEApplicationJSON {
			return server.NewAPIError(http.StatusUnsupportedMediaType, "The request must have Content-Type application/json.")
		}
		if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
			return err
		}
	}
	rep, err := privacy.Of(s.engine).ErasePerson(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, privacy.ErasureOptions{Force: body.Force})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
