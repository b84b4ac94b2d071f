package registration_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/demodata"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestNextSeasonStartsFromLastSeasonsAnswers: registering the same
// persons for the next season fills in last season's answers where the
// question is the same and the answer passes the new rules: a changed
// phone format and a dropped shirt size are asked afresh, consents are
// never carried, the main contact is.
func TestNextSeasonStartsFromLastSeasonsAnswers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		d.Pay(d.Commit(enginetest.Alex, enginetest.Robin))
		next := d.OpenNextPeriod()
		// The next season's form: international phone numbers, no size M.
		spec, err := definition.ParseDefinition([]byte(strings.NewReplacer(
			`pattern: "^[0-9]{10}$"`, `pattern: "^\\+[0-9]{11}$"`,
			"      - {value: M, label: {en: Medium, de: Mittel, fr: Moyenne}}\n", "").Replace(string(demodata.DemoDefinitionYAML()))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := definition.ImportDefinition(ctx, db, spec); err != nil {
			t.Fatal(err)
		}
		form, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, next.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		pid := form.ProcessIDString()
		form, err = registration.Of(d.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: 0, People: []registration.PersonInput{{ID: enginetest.Alex}, {ID: enginetest.Robin}}})
		if err != nil {
			t.Fatal(err)
		}
		// What each step shows, by step name and person; then the answers
		// a member would give to move on.
		want := map[string]map[int64]string{
			"emergency_phone":  {},
			"shirt_size":       {},
			"insurance":        {enginetest.Alex: "1", enginetest.Robin: "0"},
			"transfer":         {enginetest.Alex: "0", enginetest.Robin: "0"},
			"guardian_consent": {},
			"main_contact":     {enginetest.Alex: "1", enginetest.Robin: "0"},
			"terms":            {},
		}
		give := map[string]string{"emergency_phone": "+31612345678", "shirt_size": "L", "guardian_consent": "1", "terms": "1"}
		seen := 0
		for form.State != engine.StateDone {
			q := form.Question
			expect, ok := want[q.Name]
			if !ok {
				t.Fatalf("unexpected step %s", q.Name)
			}
			seen++
			var in []registration.PersonInput
			for _, p := range form.People {
				got := ""
				if p.Answer != nil {
					got = *p.Answer
				}
				if !p.Hide && got != expect[p.ID] {
					t.Fatalf("step %s, person %d: pre-filled %q, want %q", q.Name, p.ID, got, expect[p.ID])
				}
				a := got
				if v, ok := give[q.Name]; ok {
					a = v
				}
				in = append(in, registration.PersonInput{ID: p.ID, Answer: &a})
			}
			if form, err = registration.Of(d.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: form.Step, People: in}); err != nil {
				t.Fatalf("step %s: %v", q.Name, err)
			}
		}
		if seen != 7 { // every step but transfer_club: nobody transfers
			t.Fatalf("walked %d steps", seen)
		}
	})
}
