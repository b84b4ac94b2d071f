package members

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/privacy"
	"portal/handlers/server"
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

// MountPersonalData adds the member routes.
func (s *Server) MountPersonalData(e *echo.Echo) {
	e.GET(memberDataPath, s.memberDataPage)
	e.GET(memberDataJSONPath, s.memberDataDownload)
	e.POST(memberDataRequestPath, s.memberDataRequest)
}

// memberHousehold is the signed-in household of a member page and its
// organisation, or what to answer instead (browserSession).
func (s *Server) memberHousehold(c echo.Context) (orgID int64, userKey string, ok bool, err error) {
	sess, ok, err := s.BrowserSession(c)
	if !ok {
		return 0, "", false, err
	}
	t := server.OrganisationOfRequest(c)
	if t == nil {
		return 0, "", false, s.AccessDenied(c, "session")
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
			return s.AccessDenied(c, "session")
		}
		return err
	}
	t := views.PersonalDataTextIn(ctx)
	m := views.PersonalDataModel{Chrome: s.Chrome(t.Title), T: t, Tables: DataTables(server.LangOf(c), t, x),
		DownloadURL: server.OrganisationPath(c, memberDataJSONPath), RequestURL: server.OrganisationPath(c, memberDataRequestPath)}
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
	return server.Render(c, status, views.PersonalData(m))
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
			return s.AccessDenied(c, "session")
		}
		return err
	}
	return ExportDownload(c, x, "personal-data.json")
}

// ExportDownload sends an export as a JSON attachment, never cached.
func ExportDownload(c echo.Context, x *privacy.PersonalData, name string) error {
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
			return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?error=request#request")
		}
		r.PersonID = &id
	}
	if _, err := privacy.Of(s.engine).RequestDataChange(c.Request().Context(), orgID, key, r); err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeInvalid || code == engine.CodeNotFound {
			return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?error=request#request")
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, memberDataPath)+"?sent=1")
}

// DataTables writes an export as the tables of a page, in language l.
func DataTables(l lang.Language, t *views.PersonalDataTexts, x *privacy.PersonalData) []views.DataTable {
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
		requests.Rows = append(requests.Rows, []string{l.Date(r.CreatedAt), RequestKind(t, r.Kind), who(r.PersonID), r.Message, RequestStatus(t, r.Status)})
	}
	return []views.DataTable{persons, answers, memberships, orders, payments, credits, messages, optOuts, invitations, sessions, requests}
}

func RequestKind(t *views.PersonalDataTexts, kind string) string {
	if kind == privacy.DataRequestErasure {
		return t.Erasure
	}
	return t.Correction
}

func RequestStatus(t *views.PersonalDataTexts, status string) string {
	if status == privacy.DataRequestDone {
		return t.Done
	}
	return t.Open
}
