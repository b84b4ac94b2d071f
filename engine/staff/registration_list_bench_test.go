package staff_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/staff"
)

// BenchmarkStaffRegistrations pages and filters a season of 10,000
// registrations as the staff list does (count and page of 50), on
// PostgreSQL: `make bench-staff` (docs/BENCHMARKS.md).
func BenchmarkStaffRegistrations(b *testing.B) {
	dbtest.SkipWithoutPostgres(b)
	db := dbtest.Postgres(b)
	enginetest.SeedSeason(b, db, 10000)
	svc := engine.NewService(db, nil)
	ctx := context.Background()
	for _, q := range []struct {
		name string
		q    staff.RegistrationQuery
	}{
		{"first page", staff.RegistrationQuery{}},
		{"page 100", staff.RegistrationQuery{Page: 100}},
		{"period and state", staff.RegistrationQuery{PeriodID: engine.DemoPeriodID, State: staff.RegAwaitingPayment}},
		{"membership type", staff.RegistrationQuery{MembershipTypeID: 2}},
		{"unpaid for 3 days", staff.RegistrationQuery{UnpaidDays: 3}},
		{"sorted by amount owed", staff.RegistrationQuery{Sort: staff.SortRegOwedDesc}},
		{"sorted by days unpaid", staff.RegistrationQuery{Sort: staff.SortRegUnpaidDesc}},
		{"search name", staff.RegistrationQuery{Search: "family1234"}},
		{"search reference", staff.RegistrationQuery{Search: "PO-BENCH004321"}},
		{"search e-mail", staff.RegistrationQuery{Search: "bench-777@example.org"}},
	} {
		q.q.OrganisationID = 1
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := staff.Of(svc).Registrations(ctx, q.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStaffRegistrationsAtScale checks the list's answers on a seeded
// season: filters count what they should.
func TestStaffRegistrationsAtScale(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		enginetest.SeedSeason(t, db, 600)
		svc := engine.NewService(db, nil)
		ctx := context.Background()
		for _, tc := range []struct {
			q     staff.RegistrationQuery
			total int
		}{
			{staff.RegistrationQuery{}, 600},
			{staff.RegistrationQuery{State: staff.RegPaid}, 200},
			{staff.RegistrationQuery{State: staff.RegAwaitingPayment}, 100},
			{staff.RegistrationQuery{MembershipTypeID: 2}, 200},
			{staff.RegistrationQuery{Search: "PO-BENCH000002"}, 1},
			{staff.RegistrationQuery{Search: "bench-7@EXAMPLE.org"}, 1},
			{staff.RegistrationQuery{Search: "family10"}, 3 * 11},
		} {
			tc.q.OrganisationID = 1
			page, err := staff.Of(svc).Registrations(ctx, tc.q)
			if err != nil || page.Total != tc.total {
				t.Errorf("%+v: %v, total %v, want %d", tc.q, err, page, tc.total)
			}
		}
		page, err := staff.Of(svc).Registrations(ctx, staff.RegistrationQuery{OrganisationID: 1, Page: 12})
		if err != nil || len(page.Rows) != 50 || page.PageCount != 12 || page.Rows[0].ID <= page.Rows[49].ID {
			t.Fatalf("page 12: %v %+v", err, page)
		}
		other, err := staff.Of(svc).Registrations(ctx, staff.RegistrationQuery{OrganisationID: 2})
		if err != nil || other.Total != 0 {
			t.Fatalf("another organisation sees %v %v", other, err)
		}
	})
}
