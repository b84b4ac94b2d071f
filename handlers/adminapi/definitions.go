package adminapi

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"

	"portal/engine/definition"
)

// The admin API's process definition versions: list, export (the import
// format), activate and deactivate. Importing is POST /api/admin/definitions
// (api_admin_setup.go).

// DefinitionVersionDTO is a stored definition version.
type DefinitionVersionDTO struct {
	ID            int64     `json:"id"`
	Key           string    `json:"key"`
	Name          string    `json:"name"`
	Category      string    `json:"category"`
	Version       int       `json:"version"`
	Active        bool      `json:"active"`
	CreatedAt     time.Time `json:"createdAt"`
	Registrations int       `json:"registrations"`
}

func definitionVersionDTO(v definition.Version) DefinitionVersionDTO {
	return DefinitionVersionDTO{ID: v.ID, Key: v.Key, Name: v.Name, Category: v.Category, Version: v.Version, Active: v.Active,
		CreatedAt: v.CreatedAt, Registrations: v.Registrations}
}

// listDefinitions answers GET /api/admin/definitions[?key=K].
func (s *Server) listDefinitions(c echo.Context) error {
	list, err := definition.Of(s.engine).Versions(c.Request().Context(), keyOf(c).OrganisationID, c.QueryParam("key"))
	if err != nil {
		return err
	}
	out := make([]DefinitionVersionDTO, 0, len(list))
	for _, v := range list {
		out = append(out, definitionVersionDTO(v))
	}
	return c.JSON(http.StatusOK, out)
}

func definitionVersionParam(c echo.Context) (int, error) {
	v, err := idParam(c, "version", "definition version")
	return int(v), err
}

// exportDefinitionVersion answers GET /api/admin/definitions/:key/versions/:version:
// the version in the import format, JSON, or YAML when the client accepts
// application/yaml; importing it again changes nothing.
func (s *Server) exportDefinitionVersion(c echo.Context) error {
	version, err := definitionVersionParam(c)
	if err != nil {
		return err
	}
	spec, err := definition.ExportDefinition(c.Request().Context(), s.engine.DB(), keyOf(c).OrganisationID, c.Param("key"), version)
	if err != nil {
		return err
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "yaml") {
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(spec); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/yaml", b.Bytes())
	}
	return c.JSON(http.StatusOK, spec)
}

// setDefinitionActive answers POST /api/admin/definitions/:key/versions/:version/activate
// and .../deactivate.
func (s *Server) setDefinitionActive(change definition.Activation) echo.HandlerFunc {
	return func(c echo.Context) error {
		version, err := definitionVersionParam(c)
		if err != nil {
			return err
		}
		ref := definition.Ref{Key: c.Param("key"), Version: version}
		v, err := definition.Of(s.engine).SetDefinitionActive(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, ref, change)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, definitionVersionDTO(*v))
	}
}
