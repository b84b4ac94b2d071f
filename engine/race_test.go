package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// racers is how many submissions of one step race each other.
const racers = 50

// TestConcurrentNext: many submissions of the same step of one instance at
// once (double clicks, several tabs): exactly one wins, every other one is a
// conflict, and the winner's writes happen once.
func TestConcurrentNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		step int
	}{
		{name: "person selection", step: 0},
		{name: "middle question", step: 3},
		{name: "last question", step: enginetest.DemoSteps},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := enginetest.NewFixture(t, db)
				persons := []int64{enginetest.Alex, enginetest.Robin}
				var pid string
				var id int64
				in := make([]registration.PersonInput, len(persons))
				if tc.step == 0 {
					form, _ := f.Load(engine.DemoUserKey)
					pid, id = form.ProcessIDString(), form.ProcessID
					for i, p := range persons {
						in[i] = registration.PersonInput{ID: p}
					}
				} else {
					r := f.Start(engine.DemoUserKey, persons...)
					r.AdvanceTo(tc.step)
					pid, id = r.PID, r.ID
					in = enginetest.DemoAnswers(tc.step, persons)
				}

				errs := make([]error, racers)
				enginetest.Together(racers, func(i int) {
					_, errs[i] = registration.Of(f.Svc).Next(context.Background(), engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: tc.step, People: in})
				})

				wins, conflicts := 0, 0
				for _, err := range errs {
					switch {
					case err == nil:
						wins++
					case engine.ErrorCode(err) == engine.CodeConflict:
						conflicts++
					default:
						t.Errorf("unexpected error: %v", err)
					}
				}
				if wins != 1 || conflicts != racers-1 {
					t.Fatalf("%d won and %d got a conflict, want 1 and %d", wins, conflicts, racers-1)
				}

				inst := f.Instance(id)
				if tc.step == 0 {
					if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = ?", id, engine.DataSelected); n != len(persons) {
						t.Errorf("%d selection rows, want %d", n, len(persons))
					}
				} else {
					if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = ? AND step_id = (?)", id, engine.DataAnswer,
						db.NewSelect().Model((*engine.ProcessStep)(nil)).Column("id").
							Where("definition_id = ? AND order_index = ?", inst.DefinitionID, tc.step)); n != len(persons) {
						t.Errorf("%d answers stored for step %d, want %d", n, tc.step, len(persons))
					}
				}
				if tc.step < enginetest.DemoSteps {
					form, _ := f.Load(engine.DemoUserKey)
					if form.State != engine.StateRunning || form.Step != tc.step+1 {
						t.Errorf("after the race: state %s step %d, want RUNNING step %d", form.State, form.Step, tc.step+1)
					}
					if n := f.Count((*engine.Order)(nil), "process_instance_id = ?", id); n != 0 {
						t.Errorf("%d orders before the last question, want 0", n)
					}
					return
				}

				if inst.Status != engine.StateDone {
					t.Errorf("after the race: %s, want DONE", inst.Status)
				}
				if n := f.Count((*engine.Order)(nil), "process_instance_id = ?", id); n != 1 {
					t.Errorf("%d orders, want 1", n)
				}
				for _, p := range persons {
					if n := f.Count((*engine.Membership)(nil), "process_instance_id = ? AND person_id = ?", id, p); n != 1 {
						t.Errorf("person %d has %d memberships, want 1", p, n)
					}
				}
				if n := len(f.Payments(id)); n != 1 {
					t.Errorf("%d payment attempts, want 1", n)
				}
			})
		})
	}
}

// insertBarrier holds every insert of a process instance until n of them are
// waiting, so that n callers who all found no open instance really insert at once.
type insertBarrier struct {
	n       int32
	arrived atomic.Int32
	all     chan struct{}
}

func newInsertBarrier(n int32) *insertBarrier {
	return &insertBarrier{n: n, all: make(chan struct{})}
}

func (b *insertBarrier) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if !strings.HasPrefix(e.Query, `INSERT INTO "process_instances"`) {
		return ctx
	}
	switch k := b.arrived.Add(1); {
	case k == b.n:
		close(b.all)
	case k > b.n:
		return ctx
	}
	select {
	case <-b.all:
	case <-time.After(10 * time.Second): // the test reports that the callers did not race
	}
	return ctx
}

func (b *insertBarrier) AfterQuery(context.Context, *bun.QueryEvent) {}

// raceLoads makes n concurrent first loads of a user key's form, each having
// found no open instance before any of them inserts one.
func raceLoads(t *testing.T, db *bun.DB, userKey string, n int) (ids []int64, created int) {
	t.Helper()
	_, gw := enginetest.SeededWithGateway(t, db)
	barrier := newInsertBarrier(int32(n))
	svc := engine.NewService(db.WithQueryHook(barrier), gw)
	forms := make([]*registration.Form, n)
	made := make([]bool, n)
	errs := make([]error, n)
	enginetest.Together(n, func(i int) {
		forms[i], made[i], errs[i] = registration.Of(svc).LoadMembershipForm(context.Background(), userKey, engine.DemoPeriodID, nil)
	})
	if got := barrier.arrived.Load(); got != int32(n) {
		t.Fatalf("%d of %d loads tried to insert an instance: they did not race", got, n)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("load %d: %v", i, errs[i])
		}
		ids = append(ids, forms[i].ProcessID)
		if made[i] {
			created++
		}
	}
	return ids, created
}

// TestConcurrentLoadEndsOnOneInstance: two tabs opening a new registration at
// once end on the same instance.
func TestConcurrentLoadEndsOnOneInstance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ids, _ := raceLoads(t, db, "demo-1", 2)
		if ids[0] != ids[1] {
			t.Errorf("the loads ended on instances %d and %d, want one", ids[0], ids[1])
		}
		n, err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).Where("user_key = ?", "demo-1").Count(context.Background())
		if err != nil || n != 1 {
			t.Errorf("%d instances for the user key (err %v), want 1", n, err)
		}
	})
}

// TestConcurrentLoadReportsCreatedOnce: of two loads that race to start the
// same registration, only the one whose instance was stored made it (the API
// answers 201 for created, 200 otherwise).
func TestConcurrentLoadReportsCreatedOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		if _, created := raceLoads(t, db, "demo-1", 2); created != 1 {
			t.Errorf("%d loads reported created, want 1", created)
		}
	})
}
