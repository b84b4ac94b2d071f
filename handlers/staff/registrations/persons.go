package registrations

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/privacy"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views"
	"portal/views/staffview"
)

// The staff pages of personal data (issue 30): a person's data with its
// erasure, and the list of members' requests.

// staffPersonURL is the staff page of a person's data.
func staffPersonURL(c echo.Context, id int64) string {
	return staffpage.RequestOf(c).Path(fmt.Sprintf("%s%s/%d", server.StaffPrefix, server.StaffPersonsPath, id))
}

// StaffPersonData answers GET /staff/persons/:id: the person's export read
// on the page, its download and, for administrators, the erasure.
func (s *Server) StaffPersonData(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	ctx := c.Request().Context()
	x, err := privacy.Of(s.engine).ExportPerson(ctx, u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	if err := s.RecordPersonAccess(ctx, u.Actor(), u.OrganisationID, id, privacy.AccessPerson, x); err != nil { // persons.go
		return s.StaffEngineError(c, err)
	}
	t := views.PersonalDataTextIn(ctx)
	m := staffview.PersonDataModel{Chrome: s.StaffChrome(c, t.StaffTitle), T: t, Tables: server.PersonalDataTables(server.LangOf(c), t, x),
		DownloadURL: staffPersonURL(c, id) + "/export.json"}
	if len(x.Persons) == 1 {
		m.Name = x.Persons[0].FirstName + " " + x.Persons[0].LastName
		if x.Persons[0].ErasedAt == nil && u.Role.AtLeast(staff.RoleAdmin) {
			m.EraseURL = staffPersonURL(c, id) + "/erase"
		}
	}
	if c.QueryParam("done") == "erased" {
		m.Flash = t.DoneErased
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.PersonData(m))
}

// StaffPersonExport answers GET /staff/persons/:id/export.json.
func (s *Server) StaffPersonExport(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	x, err := privacy.Of(s.engine).ExportPerson(c.Request().Context(), u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	if err := s.RecordPersonAccess(c.Request().Context(), u.Actor(), u.OrganisationID, id, privacy.AccessExport, x); err != nil {
		return s.StaffEngineError(c, err)
	}
	return server.PersonalDataDownload(c, x, fmt.Sprintf("person-%d.json", id))
}

// StaffErasePerson answers POST /staff/persons/:id/erase (force=1 to
// override an active membership or open payment), after a confirmation.
func (s *Server) StaffErasePerson(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	t := views.PersonalDataTextIn(c.Request().Context())
	back, _ := server.PathID(c, "id")
	id, proceed, err := s.StaffConfirmedID(c, t.ConfirmErase, t.ConfirmEraseDetail, staffPersonURL(c, back))
	if !proceed {
		return err
	}
	opt := privacy.ErasureOptions{Force: c.FormValue("force") == "1"}
	if _, err := privacy.Of(s.engine).ErasePerson(c.Request().Context(), u.Actor(), u.OrganisationID, id, opt); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffPersonURL(c, id)+"?done=erased")
}

// StaffDataRequests answers GET /staff/data-requests: members' requests,
// open ones first.
func (s *Server) StaffDataRequests(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	ctx := c.Request().Context()
	list, err := privacy.Of(s.engine).DataRequests(ctx, u.OrganisationID, "")
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	t := views.PersonalDataTextIn(ctx)
	m := staffview.DataRequestsModel{Chrome: s.StaffChrome(c, t.RequestsTitle), T: t}
	if c.QueryParam("done") == "request" {
		m.Flash = t.DoneRequest
	}
	for _, r := range list {
		row := staffview.DataRequestRow{ID: strconv.FormatInt(r.ID, 10), Created: staffpage.StaffDateTime(c, r.CreatedAt), Household: r.UserKey,
			Kind: server.DataRequestKind(t, r.Kind), Message: r.Message, Status: server.DataRequestStatus(t, r.Status), Person: t.WholeHousehold, Note: r.Note}
		if r.PersonID != nil {
			row.Person, row.PersonURL = t.OpenPerson+" #"+strconv.FormatInt(*r.PersonID, 10), staffPersonURL(c, *r.PersonID)
		}
		if r.DoneAt != nil {
			row.Done = t.Done + " " + staffpage.StaffDateTime(c, *r.DoneAt) + " · " + r.DoneBy
		} else {
			row.DoneURL = staffpage.RequestOf(c).Path(fmt.Sprintf("%s%s/%d/done", server.StaffPrefix, server.StaffDataRequestsPath, r.ID))
		}
		m.Rows = append(m.Rows, row)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.DataRequests(m))
}

// StaffCompleteDataRequest answers POST /staff/data-requests/:id/done
// (note): the household is told by e-mail.
func (s *Server) StaffCompleteDataRequest(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if err := privacy.Of(s.engine).CompleteDataRequest(c.Request().Context(), u.Actor(), u.OrganisationID, id, c.FormValue("note")); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffDataRequestsPath)+"?done=request")
}

// registrationPrivacy records that the staff member opened registration
// d and puts its consents on the page's model.
func (s *Server) registrationPrivacy(c echo.Context, d *staff.RegistrationDetail, m *staffview.DetailModel) error {
	ctx := c.Request().Context()
	u := staffpage.StaffUserOf(c)
	if err := privacy.Of(s.engine).RecordAccess(ctx, u.Actor(), privacy.Access{OrganisationID: u.OrganisationID, Kind: privacy.AccessRegistration,
		RecordID: strconv.FormatInt(d.Instance.ID, 10), UserKey: d.Instance.UserKey}); err != nil {
		return err
	}
	consents, err := s.engine.RegistrationConsents(ctx, u.OrganisationID, d.Instance.ID)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, p := range d.Household {
		names[p.ID] = strings.TrimSpace(p.FirstName + " " + p.LastName)
	}
	for _, cv := range consents {
		name, ok := names[cv.PersonID]
		if !ok {
			name = "#" + strconv.FormatInt(cv.PersonID, 10)
		}
		m.Consents = append(m.Consents, staffview.ConsentRow{Person: name, Kind: consentKindLabel(c, cv.Kind), Text: cv.Text,
			Language: cv.Language, Given: staffpage.StaffDateTime(c, cv.GivenAt), Version: cv.TextVersion[:min(12, len(cv.TextVersion))]})
	}
	return nil
}

// RecordPersonAccess records that actor opened person personID's data
// (kind person: the staff page) or took its export (kind export), as x.
func (s *Server) RecordPersonAccess(ctx context.Context, actor engine.Actor, orgID, personID int64, kind privacy.AccessKind, x *privacy.PersonalData) error {
	key := ""
	if len(x.Subject.UserKeys) > 0 {
		key = x.Subject.UserKeys[0]
	}
	return privacy.Of(s.engine).RecordAccess(ctx, actor, privacy.Access{OrganisationID: orgID, Kind: kind, RecordID: strconv.FormatInt(personID, 10),
		UserKey: key, PersonID: personID})
}

// recordListExport records that the staff member took an export of many
// households (the registrations CSV) as the access log's kind export,
// its record the export's name and query: it names no one household, so
// it shows on the access log page but in no member's export.
func (s *Server) recordListExport(c echo.Context, name string) error {
	u := staffpage.StaffUserOf(c)
	return privacy.Of(s.engine).RecordAccess(c.Request().Context(), u.Actor(), privacy.BulkRead(u.OrganisationID, name, c.QueryString()))
}

// consentKindLabel names a consent kind in the page's language.
func consentKindLabel(c echo.Context, k engine.ConsentKind) string {
	t := staffview.PrivacyTextIn(c.Request().Context())
	switch k {
	case engine.ConsentClubRules:
		return t.KindClubRules
	case engine.ConsentPrivacy:
		return t.KindPrivacy
	case engine.ConsentGuardian:
		return t.KindGuardian
	case engine.ConsentMandate:
		return t.KindMandate
	}
	return t.KindOther
}
