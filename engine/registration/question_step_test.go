package registration_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestQuestionStepStatements: a question step that is not the last is two
// prepared statements on PostgreSQL (one read, one write) without a
// transaction; on SQLite one read and two writes in a transaction (a third,
// the delete, only for a step answered before). Both give the same form
// and store the same answers.
func TestQuestionStepStatements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		db = db.WithQueryHook(engine.QueryHook{}) // counts bun's statements, as serve does
		f := enginetest.NewFixture(t, db)
		persons := []int64{enginetest.Alex, enginetest.Robin}
		r := f.Start(engine.DemoUserKey, persons...)
		r.AdvanceTo(2)
		ctx, count := engine.WithStatementCount(engine.WithLanguage(context.Background(), "de"))
		form, err := registration.Of(f.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 2, People: enginetest.DemoAnswers(2, persons)})
		if err != nil {
			t.Fatal(err)
		}
		if form.Step != 3 {
			t.Fatalf("step %d after answering step 2, want 3", form.Step)
		}
		wantStatements(t, db, count, 2, 3)
		if got := f.Instance(r.ID).Language; got != "de" {
			t.Errorf("language %q after a step answered in German, want de", got)
		}
		// Step 3 too, then Back twice and the same answers to step 2 again:
		// the step's answers are replaced, not added, and step 3 comes back
		// with the answers saved for it.
		if _, err := registration.Of(f.Svc).Next(context.Background(), engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 3, People: enginetest.DemoAnswers(3, persons)}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := registration.Of(f.Svc).Back(context.Background(), engine.DemoUserKey, r.PID, nil); err != nil {
				t.Fatal(err)
			}
		}
		ctx, count = engine.WithStatementCount(context.Background())
		again, err := registration.Of(f.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 2, People: enginetest.DemoAnswers(2, persons)})
		if err != nil {
			t.Fatal(err)
		}
		if again.Step != 3 {
			t.Errorf("step %d after Back and Next, want 3", again.Step)
		}
		saved := map[int64]string{}
		for _, p := range enginetest.DemoAnswers(3, persons) {
			saved[p.ID] = *p.Answer
		}
		for _, p := range again.People {
			if p.Answer == nil || *p.Answer != saved[p.ID] {
				t.Errorf("step 3 shows person %d's answer %v, want the saved %q", p.ID, p.Answer, saved[p.ID])
			}
		}
		wantStatements(t, db, count, 2, 4)
		var answers int
		if err := db.NewRaw("SELECT count(*) FROM process_data WHERE instance_id = ? AND data_key = 'answer'", r.ID).Scan(context.Background(), &answers); err != nil {
			t.Fatal(err)
		}
		if answers != 3*len(persons) {
			t.Errorf("%d answers stored after three steps of %d persons, want %d", answers, len(persons), 3*len(persons))
		}
		// A stale step is a conflict that writes nothing.
		if _, err := registration.Of(f.Svc).Next(context.Background(), engine.DemoUserKey, registration.NextInput{ProcessID: r.PID, Step: 2, People: enginetest.DemoAnswers(2, persons)}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Errorf("answering step 2 again at step 3: %v, want a conflict", err)
		}
		// Another user key's registration reads as not found.
		if _, err := registration.Of(f.Svc).Next(context.Background(), "someone-else", registration.NextInput{ProcessID: r.PID, Step: 3, People: enginetest.DemoAnswers(3, persons)}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("another user's registration: %v, want not found", err)
		}
	})
}

// wantStatements checks the statements a request ran: onPG without a
// transaction on PostgreSQL, onSQLite with one (BEGIN and COMMIT) on
// SQLite.
func wantStatements(t *testing.T, db *bun.DB, count *engine.StatementCount, onPG, onSQLite int64) {
	t.Helper()
	want, tx := onPG, int64(0)
	if db.Dialect().Name().String() != "pg" {
		want, tx = onSQLite, 2
	}
	if count.Load() != want || count.TxControl() != tx {
		t.Errorf("%d statements and %d BEGIN/COMMIT on %s, want %d and %d", count.Load(), count.TxControl(), db.Dialect().Name(), want, tx)
	}
}
