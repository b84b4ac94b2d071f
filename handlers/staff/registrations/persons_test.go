package registrations_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestStaffInvitationsFindPerson: the invitations page finds persons by a
// part of their name (any case, beyond ASCII), their e-mail or external
// id, and says when none matches.
func TestStaffInvitationsFindPerson(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ext := "P-77"
		for _, p := range []engine.Person{
			{OrganisationID: 1, FirstName: "Jürgen", LastName: "Müller", Email: "jm@example.org", ExternalID: &ext},
			{OrganisationID: 1, FirstName: "Anna", LastName: "Bell", Email: "anna@example.org"},
		} {
			p.DateOfBirth, p.CreatedAt = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), clock.Now().UTC()
			if _, err := db.NewInsert().Model(&p).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		for q, want := range map[string]string{"MÜLLER": "Jürgen Müller", "p-77": "", "P-77": "Jürgen Müller", "ANNA@example.org": "Anna Bell", "n b": "", "nna b": "Anna Bell"} {
			p := env.Get(reg, "/staff/invitations?"+url.Values{"q": {q}}.Encode())
			rows := p.TestID("person-row")
			switch {
			case want == "" && (rows.Length() != 0 || p.TestID("persons-no-match").Length() != 1):
				t.Errorf("%q: %d persons, want none and the note", q, rows.Length())
			case want != "" && (rows.Length() != 1 || rows.Find(`[data-testid="person-name"]`).Text() != want):
				t.Errorf("%q: %d persons %q, want %s", q, rows.Length(), rows.Text(), want)
			}
			if got := p.Doc.Find(`#persons-q`).AttrOr("value", ""); got != q {
				t.Errorf("%q: the search field holds %q", q, got)
			}
		}
	})
}
