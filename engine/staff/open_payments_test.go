package staff_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/staff"
)

// seedOrderMessages adds to a seeded season the messages a season sends
// about its orders: a transfer request per order, a reminder per unpaid
// one and a confirmation per paid one.
func seedOrderMessages(tb testing.TB, db *bun.DB) {
	tb.Helper()
	ctx := context.Background()
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Scan(ctx); err != nil {
		tb.Fatal(err)
	}
	now := clock.Now().UTC()
	var msgs []engine.OutboxMessage
	for _, o := range orders {
		msgs = append(msgs, engine.OutboxMessage{Kind: payment.KindTransferRequest, DedupKey: fmt.Sprintf("transfer_request:order:%d", o.ID), Payload: "{}", CreatedAt: now})
		switch o.Status {
		case engine.OrderUnpaid:
			msgs = append(msgs, engine.OutboxMessage{Kind: message.KindUnpaidReminder, DedupKey: fmt.Sprintf("unpaid_reminder:order:%d:day:7", o.ID), Payload: "{}", CreatedAt: now})
		case engine.OrderPaid:
			msgs = append(msgs, engine.OutboxMessage{Kind: "membership_confirmation", DedupKey: fmt.Sprintf("membership_confirmation:order:%d", o.ID), Payload: "{}", CreatedAt: now})
		}
	}
	for start := 0; start < len(msgs); start += 500 {
		batch := msgs[start:min(start+500, len(msgs))]
		if _, err := db.NewInsert().Model(&batch).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestOpenPaymentsAtScale: on a seeded season every unpaid order of a
// committed registration is listed once, with its reminder, in order.
func TestOpenPaymentsAtScale(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		enginetest.SeedSeason(t, db, 600)
		seedOrderMessages(t, db)
		svc := engine.NewService(db, nil)
		ctx := context.Background()
		rows, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: 1})
		if err != nil || len(rows) != 100 {
			t.Fatalf("%v, %d rows, want 100", err, len(rows))
		}
		for i, r := range rows {
			if r.Reminders != 1 || r.OwedMinor != 12000 || r.LastMessageKind != message.KindUnpaidReminder ||
				len(r.Household) != 1 || (i > 0 && r.CommittedAt.Before(rows[i-1].CommittedAt)) {
				t.Fatalf("row %d: %+v", i, r)
			}
		}
		newest, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: 1, Sort: staff.SortNewest, MinDays: 0})
		if err != nil || len(newest) != 100 || newest[0].OrderID != rows[99].OrderID {
			t.Fatalf("newest first: %v", err)
		}
		// Pages of 30: four, which together are the list, in its order and
		// with the same households; a page past the last is the last.
		var paged []staff.OpenPayment
		for n := 1; n <= 5; n++ {
			page, err := staff.Of(svc).OpenPaymentsPage(ctx, staff.OpenPaymentQuery{OrganisationID: 1}, n, 30)
			if err != nil || page.Total != 100 || page.PageCount != 4 || page.Page != min(n, 4) {
				t.Fatalf("page %d: %v, %+v", n, err, page)
			}
			if n <= 4 {
				paged = append(paged, page.Rows...)
			} else if len(page.Rows) != 10 || page.Rows[9].OrderID != rows[99].OrderID {
				t.Fatalf("page past the last: %d rows", len(page.Rows))
			}
		}
		if len(paged) != len(rows) {
			t.Fatalf("the pages hold %d rows, the list %d", len(paged), len(rows))
		}
		for i := range rows {
			if paged[i].OrderID != rows[i].OrderID || !slices.Equal(paged[i].Household, rows[i].Household) || paged[i].Reminders != rows[i].Reminders {
				t.Fatalf("row %d: page %+v, list %+v", i, paged[i], rows[i])
			}
		}
		if _, err := staff.Of(svc).OpenPaymentsPage(ctx, staff.OpenPaymentQuery{OrganisationID: 1}, 1, 0); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("page size 0: %v", err)
		}
		if other, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: 2}); err != nil || len(other) != 0 {
			t.Fatalf("another organisation sees %d rows, %v", len(other), err)
		}
		if _, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: 1, Sort: "nonsense"}); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("unknown sort: %v", err)
		}
	})
}

// BenchmarkOpenPayments lists the unpaid orders of a season of 10,000
// registrations (about 1,700 unpaid) with their messages, on PostgreSQL.
func BenchmarkOpenPayments(b *testing.B) {
	dbtest.SkipWithoutPostgres(b)
	db := dbtest.Postgres(b)
	enginetest.SeedSeason(b, db, 10000)
	seedOrderMessages(b, db)
	if _, err := db.ExecContext(context.Background(), "ANALYZE outbox_messages"); err != nil {
		b.Fatal(err)
	}
	svc := engine.NewService(db, nil)
	for b.Loop() {
		if _, err := staff.Of(svc).OpenPayments(context.Background(), staff.OpenPaymentQuery{OrganisationID: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
