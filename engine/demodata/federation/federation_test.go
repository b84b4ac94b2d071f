package federation_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/books"
	"portal/engine/dbtest"
	"portal/engine/demodata/federation"
	"portal/engine/payment"
)

// TestSeed seeds a small federation: every club has its two seasons and
// registrations in every state, the debit club's orders are direct debits
// due with their mandates, the big club's unpaid orders are open
// transfers, the books of every club hold, and a second seed adds nothing.
func TestSeed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		size := federation.Size{Clubs: 4, Persons: 400}
		now := time.Now().UTC()
		rep, err := federation.Seed(ctx, db, size, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		opening, bank, debit, perClub := size.Households()
		if rep.ClubsAdded != 4 || rep.OpeningAdded != opening || rep.Registrations == 0 {
			t.Fatalf("report %+v", rep)
		}
		count := func(q *bun.SelectQuery) int {
			t.Helper()
			n, err := q.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		var states []string
		if err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).ColumnExpr("DISTINCT status").Scan(ctx, &states); err != nil {
			t.Fatal(err)
		}
		if len(states) != 5 {
			t.Errorf("registration states %v, want running, suspended, done, completed and cancelled", states)
		}
		var debitOrg, bankOrg int64
		if err := db.NewSelect().Model((*engine.Organisation)(nil)).Column("id").Where("slug = ?", federation.DebitClub).Scan(ctx, &debitOrg); err != nil {
			t.Fatal(err)
		}
		if err := db.NewSelect().Model((*engine.Organisation)(nil)).Column("id").Where("slug = ?", federation.BankClub).Scan(ctx, &bankOrg); err != nil {
			t.Fatal(err)
		}
		if n := count(db.NewSelect().Model((*engine.Order)(nil)).Where("organisation_id = ? AND status = ? AND payment_method = ? AND debit_mandate_id IS NOT NULL AND debit_due_on IS NOT NULL",
			debitOrg, engine.OrderUnpaid, payment.DirectDebitProvider)); n != debit {
			t.Errorf("debit club: %d direct-debit orders due, want %d", n, debit)
		}
		if n := count(db.NewSelect().Model((*engine.Payment)(nil)).Join("JOIN orders o ON o.id = payment.order_id").
			Where("o.organisation_id = ? AND payment.provider = ? AND payment.status = ? AND payment.provider_id IS NOT NULL", bankOrg, payment.BankTransferProvider, engine.PaymentPending)); n != bank/5 {
			t.Errorf("bank club: %d open transfers, want %d", n, bank/5)
		}
		if n := count(db.NewSelect().Model((*engine.UserPerson)(nil)).Where("user_key = ?", "fed-004-"+itoa(perClub-1))); n == 0 {
			t.Errorf("the last club's last household is missing")
		}
		svc := engine.NewService(db, nil)
		for org := int64(1); org <= 5; org++ {
			findings, err := books.Check(ctx, svc, org)
			if err != nil || len(findings) > 0 {
				t.Errorf("books of organisation %d: %v %v", org, findings, err)
			}
		}
		persons := count(db.NewSelect().Model((*engine.Person)(nil)))
		again, err := federation.Seed(ctx, db, size, now, nil)
		if err != nil || again.ClubsAdded != 0 || again.OpeningAdded != 0 || count(db.NewSelect().Model((*engine.Person)(nil))) != persons {
			t.Fatalf("second seed: %+v, %v", again, err)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
