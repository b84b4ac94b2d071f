package enginetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata"
)

// SeedSeason adds n registrations of one household each to the demo
// club's period 1: persons, user keys, instances in every state, orders
// and memberships, inserted in bulk.
func SeedSeason(b testing.TB, db *bun.DB, n int) {
	b.Helper()
	ctx := context.Background()
	if err := demodata.SeedDemo(ctx, db, 0, clock.Now()); err != nil {
		b.Fatal(err)
	}
	var def engine.ProcessDefinition
	if err := db.NewSelect().Model(&def).Where("organisation_id = 1").Limit(1).Scan(ctx); err != nil {
		b.Fatal(err)
	}
	states := []engine.ProcessState{engine.StateRunning, engine.StateSuspended, engine.StateDone, engine.StateCompleted, engine.StateCompleted, engine.StateCancelled}
	now := clock.Now().UTC()
	const batch = 500
	for start := 0; start < n; start += batch {
		var persons []engine.Person
		var links []engine.UserPerson
		var insts []engine.ProcessInstance
		for i := start; i < min(start+batch, n); i++ {
			key := fmt.Sprintf("bench-%d", i)
			persons = append(persons, engine.Person{OrganisationID: 1, FirstName: fmt.Sprintf("First%d", i), LastName: fmt.Sprintf("Family%d", i/3),
				DateOfBirth: time.Date(1950+i%60, 1, 1, 0, 0, 0, 0, time.UTC), Email: key + "@example.org", CreatedAt: now})
			insts = append(insts, engine.ProcessInstance{DefinitionID: def.ID, DefinitionKey: def.Key, Status: states[i%len(states)],
				StartTime: now.Add(-time.Duration(i) * time.Minute), RelatedEntityType: engine.EntityMembership, RelatedEntityID: engine.DemoPeriodID,
				OrganisationID: 1, UserKey: key, SelectedPersons: []int64{}, UpdatedAt: now})
		}
		if _, err := db.NewInsert().Model(&persons).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		for j := range insts {
			insts[j].SelectedPersons = []int64{persons[j].ID} // each registers its one person
		}
		if _, err := db.NewInsert().Model(&insts).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		var orders []engine.Order
		var members []engine.Membership
		for j, inst := range insts {
			links = append(links, engine.UserPerson{UserKey: inst.UserKey, PersonID: persons[j].ID, OrganisationID: 1})
			status := map[engine.ProcessState]engine.OrderStatus{engine.StateDone: engine.OrderUnpaid, engine.StateCompleted: engine.OrderPaid, engine.StateCancelled: engine.OrderCancelled}[inst.Status]
			if status == "" {
				continue
			}
			orders = append(orders, engine.Order{ProcessInstanceID: inst.ID, OrganisationID: 1, PeriodID: engine.DemoPeriodID, UserKey: inst.UserKey,
				Status: status, TotalMinor: 12000, Currency: "EUR", CreatedAt: inst.StartTime, PayReference: fmt.Sprintf("PO-BENCH%06d", start+j)})
			members = append(members, engine.Membership{PersonID: persons[j].ID, PeriodID: engine.DemoPeriodID, MembershipTypeID: int64(1 + j%2),
				MemberType: "NEW", Status: map[engine.OrderStatus]engine.MembershipStatus{engine.OrderUnpaid: engine.MembershipPending, engine.OrderPaid: engine.MembershipActive, engine.OrderCancelled: engine.MembershipCancelled}[status],
				ProcessInstanceID: &insts[j].ID, CreatedAt: now})
		}
		for _, rows := range []any{&links, &orders, &members} {
			if _, err := db.NewInsert().Model(rows).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if db.Dialect().Name().String() == "pg" {
		// The seeded tables only: a bare ANALYZE reads every table of every
		// schema of the database, the other tests' too, and waits on their
		// migrations and dropped schemas (it took over 30 s in the suite).
		if _, err := db.ExecContext(ctx, "ANALYZE persons, user_persons, process_instances, orders, memberships"); err != nil {
			b.Fatal(err)
		}
	}
}
