package registration_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestSelectionStatements: a first person selection is two prepared
// statements on PostgreSQL (one read, one write) without a transaction; on
// SQLite one read and two writes in a transaction. It gives the same form
// as a selection made again (which takes the transaction), refuses what it
// must without writing, and a stale one is a conflict.
func TestSelectionStatements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		db = db.WithQueryHook(engine.QueryHook{}) // counts bun's statements, as serve does
		f := enginetest.NewFixture(t, db)
		form, _ := f.Load(engine.DemoUserKey)
		pid := form.ProcessIDString()
		before := f.Instance(form.ProcessID)

		// Refused: a person already registered, one not linked. Nothing is written.
		for _, people := range [][]registration.PersonInput{{{ID: enginetest.Alex}, {ID: enginetest.Jamie}}, {{ID: 999}}, {}} {
			_, err := registration.Of(f.Svc).Next(context.Background(), engine.DemoUserKey, registration.NextInput{ProcessID: pid, People: people})
			if engine.ErrorCode(err) != engine.CodeValidation {
				t.Errorf("selecting %v: %v, want a validation error", people, err)
			}
		}
		if got := f.Instance(form.ProcessID); got.Version != before.Version || got.Status != engine.StateInit {
			t.Fatalf("refused selections changed the registration: version %d, status %s", got.Version, got.Status)
		}

		people := []registration.PersonInput{{ID: enginetest.Robin}, {ID: enginetest.Alex}}
		// Another tenant's registration reads as none, and nothing is written.
		if _, err := registration.Of(f.Svc).Next(engine.WithOrganisation(context.Background(), 2), engine.DemoUserKey, registration.NextInput{ProcessID: pid, People: people}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("selecting in another organisation's registration: %v, want not found", err)
		}
		if got := f.Instance(form.ProcessID); got.Version != before.Version {
			t.Fatalf("another organisation's selection moved the version to %d", got.Version)
		}

		ctx, count := engine.WithStatementCount(engine.WithLanguage(context.Background(), "de"))
		first, err := registration.Of(f.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, People: people})
		if err != nil {
			t.Fatal(err)
		}
		wantStatements(t, db, count, 2, 3)
		inst := f.Instance(form.ProcessID)
		if !slices.Equal(inst.SelectedPersons, []int64{enginetest.Robin, enginetest.Alex}) || inst.Status != engine.StateRunning ||
			inst.Version != before.Version+1 || inst.Language != "de" || inst.CurrentStepID == nil {
			t.Errorf("after the selection: persons %v, status %s, version %d (was %d), language %q, step %v",
				inst.SelectedPersons, inst.Status, inst.Version, before.Version, inst.Language, inst.CurrentStepID)
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = 'selected' AND step_id IS NULL", form.ProcessID); n != 2 {
			t.Errorf("%d selection rows stored, want 2", n)
		}
		if first.Step != 1 || len(first.People) != 2 || first.People[0].ID != enginetest.Robin {
			t.Errorf("form after the selection: step %d, people %+v", first.Step, first.People)
		}

		// The same selection again is stale.
		if _, err := registration.Of(f.Svc).Next(context.Background(), engine.DemoUserKey, registration.NextInput{ProcessID: pid, People: people}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Errorf("the selection posted twice: %v, want a conflict", err)
		}
		// Another user key's registration reads as not found.
		if _, err := registration.Of(f.Svc).Next(context.Background(), "someone-else", registration.NextInput{ProcessID: pid, People: people}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("another user's registration: %v, want not found", err)
		}

		// Back to the selection and the same persons again: the transaction's
		// path, which gives the same form and replaces the selection.
		if _, err := registration.Of(f.Svc).Back(context.Background(), engine.DemoUserKey, pid, nil); err != nil {
			t.Fatal(err)
		}
		again, err := registration.Of(f.Svc).Next(engine.WithLanguage(context.Background(), "de"), engine.DemoUserKey, registration.NextInput{ProcessID: pid, People: people})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, again), mustJSON(t, first); a != b { // as the API shows them
			t.Errorf("the selection made again gives\n%s\nthe first\n%s", a, b)
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = 'selected'", form.ProcessID); n != 2 {
			t.Errorf("%d selection rows after selecting again, want 2", n)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestResetStatements: a member's reset of a registration under way is two
// prepared statements on PostgreSQL without a transaction (one read, one
// write), on SQLite one read and two writes in a transaction; a reset at
// the start already writes nothing.
func TestResetStatements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		db = db.WithQueryHook(engine.QueryHook{})
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(3)
		before := f.Instance(r.ID)
		if _, err := registration.Of(f.Svc).Reset(engine.WithOrganisation(context.Background(), 2), engine.DemoUserKey, r.PID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("resetting another organisation's registration: %v, want not found", err)
		}
		if got := f.Instance(r.ID).Version; got != before.Version {
			t.Fatalf("another organisation's reset moved the version to %d", got)
		}
		ctx, count := engine.WithStatementCount(context.Background())
		form, err := registration.Of(f.Svc).Reset(ctx, engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		wantStatements(t, db, count, 2, 3)
		inst := f.Instance(r.ID)
		if inst.Status != engine.StateInit || inst.CurrentStepID != nil || len(inst.SelectedPersons) != 0 || inst.Version != before.Version+1 {
			t.Errorf("after the reset: status %s, step %v, persons %v, version %d (was %d)", inst.Status, inst.CurrentStepID, inst.SelectedPersons, inst.Version, before.Version)
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n != 0 {
			t.Errorf("%d selections and answers left after the reset, want none", n)
		}
		statuses := map[int64]string{}
		for _, p := range form.People {
			statuses[p.ID] = p.Status
			if p.Selected {
				t.Errorf("person %d selected after the reset", p.ID)
			}
		}
		if form.Step != 0 || len(form.People) != 4 || statuses[enginetest.Jamie] != engine.PersonRegistered || statuses[enginetest.Alex] != engine.PersonAvailable {
			t.Errorf("form after the reset: step %d, statuses %v", form.Step, statuses)
		}
		// At the start already: the same form, nothing written.
		again, err := registration.Of(f.Svc).Reset(context.Background(), engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, again), mustJSON(t, form); a != b {
			t.Errorf("a second reset gives\n%s\nthe first\n%s", a, b)
		}
		if got := f.Instance(r.ID).Version; got != inst.Version {
			t.Errorf("a second reset moved the version to %d from %d", got, inst.Version)
		}
	})
}
