package registration_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestFormLoadStatements: loading an open registration without an unpaid
// order (the step page, the API's form load) is one prepared statement on
// both databases, at person selection and at a question, and gives the
// form the step itself gave; the writes of a resume and of an activity
// touch come only when due; its checks are the full path's. An unpaid
// order takes the full path, which reconciles it first
// (TestReconcileMissedWebhook).
func TestFormLoadStatements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		db = db.WithQueryHook(engine.QueryHook{}) // counts bun's statements, as serve does
		f := enginetest.NewFixture(t, db)
		load := func(ctx context.Context, userKey string, orgID *int64) (*registration.Form, int64, error) {
			ctx, count := engine.WithStatementCount(ctx)
			form, created, err := registration.Of(f.Svc).LoadMembershipForm(ctx, userKey, engine.DemoPeriodID, orgID)
			if created {
				t.Errorf("load of %s created a registration", userKey)
			}
			if count.TxControl() != 0 {
				t.Errorf("load of %s: %d BEGIN/COMMIT, want none", userKey, count.TxControl())
			}
			return form, count.Load(), err
		}
		// The same count on both databases and no transaction: unlike a step
		// (wantStatements), a load has none on SQLite either.
		expect := func(what string, n int64, err error, want int64) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if n != want {
				t.Errorf("%s: %d statements, want %d", what, n, want)
			}
		}

		first, created := f.Load(engine.DemoUserKey) // the full path: it creates the registration
		if !created {
			t.Fatal("the first load created no registration")
		}
		selection, n, err := load(f.Ctx, engine.DemoUserKey, nil)
		expect("person selection", n, err, 1)
		if !sameForm(t, selection, first) {
			t.Errorf("person selection read in one statement:\n%+v\nwant the full path's\n%+v", selection, first)
		}
		if ids := enginetest.PersonIDs(selection); !slices.Equal(ids, []int64{enginetest.Alex, enginetest.Sam, enginetest.Jamie, enginetest.Robin}) ||
			selection.People[2].CanSelect || selection.People[2].Status != engine.PersonRegistered {
			t.Errorf("selection %+v: want the four persons oldest first, jamie registered", selection.People)
		}

		persons := []int64{enginetest.Alex, enginetest.Robin}
		r := f.Start(engine.DemoUserKey, persons...)
		r.AdvanceTo(3)
		back, err := registration.Of(f.Svc).Back(f.Ctx, engine.DemoUserKey, r.PID, nil) // step 2 with saved answers
		if err != nil {
			t.Fatal(err)
		}
		form, n, err := load(f.Ctx, engine.DemoUserKey, nil)
		expect("question", n, err, 1)
		if !sameForm(t, form, back) {
			t.Errorf("question read in one statement:\n%+v\nwant the form Back gave\n%+v", form, back)
		}
		if form.Step != 2 || len(form.People) != 2 || form.People[0].Answer == nil || *form.People[0].Answer != "M" {
			t.Errorf("question %+v: want step 2 with alex's saved answer M", form)
		}

		// An activity older than activityGrain is touched, once.
		setInstance := func(column string, value any) {
			t.Helper()
			if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set(column+" = ?", value).Where("id = ?", r.ID).Exec(f.Ctx); err != nil {
				t.Fatal(err)
			}
		}
		setInstance("updated_at", clock.Now().Add(-time.Hour))
		_, n, err = load(f.Ctx, engine.DemoUserKey, nil)
		expect("question after an hour away", n, err, 2)
		if since := time.Since(f.Instance(r.ID).UpdatedAt); since > time.Minute {
			t.Errorf("activity %s ago after a load, want now", since)
		}
		_, n, err = load(f.Ctx, engine.DemoUserKey, nil)
		expect("question loaded again", n, err, 1)

		// A suspended registration resumes.
		setInstance("status", engine.StateSuspended)
		form, n, err = load(f.Ctx, engine.DemoUserKey, nil)
		expect("suspended question", n, err, 2)
		if form.State != engine.StateRunning || f.Instance(r.ID).Status != engine.StateRunning {
			t.Errorf("suspended registration loaded: form %s, stored %s, want RUNNING", form.State, f.Instance(r.ID).Status)
		}

		// The checks of the full path.
		other := int64(2)
		if _, _, err := load(f.Ctx, engine.DemoUserKey, &other); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("another organisation's id: %v, want not found", err)
		}
		if _, _, err := load(engine.WithOrganisation(f.Ctx, other), engine.DemoUserKey, nil); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("another organisation: %v, want not found", err)
		}
		if _, err := db.NewUpdate().Model((*engine.MembershipPeriod)(nil)).Set("status = ?", engine.PeriodClosed).Where("id = ?", engine.DemoPeriodID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := load(f.Ctx, engine.DemoUserKey, nil); engine.ErrorCode(err) != engine.CodeConflict {
			t.Errorf("closed period: %v, want a conflict", err)
		}
		if _, err := db.NewUpdate().Model((*engine.MembershipPeriod)(nil)).Set("status = ?", engine.PeriodOpen).Where("id = ?", engine.DemoPeriodID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewDelete().Model((*engine.UserPerson)(nil)).Where("user_key = ?", engine.DemoUserKey).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := load(f.Ctx, engine.DemoUserKey, nil); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("a user key whose persons were unlinked: %v, want not found", err)
		}
	})
}

// sameForm says whether two forms have the same content (their dates may
// differ in time zone value only).
func sameForm(t *testing.T, a, b *registration.Form) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
