package registration_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
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
		f := enginetest.NewFixture(t, db)
		freeTextPhone(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		cases := []struct{ name, answer string }{
			{"nul", "06123\x0045678"},
			{"escape", "0612345678\x1b[2J"},
			{"c1 control", "0612\u0085345678"},
			{"invalid utf-8", "0612\xff345678"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 1,
					People: []registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("0612345678")}, {ID: enginetest.Robin, Answer: enginetest.Str(tc.answer)}}})
				e := enginetest.WantCode(t, err, engine.CodeValidation)
				if len(e.People) != 1 || e.People[0].PersonID != enginetest.Robin || e.Step != 1 || e.ProcessID != r.PID {
					t.Fatalf("error %+v, want one failure for person %d at step 1", e, enginetest.Robin)
				}
				n, err := db.NewSelect().Model((*engine.ProcessData)(nil)).
					Where("instance_id = ? AND data_key = ?", r.ID, engine.DataAnswer).Count(f.Ctx)
				if err != nil || n != 0 {
					t.Fatalf("%d answers stored (%v), want none", n, err)
				}
			})
		}
		t.Run("tab, CR and LF pass", func(t *testing.T) {
			form, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 1,
				People: []registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("06\t12")}, {ID: enginetest.Robin, Answer: enginetest.Str("line one\r\nline two")}}})
			if err != nil || form.Step != 2 {
				t.Fatalf("next: %v", err)
			}
		})
	})
}

// A period the user key has no persons in answers exactly as a period that
// does not exist: its name, and whether it is open, stay with its organisation.
func TestPeriodsOfOtherOrganisationsDoNotLeak(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		enginetest.OtherOrganisation(t, db)
		_, _, missing := registration.Of(f.Svc).LoadMembershipForm(f.Ctx, engine.DemoUserKey, 99, nil)
		want := enginetest.WantCode(t, missing, engine.CodeNotFound)
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
				_, _, err := registration.Of(f.Svc).LoadMembershipForm(f.Ctx, engine.DemoUserKey, tc.period, tc.org)
				if e := enginetest.WantCode(t, err, engine.CodeNotFound); e.Message != want.Message {
					t.Fatalf("message %q, want the unknown period's %q", e.Message, want.Message)
				}
				err = registration.Of(f.Svc).CheckRegistrationAccess(f.Ctx, engine.DemoUserKey, tc.period)
				if e := enginetest.WantCode(t, err, engine.CodeNotFound); e.Message != want.Message || strings.Contains(e.Message, "Hillside") {
					t.Fatalf("access message %q, want %q", e.Message, want.Message)
				}
			})
		}
		t.Run("own organisation, closed", func(t *testing.T) {
			err := registration.Of(f.Svc).CheckRegistrationAccess(f.Ctx, engine.DemoUserKey, 2)
			if e := enginetest.WantCode(t, err, engine.CodeConflict); !strings.Contains(e.Message, "closed") {
				t.Fatalf("message %q", e.Message)
			}
		})
		t.Run("the other organisation's own member still gets in", func(t *testing.T) {
			if err := registration.Of(f.Svc).CheckRegistrationAccess(f.Ctx, "hillside", 10); err != nil {
				t.Fatalf("access: %v", err)
			}
			enginetest.WantCode(t, registration.Of(f.Svc).CheckRegistrationAccess(f.Ctx, "hillside", 11), engine.CodeConflict)
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
				f := enginetest.NewFixture(t, db)
				r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
				r.AdvanceTo(enginetest.DemoSteps)
				if _, err := db.NewDelete().Model((*engine.UserPerson)(nil)).
					Where("user_key = ? AND person_id = ?", engine.DemoUserKey, enginetest.Robin).Exec(f.Ctx); err != nil {
					t.Fatal(err)
				}
				last := registration.NextInput{ProcessID: r.PID, Step: enginetest.DemoSteps, People: enginetest.DemoAnswers(enginetest.DemoSteps, r.Persons)}
				var err error
				if path == "last answer" {
					_, err = registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, last)
				} else {
					last.HoldCommit = true
					if _, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, last); err != nil {
						t.Fatalf("hold: %v", err)
					}
					rv, rerr := registration.Of(f.Svc).Review(f.Ctx, engine.DemoUserKey, r.PID)
					if rerr != nil {
						t.Fatalf("review: %v", rerr)
					}
					_, err = registration.Of(f.Svc).Confirm(f.Ctx, engine.DemoUserKey, r.PID, rv.Version, "")
				}
				e := enginetest.WantCode(t, err, engine.CodeValidation)
				if len(e.People) != 1 || e.People[0].PersonID != enginetest.Robin || !strings.Contains(e.People[0].Message, "Robin Morgan") {
					t.Fatalf("error %+v, want one failure naming Robin Morgan", e)
				}
				if ms := f.Memberships(r.ID); len(ms) != 0 {
					t.Fatalf("%d memberships written", len(ms))
				}
				if n, err := db.NewSelect().Model((*engine.Order)(nil)).Where("process_instance_id = ?", r.ID).Count(f.Ctx); err != nil || n != 0 {
					t.Fatalf("%d orders written (%v)", n, err)
				}
				if inst := f.Instance(r.ID); inst.Status == engine.StateDone {
					t.Fatalf("instance committed")
				}
			})
		})
	}
}
