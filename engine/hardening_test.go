package engine_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/registration"
)

// freeTextPhone drops the demo phone question's format pattern, so that it
// takes any text: the answers that reach the database are then exactly what
// the member typed (a patterned or option question refuses odd text anyway).
func freeTextPhone(t testing.TB, db *bun.DB) {
	t.Helper()
	if _, err := db.NewUpdate().Model((*engine.ProcessStep)(nil)).Set("format_pattern = NULL").
		Where("name = ?", "emergency_phone").Exec(t.Context()); err != nil {
		t.Fatalf("drop pattern: %v", err)
	}
}

// Control characters other than tab, CR and LF are refused as a per-person
// validation error before anything is stored: PostgreSQL cannot store NUL
// in text, and no member means to type the others.
func TestAnswersRefuseControlCharacters(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		freeTextPhone(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		cases := []struct{ name, answer string }{
			{"nul", "06123\x0045678"},
			{"escape", "0612345678\x1b[2J"},
			{"c1 control", "0612\u0085345678"},
			{"invalid utf-8", "0612\xff345678"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := registration.Of(f.svc).Next(f.ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.pid, Step: 1,
					People: []registration.PersonInput{{ID: alex, Answer: str("0612345678")}, {ID: robin, Answer: str(tc.answer)}}})
				e := wantCode(t, err, engine.CodeValidation)
				if len(e.People) != 1 || e.People[0].PersonID != robin || e.Step != 1 || e.ProcessID != r.pid {
					t.Fatalf("error %+v, want one failure for person %d at step 1", e, robin)
				}
				n, err := db.NewSelect().Model((*engine.ProcessData)(nil)).
					Where("instance_id = ? AND data_key = ?", r.id, engine.DataAnswer).Count(f.ctx)
				if err != nil || n != 0 {
					t.Fatalf("%d answers stored (%v), want none", n, err)
				}
			})
		}
		t.Run("tab, CR and LF pass", func(t *testing.T) {
			form, err := registration.Of(f.svc).Next(f.ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.pid, Step: 1,
				People: []registration.PersonInput{{ID: alex, Answer: str("06\t12")}, {ID: robin, Answer: str("line one\r\nline two")}}})
			if err != nil || form.Step != 2 {
				t.Fatalf("next: %v", err)
			}
		})
	})
}

// otherOrganisation adds a second organisation with an open period (10) and
// a closed one (11) that no demo user key has persons in.
func otherOrganisation(t testing.TB, db *bun.DB) {
	t.Helper()
	now := clock.Now().UTC()
	rows := []any{
		&engine.Organisation{ID: 2, Name: "Hillside Hockey Club"},
		&engine.MembershipPeriod{ID: 10, OrganisationID: 2, Name: "Hillside Open Season", StartDate: now.AddDate(0, -1, 0),
			EndDate: now.AddDate(0, 6, 0), Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"},
		&engine.MembershipPeriod{ID: 11, OrganisationID: 2, Name: "Hillside Closed Season", StartDate: now.AddDate(-1, -1, 0),
			EndDate: now.AddDate(0, -1, 0), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"},
		&engine.Person{ID: 50, OrganisationID: 2, FirstName: "Kim", LastName: "Hill", DateOfBirth: now.AddDate(-30, 0, 0)},
		&engine.UserPerson{UserKey: "hillside", PersonID: 50, OrganisationID: 2},
	}
	for _, row := range rows {
		if _, err := db.NewInsert().Model(row).Exec(t.Context()); err != nil {
			t.Fatalf("insert %T: %v", row, err)
		}
	}
}

// A period the user key has no persons in answers exactly as a period that
// does not exist: its name, and whether it is open, stay with its organisation.
func TestPeriodsOfOtherOrganisationsDoNotLeak(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		otherOrganisation(t, db)
		_, _, missing := registration.Of(f.svc).LoadMembershipForm(f.ctx, engine.DemoUserKey, 99, nil)
		want := wantCode(t, missing, engine.CodeNotFound)
		hidden := []struct {
			name   string
			period int64
			org    *int64
		}{
			{"other organisation, open", 10, nil},
			{"other organisation, closed", 11, nil},
			{"other organisation, open, with its organisation id", 10, ptr64(2)},
			{"other organisation, closed, with its organisation id", 11, ptr64(2)},
		}
		for _, tc := range hidden {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := registration.Of(f.svc).LoadMembershipForm(f.ctx, engine.DemoUserKey, tc.period, tc.org)
				if e := wantCode(t, err, engine.CodeNotFound); e.Message != want.Message {
					t.Fatalf("message %q, want the unknown period's %q", e.Message, want.Message)
				}
				err = registration.Of(f.svc).CheckRegistrationAccess(f.ctx, engine.DemoUserKey, tc.period)
				if e := wantCode(t, err, engine.CodeNotFound); e.Message != want.Message || strings.Contains(e.Message, "Hillside") {
					t.Fatalf("access message %q, want %q", e.Message, want.Message)
				}
			})
		}
		t.Run("own organisation, closed", func(t *testing.T) {
			err := registration.Of(f.svc).CheckRegistrationAccess(f.ctx, engine.DemoUserKey, 2)
			if e := wantCode(t, err, engine.CodeConflict); !strings.Contains(e.Message, "closed") {
				t.Fatalf("message %q", e.Message)
			}
		})
		t.Run("the other organisation's own member still gets in", func(t *testing.T) {
			if err := registration.Of(f.svc).CheckRegistrationAccess(f.ctx, "hillside", 10); err != nil {
				t.Fatalf("access: %v", err)
			}
			wantCode(t, registration.Of(f.svc).CheckRegistrationAccess(f.ctx, "hillside", 11), engine.CodeConflict)
		})
	})
}

func ptr64(v int64) *int64 { return &v }

// A person unlinked from the user key after selection is not committed: the
// commit re-checks every link and names the person; nothing is written.
func TestCommitRechecksPersonLinks(t *testing.T) {
	for _, path := range []string{"last answer", "confirm after review"} {
		t.Run(path, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := newFixture(t, db)
				r := f.start(engine.DemoUserKey, alex, robin)
				r.advanceTo(demoSteps)
				if _, err := db.NewDelete().Model((*engine.UserPerson)(nil)).
					Where("user_key = ? AND person_id = ?", engine.DemoUserKey, robin).Exec(f.ctx); err != nil {
					t.Fatal(err)
				}
				last := registration.NextInput{ProcessID: r.pid, Step: demoSteps, People: demoAnswers(demoSteps, r.persons)}
				var err error
				if path == "last answer" {
					_, err = registration.Of(f.svc).Next(f.ctx, engine.DemoUserKey, last)
				} else {
					last.HoldCommit = true
					if _, err := registration.Of(f.svc).Next(f.ctx, engine.DemoUserKey, last); err != nil {
						t.Fatalf("hold: %v", err)
					}
					rv, rerr := registration.Of(f.svc).Review(f.ctx, engine.DemoUserKey, r.pid)
					if rerr != nil {
						t.Fatalf("review: %v", rerr)
					}
					_, err = registration.Of(f.svc).Confirm(f.ctx, engine.DemoUserKey, r.pid, rv.Version, "")
				}
				e := wantCode(t, err, engine.CodeValidation)
				if len(e.People) != 1 || e.People[0].PersonID != robin || !strings.Contains(e.People[0].Message, "Robin Morgan") {
					t.Fatalf("error %+v, want one failure naming Robin Morgan", e)
				}
				if ms := f.memberships(r.id); len(ms) != 0 {
					t.Fatalf("%d memberships written", len(ms))
				}
				if n, err := db.NewSelect().Model((*engine.Order)(nil)).Where("process_instance_id = ?", r.id).Count(f.ctx); err != nil || n != 0 {
					t.Fatalf("%d orders written (%v)", n, err)
				}
				if inst := f.instance(r.id); inst.Status == engine.StateDone {
					t.Fatalf("instance committed")
				}
			})
		})
	}
}
