package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/privacy"
	"portal/engine/staff"
	"portal/views"
	"portal/views/lang"
)

// Personal data (issue 30): the member's "Your data" page, its JSON
// download and the request form (this file's member routes), the staff
// page of a person's data with its erasure, the staff list of requests,
// and the admin API's export and erasure. Every view is the engine's one
// export (engine.PersonalData), read on the page as tables.

// Member routes of the "Your data" page.
const (
	memberDataPath        = "/membership/data"
	memberDataJSONPath    = "/membership/data.json"
	memberDataRequestPath = "/membership/data/request"
)

// Staff routes.
const (
	staffPersonsPath      = "/persons"
	staffDataRequestsPath = "/data-requests"
)

// mountPersonalData adds the member routes.
func (s *Server) mountPersonalData(e *echo.Echo) {
	e.GET(memberDataPath, s.memberDataPage)
	e.GET(memberDataJSONPath, s.memberDataDownload)
	e.POST(memberDataRequestPath, s.memberDataRequest)
}

// memberHousehold is the signed-in household of a member page and its
// organisation, or what to answer instead (browserSession).
func (s *Server) memberHousehold(c echo.Context) (orgID int64, userKey string, ok bool, err error) {
	sess, ok, err := s.browserSession(c)
	if !ok {
		return 0, "", false, err
	}
	t := organisationOfRequest(c)
	if t == nil {
		return 0, "", false, s.accessDenied(c, "session")
	}
	return t.ID, sess.UserKey, true, nil
}

// memberDataPage answers GET /membership/data: what the club holds about
// the signed-in household, in the member's language.
func (s *Server) memberDataPage(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	x, err := privacy.Of(s.engine).ExportHousehold(ctx, orgID, key)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return s.accessDenied(c, "session")
		}
		return err
	}
	t := views.PersonalDataTextIn(ctx)
	m := views.PersonalDataModel{Chrome: s.chrome(t.Title), T: t, Tables: dataTables(langOf(c), t, x),
		DownloadURL: organisationPath(c, memberDataJSONPath), RequestURL: organisationPath(c, memberDataRequestPath)}
	for _, p := range x.Persons {
		m.Persons = append(m.Persons, views.DataChoice{Value: strconv.FormatInt(p.ID, 10), Label: p.FirstName + " " + p.LastName})
	}
	status := http.StatusOK
	switch {
	case c.QueryParam("sent") == "1":
		m.Notice = t.RequestSent
	case c.QueryParam("error") == "request":
		m.Problem, status = t.RequestInvalid, http.StatusUnprocessableEntity
	}
	return render(c, status, views.PersonalData(m))
}

// memberDataDownload answers GET /membership/data.json: the household's
// export as a file.
func (s *Server) memberDataDownload(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	x, err := privacy.Of(s.engine).ExportHousehold(c.Request().Context(), orgID, key)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return s.accessDenied(c, "session")
		}
		return err
	}
	return exportDownload(c, x, "personal-data.json")
}

// exportDownload sends an export as a JSON attachment, never cached.
func exportDownload(c echo.Context, x *privacy.PersonalData, name string) error {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(b, '\n'))
}

// memberDataRequest answers POST /membership/data/request (kind, person,
// message): the request is stored and sent to the club, then 303 back
// to the page, which thanks the member or says what was wrong.
func (s *Server) memberDataRequest(c echo.Context) error {
	orgID, key, ok, err := s.memberHousehold(c)
	if !ok {
		return err
	}
	r := privacy.NewDataRequest{Kind: c.FormValue("kind"), Message: c.FormValue("message")}
	if p := c.FormValue("person"); p != "" {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return c.Redirect(http.StatusSeeOther, organisationPath(c, memberDataPath)+"?error=request#request")
		}
		r.PersonID = &id
	}
	if _, err := privacy.Of(s.engine).RequestDataChange(c.Request().Context(), orgID, key, r); err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeInvalid || code == engine.CodeNotFound {
			return c.Redirect(http.StatusSeeOther, organisationPath(c, memberDataPath)+"?error=request#request")
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, organisationPath(c, memberDataPath)+"?sent=1")
}

// dataTables writes an export as the tables of a page, in language l.
func dataTables(l lang.Language, t *views.PersonalDataTexts, x *privacy.PersonalData) []views.DataTable {
	when := func(at *time.Time) string {
		if at == nil {
			return ""
		}
		return l.Date(*at)
	}
	names := map[int64]string{}
	persons := views.DataTable{TestID: "persons", Heading: t.Persons, Columns: []string{t.Name, t.Born, t.Email, t.ExternalID, t.Created}}
	for _, p := range x.Persons {
		names[p.ID] = p.FirstName + " " + p.LastName
		born, _ := time.Parse(time.DateOnly, p.DateOfBirth)
		row := []string{names[p.ID], l.Date(born), p.Email, p.ExternalID, l.Date(p.CreatedAt)}
		if p.ErasedAt != nil {
			row[4] = t.Erased + " " + l.Date(*p.ErasedAt)
		}
		persons.Rows = append(persons.Rows, row)
	}
	who := func(id *int64) string {
		if id == nil {
			return t.Household
		}
		if n, ok := names[*id]; ok {
			return n
		}
		return strconv.FormatInt(*id, 10)
	}
	answers := views.DataTable{TestID: "answers", Heading: t.Answers, Columns: []string{t.Registration, t.Person, t.Question, t.Answer}}
	for _, r := range x.Registrations {
		for _, a := range r.Answers {
			v := a.Value
			if a.Label != "" {
				v = a.Label
			}
			answers.Rows = append(answers.Rows, []string{r.Period + " (" + l.Date(r.StartedAt) + ")", who(a.PersonID), a.Question, v})
		}
	}
	memberships := views.DataTable{TestID: "memberships", Heading: t.Memberships, Columns: []string{t.Person, t.Period, t.Type, t.Status, t.Activated}}
	for _, m := range x.Memberships {
		id := m.PersonID
		memberships.Rows = append(memberships.Rows, []string{who(&id), m.Period, m.Type, string(m.Status), when(m.ActivatedAt)})
	}
	orders := views.DataTable{TestID: "orders", Heading: t.Orders, Columns: []string{t.Order, t.Line, t.Amount, t.Status, t.Paid}}
	payments := views.DataTable{TestID: "payments", Heading: t.Payments, Columns: []string{t.Reference, t.Provider, t.Amount, t.Status, t.Created}}
	for _, o := range x.Orders {
		var lines []string
		for _, ln := range o.Lines {
			lines = append(lines, ln.Description+": "+l.Money(ln.AmountMinor, ln.Currency))
		}
		orders.Rows = append(orders.Rows, []string{o.PayReference, strings.Join(lines, "\n"), l.Money(o.TotalMinor, o.Currency), string(o.Status), when(o.PaidAt)})
		for _, p := range o.Payments {
			payments.Rows = append(payments.Rows, []string{p.Reference, p.Provider, l.Money(p.AmountMinor, p.Currency), string(p.Status), l.Date(p.CreatedAt)})
		}
	}
	credits := views.DataTable{TestID: "bank-credits", Heading: t.BankCredits, Columns: []string{t.Reference, t.Debtor, t.Account, t.Amount, t.Booked}}
	for _, b := range x.BankCredits {
		credits.Rows = append(credits.Rows, []string{b.PaymentReference, b.DebtorName, b.DebtorIBAN, l.Money(b.AmountMinor, b.Currency), when(b.BookedOn)})
	}
	messages := views.DataTable{TestID: "messages", Heading: t.Messages, Columns: []string{t.Kind, t.Recipient, t.Created, t.Sent}}
	for _, m := range x.Messages {
		messages.Rows = append(messages.Rows, []string{string(m.Kind), m.Recipient, l.Date(m.CreatedAt), when(m.SentAt)})
	}
	optOuts := views.DataTable{TestID: "opt-outs", Heading: t.OptOuts, Columns: []string{t.Address, t.Category, t.Since}}
	for _, o := range x.OptOuts {
		optOuts.Rows = append(optOuts.Rows, []string{o.Address, o.Category, l.Date(o.CreatedAt)})
	}
	invitations := views.DataTable{TestID: "invitations", Heading: t.Invitations, Columns: []string{t.Created, t.Expires, t.Opened, t.Revoked}}
	for _, i := range x.Invitations {
		invitations.Rows = append(invitations.Rows, []string{l.Date(i.CreatedAt), l.Date(i.ExpiresAt), when(i.OpenedAt), when(i.RevokedAt)})
	}
	sessions := views.DataTable{TestID: "sessions", Heading: t.Sessions, Columns: []string{t.Created, t.LastSeen, t.Expires}}
	for _, se := range x.Sessions {
		sessions.Rows = append(sessions.Rows, []string{l.Date(se.CreatedAt), l.Date(se.LastSeenAt), l.Date(se.ExpiresAt)})
	}
	requests := views.DataTable{TestID: "requests", Heading: t.Requests, Columns: []string{t.Created, t.Kind, t.Person, t.RequestText, t.Status}}
	for _, r := range x.Requests {
		requests.Rows = append(requests.Rows, []string{l.Date(r.CreatedAt), requestKind(t, r.Kind), who(r.PersonID), r.Message, requestStatus(t, r.Status)})
	}
	return []views.DataTable{persons, answers, memberships, orders, payments, credits, messages, optOuts, invitations, sessions, requests}
}

func requestKind(t *views.PersonalDataTexts, kind string) string {
	if kind == privacy.DataRequestErasure {
		return t.Erasure
	}
	return t.Correction
}

func requestStatus(t *views.PersonalDataTexts, status string) string {
	if status == privacy.DataRequestDone {
		return t.Done
	}
	return t.Open
}

// staffPersonURL is the staff page of a person's data.
func staffPersonURL(c echo.Context, id int64) string {
	return organisationPath(c, fmt.Sprintf("%s%s/%d", StaffPrefix, staffPersonsPath, id))
}

// staffPersonData answers GET /staff/persons/:id: the person's export read
// on the page, its download and, for administrators, the erasure.
func (s *Server) staffPersonData(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	ctx := c.Request().Context()
	x, err := privacy.Of(s.engine).ExportPerson(ctx, u.OrganisationID, id)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	if err := s.recordPersonAccess(ctx, u.actor(), u.OrganisationID, id, privacy.AccessPerson, x); err != nil { // staff_privacy.go
		return s.staffEngineError(c, err)
	}
	t := views.PersonalDataTextIn(ctx)
	m := views.StaffPersonDataModel{StaffChrome: s.staffChrome(c, t.StaffTitle), T: t, Tables: dataTables(langOf(c), t, x),
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
	return staffRender(c, http.StatusOK, views.StaffPersonData(m))
}

// staffPersonExport answers GET /staff/persons/:id/export.json.
func (s *Server) staffPersonExport(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	x, err := privacy.Of(s.engine).ExportPerson(c.Request().Context(), u.OrganisationID, id)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	if err := s.recordPersonAccess(c.Request().Context(), u.actor(), u.OrganisationID, id, privacy.AccessExport, x); err != nil {
		return s.staffEngineError(c, err)
	}
	return exportDownload(c, x, fmt.Sprintf("person-%d.json", id))
}

// staffErasePerson answers POST /staff/persons/:id/erase (force=1 to
// override an active membership or open payment), after a confirmation.
func (s *Server) staffErasePerson(c echo.Context) error {
	u := staffUserOf(c)
	t := views.PersonalDataTextIn(c.Request().Context())
	back, _ := pathID(c, "id")
	id, proceed, err := s.staffConfirmedID(c, t.ConfirmErase, t.ConfirmEraseDetail, staffPersonURL(c, back))
	if !proceed {
		return err
	}
	opt := privacy.ErasureOptions{Force: c.FormValue("force") == "1"}
	if _, err := privacy.Of(s.engine).ErasePerson(c.Request().Context(), u.actor(), u.OrganisationID, id, opt); err != nil {
		return s.staffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, staffPersonURL(c, id)+"?done=erased")
}

// staffDataRequests answers GET /staff/data-requests: members' requests,
// open ones first.
func (s *Server) staffDataRequests(c echo.Context) error {
	u := staffUserOf(c)
	ctx := c.Request().Context()
	list, err := privacy.Of(s.engine).DataRequests(ctx, u.OrganisationID, "")
	if err != nil {
		return s.staffEngineError(c, err)
	}
	t := views.PersonalDataTextIn(ctx)
	m := views.StaffDataRequestsModel{StaffChrome: s.staffChrome(c, t.RequestsTitle), T: t}
	if c.QueryParam("done") == "request" {
		m.Flash = t.DoneRequest
	}
	for _, r := range list {
		row := views.StaffDataRequestRow{ID: strconv.FormatInt(r.ID, 10), Created: staffDateTime(c, r.CreatedAt), Household: r.UserKey,
			Kind: requestKind(t, r.Kind), Message: r.Message, Status: requestStatus(t, r.Status), Person: t.WholeHousehold, Note: r.Note}
		if r.PersonID != nil {
			row.Person, row.PersonURL = t.OpenPerson+" #"+strconv.FormatInt(*r.PersonID, 10), staffPersonURL(c, *r.PersonID)
		}
		if r.DoneAt != nil {
			row.Done = t.Done + " " + staffDateTime(c, *r.DoneAt) + " · " + r.DoneBy
		} else {
			row.DoneURL = organisationPath(c, fmt.Sprintf("%s%s/%d/done", StaffPrefix, staffDataRequestsPath, r.ID))
		}
		m.Rows = append(m.Rows, row)
	}
	return staffRender(c, http.StatusOK, views.StaffDataRequests(m))
}

// staffCompleteDataRequest answers POST /staff/data-requests/:id/done
// (note): the household is told by e-mail.
func (s *Server) staffCompleteDataRequest(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	if err := privacy.Of(s.engine).CompleteDataRequest(c.Request().Context(), u.actor(), u.OrganisationID, id, c.FormValue("note")); err != nil {
		return s.staffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, organisationPath(c, StaffPrefix+staffDataRequestsPath)+"?done=request")
}

// ErasureRequest is the body of POST /api/admin/persons/{id}/erase.
type ErasureRequest struct {
	// Force erases despite an active membership or an open payment.
	Force bool `json:"force"`
}

// exportPersonAPI answers GET /api/admin/persons/:id/export: the person's
// export (portal-personal-data/1).
func (s *Server) exportPersonAPI(c echo.Context) error {
	id, ok := pathID(c, "id")
	if !ok {
		return newAPIError(http.StatusNotFound, "person not found")
	}
	x, err := privacy.Of(s.engine).ExportPerson(c.Request().Context(), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	if err := s.recordPersonAccess(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, privacy.AccessExport, x); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, x)
}

// erasePersonAPI answers POST /api/admin/persons/:id/erase with an
// optional JSON body {"force": true}: the erasure's report, or 409 with
// the reason it was refused.
func (s *Server) erasePersonAPI(c echo.Context) error {
	id, ok := pathID(c, "id")
	if !ok {
		return newAPIError(http.StatusNotFound, "person not found")
	}
	var body ErasureRequest
	if c.Request().ContentLength != 0 {
		if mediaType(c.Request()) != echo.MIMEApplicationJSON {
			return newAPIError(http.StatusUnsupportedMediaType, "The request must have Content-Type application/json.")
		}
		if err := decodeJSON(c.Request().Body, &body); err != nil {
			return err
		}
	}
	rep, err := privacy.Of(s.engine).ErasePerson(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id, privacy.ErasureOptions{Force: body.Force})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
