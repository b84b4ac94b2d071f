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

// TestStaleWrites: the question step's, the selection's and the reset's
// writes check the version they read. Two tabs read the same version; when
// one moves the registration first, the other's write is a conflict and
// writes nothing, whichever of the three it is.
func TestStaleWrites(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db)
		reg := registration.Of(demo.Svc)
		persons := []int64{1, 3} // the demo's Alex and Robin
		form, _, err := reg.LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil)
		if err != nil {
			t.Fatal(err)
		}
		pid := form.ProcessIDString()
		next := func(in []registration.PersonInput) {
			t.Helper()
			if form, err = reg.Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: form.Step, People: in}); err != nil {
				t.Fatalf("step %d: %v", form.Step, err)
			}
		}
		next([]registration.PersonInput{{ID: persons[0]}, {ID: persons[1]}})
		version := func() (v int64, answers int) {
			t.Helper()
			var inst engine.ProcessInstance
			if err := db.NewSelect().Model(&inst).Where("id = ?", form.ProcessID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			n, err := db.NewSelect().Model((*engine.ProcessData)(nil)).Where("instance_id = ?", form.ProcessID).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return inst.Version, int(n)
		}
		read, _ := version()
		next(enginetest.Answers(form.Question.Name, persons)) // the other tab moves it
		moved, answers := version()
		errs, err := reg.StaleWrites(ctx, engine.DemoUserKey, pid, read)
		if err != nil {
			t.Fatal(err)
		}
		for i, err := range errs {
			if engine.ErrorCode(err) != engine.CodeConflict {
				t.Errorf("write %d at a version that moved: %v, want a conflict", i, err)
			}
		}
		if v, n := version(); v != moved || n != answers {
			t.Errorf("after the stale writes: version %d with %d answers, want %d with %d (unchanged)", v, n, moved, answers)
		}
		// At the version read, the same writes go through (the test can fail).
		errs, err = reg.StaleWrites(ctx, engine.DemoUserKey, pid, moved)
		if err != nil {
			t.Fatal(err)
		}
		if errs[0] != nil {
			t.Errorf("the question step's write at the current version: %v", errs[0])
		}
	})
}
