package handlers

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/relay/hashlink"
	"portal/views"
)

// staffImportPath takes a person import: POST /staff/invitations/import.
const staffImportPath = "/invitations/import"

// staffPersonsPageSize is how many persons the invitations page lists.
const staffPersonsPageSize = 100

// staffInvitationsPage answers GET /staff/invitations?from=N: the person
// import and the organisation's persons with their user keys.
func (s *Server) staffInvitationsPage(c echo.Context) error {
	return s.renderStaffInvitations(c, http.StatusOK, "")
}

func (s *Server) renderStaffInvitations(c echo.Context, status int, uploadError string) error {
	u := staffUserOf(c)
	from, _ := strconv.Atoi(c.QueryParam("from"))
	from = max(from, 0)
	persons, more, err := s.engine.PersonsPage(c.Request().Context(), u.OrganisationID, from, staffPersonsPageSize)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	m := views.StaffInvitationsModel{StaffChrome: s.staffChrome(c, staffOpsTextIn(c).InvitationsTitle),
		ImportURL: tenantPath(c, StaffPrefix+staffImportPath), Error: uploadError}
	for _, p := range persons {
		row := views.StaffDirectoryRow{Name: p.Person.FirstName + " " + p.Person.LastName, Born: p.Person.DateOfBirth.Format(time.DateOnly),
			Email: p.Person.Email, UserKeys: strings.Join(p.UserKeys, ", ")}
		if p.Person.ExternalID != nil {
			row.ExternalID = *p.Person.ExternalID
		}
		m.Persons = append(m.Persons, row)
	}
	if more {
		m.MoreURL = tenantPath(c, StaffPrefix+"/invitations?from="+strconv.Itoa(from+staffPersonsPageSize))
	}
	return staffRender(c, status, views.StaffInvitationsPage(m))
}

// staffImportPersons answers POST /staff/invitations/import. A chosen CSV
// file is imported in a transaction rolled back, and its changes shown
// with a form that posts the same file back with apply=1, which imports
// it (audited). The import is an upsert: applying twice changes nothing
// more. Rows in error are listed, and nothing is applied until they are
// corrected.
func (s *Server) staffImportPersons(c echo.Context) error {
	u := staffUserOf(c)
	data, fromCopy, err := staffUpload(c, "csv")
	switch {
	case errors.Is(err, errUploadTooLarge):
		return s.renderStaffInvitations(c, http.StatusRequestEntityTooLarge, staffOpsTextIn(c).ImportTooLarge)
	case errors.Is(err, errUploadMissing):
		return s.renderStaffInvitations(c, http.StatusUnprocessableEntity, staffOpsTextIn(c).ImportMissing)
	case err != nil:
		return err
	}
	rows, err := engine.ParsePersonCSV(bytes.NewReader(data))
	if err != nil {
		if e, ok := engine.AsError(err); ok {
			return s.renderStaffInvitations(c, http.StatusUnprocessableEntity, e.Message)
		}
		return err
	}
	if len(rows) == 0 {
		return s.renderStaffInvitations(c, http.StatusUnprocessableEntity, staffOpsTextIn(c).ImportEmpty)
	}
	apply := fromCopy && c.FormValue("apply") == "1"
	actor := u.actor()
	rep, err := s.engine.StaffImportPersons(c.Request().Context(), u.OrganisationID, rows, hashlink.ValidUserKey,
		engine.PersonImportOptions{DryRun: !apply, Actor: &actor})
	status := http.StatusOK
	if err != nil {
		if e, ok := engine.AsError(err); !ok || e.Code != engine.CodeValidation || rep == nil {
			return s.staffEngineError(c, err)
		}
		status = http.StatusUnprocessableEntity // rows in error, listed below
	}
	title := staffOpsTextIn(c).ImportPreviewTitle
	if apply {
		title = staffOpsTextIn(c).ImportDoneTitle
	}
	m := views.StaffImportModel{StaffChrome: s.staffChrome(c, title), Preview: !apply, Created: rep.Created, Updated: rep.Updated,
		Unchanged: rep.Unchanged, Errors: rep.Errors, ApplyURL: tenantPath(c, StaffPrefix+staffImportPath),
		BackURL: tenantPath(c, StaffPrefix+"/invitations")}
	if !apply && rep.Errors == 0 {
		m.File = staffUploadCopy(data)
	}
	outcomes := map[engine.RowOutcome]string{engine.RowCreated: staffOpsTextIn(c).ImportCreated, engine.RowUpdated: staffOpsTextIn(c).ImportUpdated,
		engine.RowUnchanged: staffOpsTextIn(c).ImportUnchanged, engine.RowError: staffOpsTextIn(c).ImportErrors}
	for _, r := range rep.Rows {
		if r.Outcome == engine.RowUnchanged {
			continue // the changes are what a preview is for
		}
		row := views.StaffImportRow{Line: strconv.Itoa(r.Line), ExternalID: r.ExternalID, Outcome: outcomes[r.Outcome]}
		for _, f := range r.Errors {
			row.Problems += f.Field + ": " + f.Message + ". "
		}
		row.Problems = strings.TrimSpace(row.Problems)
		m.Rows = append(m.Rows, row)
	}
	return staffRender(c, status, views.StaffImportPage(m))
}
