package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/books"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/staff"
)

// TestBooksHoldUnderRandomImports drives random sequences of bank files
// through the statement import, the way a season brings them: each real
// transfer reported by several files (the day's camt.054 without NtryRef,
// camt.052 intraday reports, the night's camt.053 with NtryRef, alone or in
// a batch entry with others), files that overlap, the same file twice,
// partial payments, overpayments, second payments (some paid back to the
// member) and two transfers that share a transaction-level AcctSvcrRef
// with different amounts. After every step the books check is clean (and
// the nightly check of every organisation after each sequence), and the money the portal counts
// for each order (captured, or kept as a credit to place) is exactly the
// sum of the distinct transfers the bank reported so far: never a
// transfer counted twice, never one lost.
func TestBooksHoldUnderRandomImports(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		for seed := range uint64(4) {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				if seed > 0 {
					// Each sequence on a database of its own.
					db = freshLike(t, db)
				}
				randomImports(t, db, seed)
			})
		}
	})
}

// freshLike is a new database of the same kind as db.
func freshLike(t *testing.T, db *bun.DB) *bun.DB {
	t.Helper()
	if db.Dialect().Name().String() == "pg" {
		return dbtest.Postgres(t)
	}
	return dbtest.SQLite(t)
}

func randomImports(t *testing.T, db *bun.DB, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 2027))
	f := enginetest.BankFixture(t, db, 4)
	owed := []banking.Expected{
		{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 28750, Currency: "EUR"},
		{Reference: "RF32PRBRAVO2345BRAVO234", AmountMinor: 5000, Currency: "EUR"},
		{Reference: "RF59PRCHARL2345CHARL234", AmountMinor: 12000, Currency: "EUR"},
		{Reference: "RF38PRDELTA2345DELTA234", AmountMinor: 9900, Currency: "EUR"},
	}
	for _, p := range enginetest.OpenTransfers(t, f, owed...) {
		// The orders owe what their attempts ask.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("total_minor = ?", p.AmountMinor).Where("id = ?", p.OrderID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)

	// The bank's transfers of the season: parts, whole amounts and more.
	var transfers []enginetest.CamtTx
	for k := range 14 {
		o := owed[rnd.IntN(len(owed))]
		var minor int64
		switch rnd.IntN(4) {
		case 0:
			minor = o.AmountMinor
		case 1:
			minor = o.AmountMinor + 1 + rnd.Int64N(5000) // more than owed
		default:
			minor = 1 + rnd.Int64N(o.AmountMinor-1) // a part
		}
		tx := enginetest.CamtTx{AcctSvcrRef: fmt.Sprintf("TX-%d-%d", seed, k), EndToEnd: fmt.Sprintf("E2E-%d-%d", seed, k), Minor: minor, RF: string(o.Reference)}
		if rnd.IntN(3) == 0 {
			tx.EndToEnd = "NOTPROVIDED"
		}
		if k > 0 && rnd.IntN(5) == 0 {
			// PostFinance: another transfer under the same transaction
			// reference, another amount.
			prev := transfers[rnd.IntN(len(transfers))]
			if prev.Minor != tx.Minor {
				tx.AcctSvcrRef = prev.AcctSvcrRef
			}
		}
		transfers = append(transfers, tx)
	}
	reported := map[int]bool{}
	var last banking.Statement
	for step := range 16 {
		var st banking.Statement
		if step > 0 && rnd.IntN(6) == 0 {
			st = last // the same file again
		} else {
			// A few transfers, some reported before (files overlap).
			picked := map[int]bool{}
			var txs []int
			for range 1 + rnd.IntN(4) {
				i := rnd.IntN(len(transfers))
				if !picked[i] {
					picked[i] = true
					txs = append(txs, i)
				}
			}
			message := []string{"camt.052", "camt.053", "camt.054"}[rnd.IntN(3)]
			var entries []enginetest.CamtEntry
			if message == "camt.053" && len(txs) > 1 && rnd.IntN(2) == 0 {
				batch := enginetest.CamtEntry{NtryRef: fmt.Sprintf("N%d", rnd.IntN(1000)), AcctSvcrRef: fmt.Sprintf("B-%d-%d", seed, step)}
				for _, i := range txs {
					batch.Txs = append(batch.Txs, transfers[i])
				}
				entries = append(entries, batch)
			} else {
				for j, i := range txs {
					e := enginetest.CamtEntry{AcctSvcrRef: fmt.Sprintf("E-%d-%d-%d", seed, step, j), Txs: []enginetest.CamtTx{transfers[i]}}
					if message != "camt.054" {
						e.NtryRef = fmt.Sprintf("%04d", rnd.IntN(10000))
					}
					entries = append(entries, e)
				}
			}
			st = enginetest.CamtFile(t, message, fmt.Sprintf("F-%d-%d", seed, step), entries...)
			for _, i := range txs {
				reported[i] = true
			}
		}
		last = st
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, st.MessageID, err)
		}
		for _, l := range rep.Lines {
			if l.Err != nil {
				t.Fatalf("step %d (%s): credit %s: %v", step, st.MessageID, l.Credit.ID, l.Err)
			}
		}
		if rnd.IntN(3) == 0 {
			// The treasurer pays back a second payment owed back.
			var owing []engine.Payment
			if err := db.NewSelect().Model(&owing).Where("refund_status = ? AND refund_manual", engine.RefundDue).Order("id").Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			if len(owing) > 0 {
				if _, err := payment.Of(f.Svc).MarkRefundPaidBack(f.Ctx, owing[0].Reference, "paid back in the property test"); err != nil {
					t.Fatalf("step %d: pay back %s: %v", step, owing[0].Reference, err)
				}
			}
		}
		findings, err := books.Check(f.Ctx, f.Svc, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range findings {
			t.Errorf("step %d (%s %s): %s", step, st.Message, st.MessageID, fd)
		}
		want, wantMinor := map[string]int{}, map[string]int64{}
		for i := range reported {
			want[transfers[i].RF]++
			wantMinor[transfers[i].RF] += transfers[i].Minor
		}
		for _, o := range owed {
			got, gotMinor := countedFor(t, f, string(o.Reference))
			if got != want[string(o.Reference)] || gotMinor != wantMinor[string(o.Reference)] {
				for _, l := range rep.Lines {
					t.Logf("line %s %d %s captured=%v kept=%v second=%v %s", l.Credit.ID, l.Credit.AmountMinor, l.Outcome, l.Captured, l.Kept, l.SecondCredit, l.Reason)
				}
				t.Fatalf("step %d (%s %s): %s: %d transfers of %s counted, the bank reported %d of %s", step, st.Message, st.MessageID, o.Reference,
					got, engine.FormatAmount(gotMinor), want[string(o.Reference)], engine.FormatAmount(wantMinor[string(o.Reference)]))
			}
		}
	}
	if n, err := books.CheckAll(f.Ctx, f.Svc, f.Svc.Clock()); err != nil || n != 0 {
		kept, _ := books.Findings(f.Ctx, db, 1)
		t.Fatalf("the nightly check after the sequence: %d findings (%v): %+v", n, err, kept)
	}
}

// countedFor is how many bank transfers the portal counts for an order's
// RF reference, and how much they bring: credits captured for its
// payments (one payment event each, by the bank credit's event id, with
// the credit's own amount), and those kept to place.
func countedFor(t *testing.T, f *enginetest.Fixture, rf string) (int, int64) {
	t.Helper()
	var rows []struct {
		N   int64 `bun:"n"`
		Sum int64 `bun:"sum"`
	}
	if err := f.DB.NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		ColumnExpr("COUNT(*) AS n, COALESCE(SUM(e.amount_minor), 0) AS sum").
		Where("p.provider_id = ? AND e.event_type = ? AND e.event_id LIKE 'bank:%'", rf, payment.BankCaptureEvent).
		UnionAll(f.DB.NewSelect().Model((*bankstatement.BankCredit)(nil)).ColumnExpr("COUNT(*) AS n, COALESCE(SUM(amount_minor), 0) AS sum").
			Where("reference = ? AND state = ?", rf, bankstatement.CreditUnmatched)).Scan(f.Ctx, &rows); err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	for _, r := range rows {
		n, sum = n+r.N, sum+r.Sum
	}
	return int(n), sum
}

// TestBooksHoldUnderRandomCollections drives a direct-debit club through
// random sequences of what a season brings: collection runs written and
// marked sent, debits returned by the bank (each return reported by the
// day's camt.054 and perhaps again in the night's camt.053, alone or in a
// batch with others), members confirming again so that the next run
// collects a returned order with its fee, refunds of collected payments,
// and days passing. After every step the books check is clean (the
// year-end report's totals included), and so is the nightly check of
// every organisation at the end of each sequence.
func TestBooksHoldUnderRandomCollections(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		for seed := range uint64(3) {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				if seed > 0 {
					db = freshLike(t, db)
				}
				randomCollections(t, db, seed)
			})
		}
	})
}

func randomCollections(t *testing.T, db *bun.DB, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 2028))
	day := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	var now atomic.Value
	now.Store(day)
	if err := demodata.SeedDemo(context.Background(), db, 4, day); err != nil {
		t.Fatalf("seed: %v", err)
	}
	svc, dd := enginetest.DirectDebitClub(t, db, engine.WithClock(func() time.Time { return now.Load().(time.Time) }))
	f := &enginetest.DebitFixture{Fixture: &enginetest.Fixture{T: t, Ctx: context.Background(), DB: db, Svc: svc}, DD: dd}
	f.IBAN, _ = banking.ParseIBAN(enginetest.DemoIBAN)
	if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("debit_return_fee_minor = 250").Where("organisation_id = 1").Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	var members []*enginetest.DebitMember
	for i := range 4 {
		members = append(members, f.CommitDebit(fmt.Sprintf("demo-%d", i+1), "en"))
	}
	treasurer := engine.Actor{Name: "treasurer@example.org"}
	returned := map[int64]bool{} // debits returned so far, by id
	var lastReturns []enginetest.CamtTx
	for step := range 14 {
		action := []string{"collect", "collect", "return", "return", "again", "refund", "confirm", "days"}[rnd.IntN(8)]
		switch action {
		case "collect":
			// A run written and left for a later step, or the run written
			// before marked sent.
			var prepared []payment.DebitRun
			if err := db.NewSelect().Model(&prepared).Where("organisation_id = 1 AND status = ?", payment.DebitRunPrepared).Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			if len(prepared) > 0 {
				if _, err := directdebit.Of(svc).MarkDebitRunSent(f.Ctx, treasurer, 1, prepared[0].ID); err != nil {
					t.Fatalf("step %d: mark sent: %v", step, err)
				}
				break
			}
			run, err := directdebit.Of(svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
			if engine.ErrorCode(err) == engine.CodeConflict {
				break // nothing due
			}
			if err != nil {
				t.Fatalf("step %d: collect: %v", step, err)
			}
			if rnd.IntN(3) > 0 {
				if _, err := directdebit.Of(svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run.ID); err != nil {
					t.Fatalf("step %d: mark sent: %v", step, err)
				}
			}
		case "return":
			var collected []payment.Debit
			if err := db.NewSelect().Model(&collected).Where("organisation_id = 1 AND status = ?", payment.DebitCollected).Order("id").Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			var txs []enginetest.CamtTx
			for _, d := range collected {
				if !returned[d.ID] && rnd.IntN(2) == 0 {
					returned[d.ID] = true
					txs = append(txs, enginetest.CamtTx{AcctSvcrRef: fmt.Sprintf("RET-%d-%d", seed, d.ID), EndToEnd: d.EndToEndID, Minor: d.AmountMinor,
						ReturnCode: []string{"MD06", "AM04", "MS03"}[rnd.IntN(3)]})
				}
			}
			if len(txs) == 0 {
				break
			}
			var entries []enginetest.CamtEntry
			for j, tx := range txs {
				entries = append(entries, enginetest.CamtEntry{AcctSvcrRef: fmt.Sprintf("N54-%d-%d-%d", seed, step, j), Txs: []enginetest.CamtTx{tx}})
			}
			f.ImportStatement(enginetest.CamtFile(t, "camt.054", fmt.Sprintf("N-%d-%d", seed, step), entries...), engine.StatementOptions{})
			lastReturns = txs
		case "again":
			// The night's statement repeats the day's returns, in a batch.
			if len(lastReturns) == 0 {
				break
			}
			f.ImportStatement(enginetest.CamtFile(t, "camt.053", fmt.Sprintf("S-%d-%d", seed, step),
				enginetest.CamtEntry{NtryRef: fmt.Sprint(step), AcctSvcrRef: fmt.Sprintf("S53-%d-%d", seed, step), Txs: lastReturns}), engine.StatementOptions{})
		case "refund":
			var paid []engine.Payment
			if err := db.NewSelect().Model(&paid).Where("status = ? AND refund_status = ''", engine.PaymentSucceeded).Order("id").Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			if len(paid) == 0 {
				break
			}
			p := paid[rnd.IntN(len(paid))]
			o, err := engine.LoadOrder(f.Ctx, db, p.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			if err := staff.Of(svc).RefundPayment(f.Ctx, treasurer, 1, o.ProcessInstanceID, p.Reference, "refunded in the property test"); err != nil {
				t.Fatalf("step %d: refund %s: %v", step, p.Reference, err)
			}
		case "confirm":
			// Members whose debit was returned confirm again on the pay
			// link: their orders are due for the next run.
			for _, m := range members {
				if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_due_on = ?", now.Load().(time.Time).AddDate(0, 0, 5)).
					Where("id = ? AND status = ?", m.Order.ID, engine.OrderUnpaid).Exec(f.Ctx); err != nil {
					t.Fatal(err)
				}
			}
		case "days":
			now.Store(now.Load().(time.Time).AddDate(0, 0, 1+rnd.IntN(20)))
		}
		findings, err := books.Check(f.Ctx, svc, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range findings {
			t.Errorf("step %d (%s): %s", step, action, fd)
		}
	}
	if n, err := books.CheckAll(f.Ctx, svc, now.Load().(time.Time)); err != nil || n != 0 {
		kept, _ := books.Findings(f.Ctx, db, 1)
		t.Fatalf("the nightly check after the sequence: %d findings (%v): %+v", n, err, kept)
	}
}
