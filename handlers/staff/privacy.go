package staff

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/privacy"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The data protection parts of the staff pages (issue 30): the access log
// page (admin), the retention settings on the setup page (admin); a
// registration's consents and the access log entry of opening it are in
// registrations/persons.go. docs/DATA-PROTECTION.md.

// flashRetention is the notice after the retention settings are saved.
const flashRetention = "retention-saved"

func init() {
	staffpage.StaffFlashes[flashRetention] = func(c echo.Context) string { return staffview.PrivacyTextIn(c.Request().Context()).RetentionSaved }
}

// accessKindLabel names an access kind in the page's language.
func accessKindLabel(c echo.Context, k privacy.AccessKind) string {
	t := staffview.PrivacyTextIn(c.Request().Context())
	switch k {
	case privacy.AccessRegistration:
		return t.AccessRegistration
	case privacy.AccessPerson:
		return t.AccessPerson
	}
	return t.AccessExport
}

// staffAccessLogPage answers GET /staff/access-log?actor=&kind=&record=&before=:
// the access log, newest first, for administrators.
func (s *Server) staffAccessLogPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := staffpage.StaffUserOf(c)
	t := staffview.PrivacyTextIn(ctx)
	q := privacy.AccessQuery{OrganisationID: u.OrganisationID, Actor: c.QueryParam("actor"), RecordID: strings.TrimSpace(c.QueryParam("record"))}
	for _, k := range privacy.AccessKinds {
		if string(k) == c.QueryParam("kind") {
			q.Kind = k
		}
	}
	before, _ := strconv.ParseInt(c.QueryParam("before"), 10, 64)
	q.BeforeID = max(before, 0)
	const pageSize = 50
	q.Limit = pageSize
	rows, err := privacy.Of(s.engine).AccessLog(ctx, q)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	actors, err := privacy.Of(s.engine).AccessActors(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	base := staffpage.RequestOf(c).StaffPath(server.StaffAccessLogPath)
	m := staffview.AccessLogModel{Chrome: s.StaffChrome(c, t.AccessTitle), Action: base, Record: q.RecordID,
		Actors: []staffview.Option{{Value: "", Label: t.AccessAll}}, Kinds: []staffview.Option{{Value: "", Label: t.AccessAll}}}
	for _, a := range actors {
		m.Actors = append(m.Actors, staffview.Option{Value: a, Label: a, Selected: a == q.Actor})
	}
	for _, k := range privacy.AccessKinds {
		m.Kinds = append(m.Kinds, staffview.Option{Value: string(k), Label: accessKindLabel(c, k), Selected: k == q.Kind})
	}
	for _, r := range rows {
		row := staffview.AccessRow{When: staffpage.StaffDateTime(c, r.CreatedAt), Who: r.Actor, Kind: accessKindLabel(c, r.Kind), Record: r.RecordID}
		if r.Kind == privacy.AccessRegistration {
			row.RecordURL = registrations.RegistrationURL(c, mustID(r.RecordID))
		}
		m.Rows = append(m.Rows, row)
	}
	if len(rows) == pageSize {
		v := url.Values{"before": {strconv.FormatInt(rows[len(rows)-1].ID, 10)}}
		for k, val := range map[string]string{"actor": q.Actor, "kind": string(q.Kind), "record": q.RecordID} {
			if val != "" {
				v.Set(k, val)
			}
		}
		m.OlderURL = base + "?" + v.Encode()
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.AccessLog(m))
}

// mustID reads a record id logged by the portal itself; 0 if it is none.
func mustID(s string) int64 {
	id, _ := strconv.ParseInt(s, 10, 64)
	return id
}

// loadSetupDataProtection fills the data protection section: the
// retention settings.
func (s *Server) loadSetupDataProtection(c echo.Context, m *staffview.SetupModel) (err error) {
	m.Retention, err = s.retentionForm(c, staffpage.RequestOf(c).StaffPath(server.StaffSetupPath), staffpage.StaffUserOf(c).OrganisationID)
	return err
}

// retentionForm is the retention settings form with the effective settings.
func (s *Server) retentionForm(c echo.Context, base string, orgID int64) (staffview.RetentionForm, error) {
	r, err := s.engine.RetentionSettings(c.Request().Context(), orgID)
	if err != nil {
		return staffview.RetentionForm{}, err
	}
	return staffview.RetentionForm{Action: base + "/retention", PersonSeasons: strconv.Itoa(r.PersonSeasons), AnswerMonths: strconv.Itoa(r.AnswerMonths),
		MessageDays: strconv.Itoa(r.MessageDays), Logs: strconv.Itoa(r.AccessLogDays)}, nil
}

// staffSaveRetention answers POST /staff/setup/retention: an empty field
// returns its setting to the default; the bounds are the engine's.
func (s *Server) staffSaveRetention(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	typed := staffview.RetentionForm{PersonSeasons: form.Get("personSeasons"), AnswerMonths: form.Get("answerMonths"),
		MessageDays: form.Get("messageDays"), Logs: form.Get("accessLogDays")}
	show := func(m *staffview.SetupModel, errs map[string]string) {
		typed.Action, typed.Errors = m.Retention.Action, errs
		m.Retention = typed
	}
	errs := map[string]string{}
	var change engine.RetentionSettingsChange
	formNumbers(form, map[string]**int{"personSeasons": &change.PersonSeasons, "answerMonths": &change.AnswerMonths,
		"messageDays": &change.MessageDays, "accessLogDays": &change.AccessLogDays}, errs, staffview.PrivacyTextIn(c.Request().Context()).NotANumber)
	if len(errs) > 0 {
		return s.renderSetup(c, setupDataProtection, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) { show(m, errs) })
	}
	if _, err := s.engine.StaffUpdateRetentionSettings(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, setupDataProtection, withoutFieldPrefix(err, "retention."), show)
	}
	return staffSetupDone(c, setupDataProtection, flashRetention)
}
