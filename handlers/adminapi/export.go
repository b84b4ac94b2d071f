package adminapi

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/privacy"
	"portal/engine/report"
	"portal/handlers/server"
)

// lazyHeader sets an export's headers and status on its first byte, so
// that a refusal before it (an unknown period) still goes through the one
// error handler.
type lazyHeader struct {
	c           echo.Context
	contentType string
	filename    string
	started     bool
	// before runs once before the first byte (the access log entry); an
	// error stops the export before anything is sent.
	before func() error
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		if l.before != nil {
			if err := l.before(); err != nil {
				return 0, err
			}
		}
		l.started = true
		h := l.c.Response().Header()
		h.Set(echo.HeaderContentType, l.contentType)
		h.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", l.filename))
		h.Set("Cache-Control", "no-store")
		l.c.Response().WriteHeader(http.StatusOK)
	}
	return l.c.Response().Write(p)
}

// exportPeriod answers GET /api/admin/periods/:id/export/:kind[?format=json]:
// the period's registrations (one row per membership) or payments (one
// per attempt) as CSV, or JSON with format=json, streamed from the
// database (engine.ExportPeriod; columns in engine.ExportColumns).
func (s *Server) exportPeriod(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	kind := report.ExportKind(c.Param("kind"))
	orgID := keyOf(c).OrganisationID
	out := &lazyHeader{c: c, contentType: "text/csv; charset=utf-8", filename: fmt.Sprintf("period-%d-%s.csv", id, kind)}
	out.before = func() error { // every member's data of the period: one access log entry
		return privacy.Of(s.engine).RecordAccess(c.Request().Context(), apiActor(c), privacy.BulkRead(orgID, fmt.Sprintf("periods/%d/export/%s", id, kind), c.QueryString()))
	}
	w := report.CSVExport(out)
	switch c.QueryParam("format") {
	case "", "csv":
	case "json":
		out.contentType, out.filename = echo.MIMEApplicationJSON, fmt.Sprintf("period-%d-%s.json", id, kind)
		w = report.JSONExport(out)
	default:
		return server.NewAPIError(http.StatusBadRequest, "The export format must be csv or json.", server.FieldErrorBody{Field: "format", Message: "csv or json"})
	}
	err = report.Of(s.engine).ExportPeriod(c.Request().Context(), orgID, id, kind, w)
	if err == nil {
		err = w.Close()
	}
	if err != nil && out.started {
		// Too late for an error body: the status went out. The export ends
		// short (a CSV without its last lines, JSON without its "]").
		s.LogFor(c).Error("export interrupted", "period", id, "kind", kind, "err", err)
		return nil
	}
	return err
}
