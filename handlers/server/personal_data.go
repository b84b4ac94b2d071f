package server

// A person's data as every audience shows it: the member's "Your data"
// page (handlers/members), the staff person page and request list
// (handlers/staff/registrations) read the engine's one export
// (privacy.PersonalData) as the same tables and download it the same way.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine/privacy"
	"portal/views"
	"portal/views/lang"
)

// PersonalDataDownload sends an export as a JSON attachment, never cached.
func PersonalDataDownload(c echo.Context, x *privacy.PersonalData, name string) error {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(b, '\n'))
}

// PersonalDataTables writes an export as the tables of a page, in language l.
func PersonalDataTables(l lang.Language, t *views.PersonalDataTexts, x *privacy.PersonalData) []views.DataTable {
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
		requests.Rows = append(requests.Rows, []string{l.Date(r.CreatedAt), DataRequestKind(t, r.Kind), who(r.PersonID), r.Message, DataRequestStatus(t, r.Status)})
	}
	return []views.DataTable{persons, answers, memberships, orders, payments, credits, messages, optOuts, invitations, sessions, requests}
}

// DataRequestKind names a data request's kind in the texts t.
func DataRequestKind(t *views.PersonalDataTexts, kind string) string {
	if kind == privacy.DataRequestErasure {
		return t.Erasure
	}
	return t.Correction
}

// DataRequestStatus names a data request's state in the texts t.
func DataRequestStatus(t *views.PersonalDataTexts, status string) string {
	if status == privacy.DataRequestDone {
		return t.Done
	}
	return t.Open
}
