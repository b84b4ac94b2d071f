package directdebit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
)

// seedDirectDebits turns the unpaid orders of a seeded season into
// direct-debit orders due today, each with its household's mandate and
// its pending attempt, inserted in bulk. It returns how many.
func seedDirectDebits(b testing.TB, db *bun.DB) int {
	b.Helper()
	ctx := context.Background()
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Where("status = ?", engine.OrderUnpaid).Order("id").Scan(ctx); err != nil {
		b.Fatal(err)
	}
	now := clock.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	mandates := make([]directdebit.DebitMandate, len(orders))
	pays := make([]engine.Payment, len(orders))
	for i, o := range orders {
		mandates[i] = directdebit.DebitMandate{OrganisationID: 1, UserKey: o.UserKey, CreditorID: enginetest.TestCreditorID, Reference: fmt.Sprintf("BENCH-%06d", i),
			Holder: fmt.Sprintf("Holder %d", i), IBAN: enginetest.DemoIBAN, Language: "en", Text: "…", TextVersion: directdebit.MandateTextVersion, SignedAt: now}
		pays[i] = engine.Payment{OrderID: o.ID, Provider: payment.DirectDebitProvider, Reference: fmt.Sprintf("PR-BENCH%08d", i), AmountMinor: o.TotalMinor,
			Currency: o.Currency, Status: engine.PaymentPending, PaymentURL: "/pay/" + o.PayReference, CreatedAt: now, UpdatedAt: now}
	}
	for _, rows := range []any{&mandates, &pays} {
		if _, err := db.NewInsert().Model(rows).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for i, o := range orders {
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("payment_method = ?", payment.DirectDebitProvider).
			Set("debit_mandate_id = ?", mandates[i].ID).Set("debit_due_on = ?", today).Where("id = ?", o.ID).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return len(orders)
}

// BenchmarkCollectionRun times CollectDebits preparing the run of a
// season's unpaid orders (about 1,700 of 10,000 registrations) collected
// by direct debit, on PostgreSQL: the due orders, their mandates and
// attempts, the debits, the pain.008 file and the audit entry, in one
// transaction. Each run is cancelled (untimed) so that the next finds the
// same debits due.
func BenchmarkCollectionRun(b *testing.B) {
	db := dbtest.Postgres(b)
	enginetest.SeedSeason(b, db, 10000)
	svc, _ := enginetest.DirectDebitClub(b, db)
	ctx := context.Background()
	n := seedDirectDebits(b, db)
	if _, err := db.ExecContext(context.Background(), "ANALYZE orders, payments, debit_mandates"); err != nil {
		b.Fatal(err)
	}
	actor := engine.Actor{Name: "bench"}
	b.ResetTimer()
	for b.Loop() {
		run, err := directdebit.Of(svc).CollectDebits(ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: actor})
		if err != nil || run.DebitCount != n {
			b.Fatalf("run of %d debits (%v), want %d", run.DebitCount, err, n)
		}
		b.StopTimer()
		if _, err := directdebit.Of(svc).CancelDebitRun(ctx, actor, 1, run.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n), "debits/run")
}

// statementCounter counts the statements a database runs.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	c.n.Add(1)
	return ctx
}
func (*statementCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// BenchmarkCollectionRunSent times MarkDebitRunSent settling the run of
// BenchmarkCollectionRun's debits (about 1,700) as paid, on PostgreSQL,
// and counts its statements per debit. Each run needs a season of its
// own: run it with -benchtime 1x.
func BenchmarkCollectionRunSent(b *testing.B) {
	counter := &statementCounter{}
	db := dbtest.Postgres(b).WithQueryHook(counter)
	enginetest.SeedSeason(b, db, 10000)
	svc, _ := enginetest.DirectDebitClub(b, db)
	ctx := context.Background()
	n := seedDirectDebits(b, db)
	if _, err := db.ExecContext(ctx, "ANALYZE orders, payments, debit_mandates"); err != nil {
		b.Fatal(err)
	}
	actor := engine.Actor{Name: "bench"}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		run, err := directdebit.Of(svc).CollectDebits(ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: actor})
		if err != nil || run.DebitCount != n {
			b.Fatalf("run of %d debits (%v), want %d (run with -benchtime 1x)", run.DebitCount, err, n)
		}
		counter.n.Store(0)
		b.StartTimer()
		sent, err := directdebit.Of(svc).MarkDebitRunSent(ctx, actor, 1, run.ID)
		if err != nil || sent.Settled != n {
			b.Fatalf("settled %d of %d (%v)", sent.Settled, n, err)
		}
	}
	b.ReportMetric(float64(counter.n.Load())/float64(n), "statements/debit")
	b.ReportMetric(float64(n), "debits/run")
}
