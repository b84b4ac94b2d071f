package bankstatement_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
)

// TestSameTransferReportedByEveryFileIsCountedOnce is the treasurer's
// season: a household owes EUR 287.50 and pays a third. The bank reports
// that one transfer in the day's camt.054 (an entry without NtryRef), in a
// camt.052 intraday report, in the night's camt.053 as an entry of its
// own (with NtryRef and another entry reference) and in a camt.053 that
// books it in a batch with another household's transfer: it is captured
// once, EUR 95.83 so far, and the other household's transfer is captured.
// A second transfer with the same transaction-level AcctSvcrRef but
// another amount (real PostFinance files have them) is a transfer of its
// own.
func TestSameTransferReportedByEveryFileIsCountedOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		const owes, other = "RF48PRALPHA2345ALPHA234", "RF32PRBRAVO2345BRAVO234"
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"},
			banking.Expected{Reference: other, AmountMinor: 5000, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		third := enginetest.CamtTx{AcctSvcrRef: "TX-20270119-0042", EndToEnd: "E2E-MORGAN-1", Minor: 9583, RF: owes}
		otherTx := enginetest.CamtTx{AcctSvcrRef: "TX-20270119-0043", EndToEnd: "NOTPROVIDED", Minor: 5000, RF: other}
		paidSoFar := func() int64 {
			t.Helper()
			parts, err := payment.PartialCapturesByReference(f.Ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			return parts[owes+" EUR"]
		}
		imp := func(st banking.Statement) *bankstatement.StatementImport {
			t.Helper()
			rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range rep.Lines {
				if l.Err != nil {
					t.Fatalf("credit %s: %v", l.Credit.ID, l.Err)
				}
			}
			return rep
		}

		rep := imp(enginetest.CamtFile(t, "camt.054", "N-1", enginetest.CamtEntry{AcctSvcrRef: "N54-77", Txs: []enginetest.CamtTx{third}}))
		if len(rep.Lines) != 1 || rep.Lines[0].Outcome != banking.OutcomePartial || !rep.Lines[0].Captured || paidSoFar() != 9583 {
			t.Fatalf("the camt.054: %+v, %d so far", rep.Lines, paidSoFar())
		}
		for _, st := range []banking.Statement{
			enginetest.CamtFile(t, "camt.052", "R-1", enginetest.CamtEntry{AcctSvcrRef: "R52-5", Txs: []enginetest.CamtTx{third}}),
			enginetest.CamtFile(t, "camt.053", "S-1", enginetest.CamtEntry{NtryRef: "0001", AcctSvcrRef: "S53-1", Txs: []enginetest.CamtTx{third}}),
			enginetest.CamtFile(t, "camt.053", "S-2", enginetest.CamtEntry{NtryRef: "0007", AcctSvcrRef: "S53-B", Txs: []enginetest.CamtTx{otherTx, third}}),
		} {
			rep := imp(st)
			for _, l := range rep.Lines {
				if l.Credit.AmountMinor == third.Minor && l.Captured {
					t.Fatalf("%s %s captured the transfer again: %+v", st.Message, st.MessageID, l)
				}
			}
			if got := paidSoFar(); got != 9583 {
				t.Fatalf("after %s %s: EUR %s so far, want 95.83", st.Message, st.MessageID, engine.FormatAmount(got))
			}
		}
		if enginetest.OrderStatusOf(t, f, ps[1]) != engine.OrderPaid {
			t.Fatal("the other household's transfer in the batch was not captured")
		}
		// The same transaction-level AcctSvcrRef, another amount: a transfer of its own.
		again := third
		again.Minor = 1000
		rep = imp(enginetest.CamtFile(t, "camt.053", "S-3", enginetest.CamtEntry{NtryRef: "0009", AcctSvcrRef: "S53-9", Txs: []enginetest.CamtTx{again}}))
		if len(rep.Lines) != 1 || !rep.Lines[0].Captured || paidSoFar() != 10583 {
			t.Fatalf("another amount under the same reference: %+v, %d so far", rep.Lines, paidSoFar())
		}
		if enginetest.OrderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
			t.Fatal("the household that paid EUR 105.83 of 287.50 is marked paid")
		}
	})
}

// TestCreditImportedBeforeTransactionKeysIsNotCapturedAgain: a credit
// recorded before the upgrade, by the key of that time (which named the
// entry's references and the position), is found when the same statement
// is imported after it.
func TestCreditImportedBeforeTransactionKeysIsNotCapturedAgain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 1)
		const owes = "RF48PRALPHA2345ALPHA234"
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"})
		st := enginetest.CamtFile(t, "camt.053", "S-OLD", enginetest.CamtEntry{NtryRef: "0001", AcctSvcrRef: "S53-1",
			Txs: []enginetest.CamtTx{{AcctSvcrRef: "TX-1", EndToEnd: "E2E-1", Minor: 9583, RF: owes}}})
		c := st.Credits[0]
		if c.PreviousKey == "" || c.PreviousKey == c.Key {
			t.Fatalf("keys %q and %q", c.Key, c.PreviousKey)
		}
		// What the import before the upgrade recorded: the capture under
		// the bank credit's event id of that time.
		f.Capture(payment.Capture{Reference: owes, AmountMinor: 9583, Currency: "EUR", BookedOn: c.BookingDate,
			EventID: bankstatement.CreditEventID(0, enginetest.DemoIBAN, c.PreviousKey)})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		if rep.AlreadyImported != 1 || len(rep.Lines) != 0 {
			t.Fatalf("the statement imported before the upgrade: %d already, lines %+v", rep.AlreadyImported, rep.Lines)
		}
		parts, err := payment.PartialCapturesByReference(f.Ctx, db)
		if err != nil || parts[owes+" EUR"] != 9583 || enginetest.OrderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
			t.Fatalf("EUR %d so far (%v)", parts[owes+" EUR"], err)
		}
	})
}

// TestCreditRecordedBeforeKeysFromAnotherFileIsNotCountedAgain: before
// the upgrade the day's camt.054 (entries without NtryRef) was imported
// under the key of that time, which named the entry's references: one
// credit captured as a part payment, one kept unmatched. The migration
// bank_records_before_keys runs; then the night's camt.053 reports both
// transactions again, as entries of their own (with NtryRef) and in a
// batch: neither is captured or kept again, EUR 95.83 so far.
func TestCreditRecordedBeforeKeysFromAnotherFileIsNotCountedAgain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 1)
		const owes, unknown = "RF48PRALPHA2345ALPHA234", "RF71UNKNOWN2345UNKNOWN"
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		third := enginetest.CamtTx{AcctSvcrRef: "TX-20270119-0042", EndToEnd: "E2E-MORGAN-1", Minor: 9583, RF: owes}
		stranger := enginetest.CamtTx{AcctSvcrRef: "TX-20270119-0050", EndToEnd: "E2E-STRANGER", Minor: 4200, RF: unknown}
		day := enginetest.CamtFile(t, "camt.054", "N-OLD", enginetest.CamtEntry{AcctSvcrRef: "N54-77", Txs: []enginetest.CamtTx{third}},
			enginetest.CamtEntry{AcctSvcrRef: "N54-78", Txs: []enginetest.CamtTx{stranger}})
		// What the import before the upgrade recorded: the capture under
		// the credit's event id of that time and the note it wrote, and the
		// unknown credit kept under its key of that time.
		c := day.Credits[0]
		f.Capture(payment.Capture{Reference: owes, AmountMinor: c.AmountMinor, Currency: "EUR", BookedOn: c.BookingDate,
			Note: fmt.Sprintf("statement %s, credit %s from Morgan", day.MessageID, c.ID), EventID: bankstatement.CreditEventID(0, enginetest.DemoIBAN, c.PreviousKey)})
		k := day.Credits[1]
		booked := k.BookingDate
		if _, err := db.NewInsert().Model(&bankstatement.BankCredit{Account: enginetest.DemoIBAN, CreditID: k.ID, CreditKey: k.PreviousKey, StatementID: day.MessageID,
			AmountMinor: k.AmountMinor, Currency: "EUR", BookedOn: &booked, Reference: unknown, Reason: "unknown reference",
			State: bankstatement.CreditUnmatched, CreatedAt: time.Now()}).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		rerunMigration(t, db, "20270111000001_bank_records_before_keys")

		for _, st := range []banking.Statement{
			enginetest.CamtFile(t, "camt.053", "S-1", enginetest.CamtEntry{NtryRef: "0001", AcctSvcrRef: "S53-1", Txs: []enginetest.CamtTx{third}},
				enginetest.CamtEntry{NtryRef: "0002", AcctSvcrRef: "S53-2", Txs: []enginetest.CamtTx{stranger}}),
			enginetest.CamtFile(t, "camt.053", "S-2", enginetest.CamtEntry{NtryRef: "0007", AcctSvcrRef: "S53-B", Txs: []enginetest.CamtTx{stranger, third}}),
		} {
			rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
			if err != nil {
				t.Fatal(err)
			}
			if rep.AlreadyImported != 2 || len(rep.Lines) != 0 {
				t.Fatalf("%s: %d already imported, lines %+v", st.MessageID, rep.AlreadyImported, rep.Lines)
			}
		}
		parts, err := payment.PartialCapturesByReference(f.Ctx, db)
		if err != nil || parts[owes+" EUR"] != 9583 || enginetest.OrderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
			t.Fatalf("EUR %d so far (%v)", parts[owes+" EUR"], err)
		}
		if n, err := db.NewSelect().Model((*bankstatement.BankCredit)(nil)).Count(f.Ctx); err != nil || n != 1 {
			t.Fatalf("%d kept credits (%v), want the one kept before the upgrade", n, err)
		}
	})
}

// rerunMigration runs a migration's up SQL, as shipped, again: on records
// written after the schema was created, as an upgrade finds them. Only for
// migrations written to be re-run (IF NOT EXISTS, nothing added twice).
func rerunMigration(t *testing.T, db *bun.DB, name string) {
	t.Helper()
	folder := "sqlite"
	if db.Dialect().Name() == dialect.PG {
		folder = "postgres"
	}
	up, err := os.ReadFile(filepath.Join("..", "..", "migrations", folder, name+".tx.up.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), string(up)); err != nil {
		t.Fatalf("%s again: %v", name, err)
	}
}

// TestReturnReportedTwiceIsRecordedOnce: a return the portal cannot apply
// (its run was cancelled) reported in the day's camt.054 and again in the
// night's camt.053, there in a batch, is recorded once.
func TestReturnReportedTwiceIsRecordedOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 2, 200)
		m := f.CommitDebit("demo-1", "en")
		n := f.CommitDebit("demo-2", "en")
		f.Collect(payment.DebitCancelled, m, n)
		ret := enginetest.CamtTx{AcctSvcrRef: "RET-TX-1", EndToEnd: m.Debit.EndToEndID, Minor: m.Debit.AmountMinor, ReturnCode: "AC04"}
		otherRet := enginetest.CamtTx{AcctSvcrRef: "RET-TX-2", EndToEnd: n.Debit.EndToEndID, Minor: n.Debit.AmountMinor, ReturnCode: "MD06"}
		for _, st := range []banking.Statement{
			enginetest.CamtFile(t, "camt.054", "N-RET", enginetest.CamtEntry{AcctSvcrRef: "N54-R1", Txs: []enginetest.CamtTx{ret}}),
			enginetest.CamtFile(t, "camt.053", "S-RET", enginetest.CamtEntry{NtryRef: "0003", AcctSvcrRef: "S53-RB", Txs: []enginetest.CamtTx{ret, otherRet}}),
		} {
			if len(st.Returns) == 0 {
				t.Fatalf("%s: no returns read", st.MessageID)
			}
			f.ImportStatement(st, engine.StatementOptions{})
		}
		count := func(e2e string) int {
			n, err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Where("event_type = ?", directdebit.DebitReturnEvent).
				Where("reference IN (?)", db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").
					Where("id IN (?)", db.NewSelect().Model((*payment.Debit)(nil)).Column("payment_id").Where("end_to_end_id = ?", e2e))).Count(f.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		if got := count(m.Debit.EndToEndID); got != 1 {
			t.Errorf("the return reported in both files: %d records, want 1", got)
		}
		if got := count(n.Debit.EndToEndID); got != 1 {
			t.Errorf("the other return of the batch: %d records, want 1", got)
		}
	})
}

// TestImportedPartIsAuditedLikeAWhole: a statement a treasurer imports
// writes an audit entry for a part payment as it does for a whole one,
// once, however often the statement is imported.
func TestImportedPartIsAuditedLikeAWhole(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 2)
		const part, whole = "RF48PRALPHA2345ALPHA234", "RF32PRBRAVO2345BRAVO234"
		enginetest.OpenTransfers(t, f, banking.Expected{Reference: part, AmountMinor: 28750, Currency: "EUR"},
			banking.Expected{Reference: whole, AmountMinor: 5000, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		st := enginetest.CamtFile(t, "camt.053", "S-AUD", enginetest.CamtEntry{NtryRef: "1", AcctSvcrRef: "S-1", Txs: []enginetest.CamtTx{{AcctSvcrRef: "TX-A", EndToEnd: "E-A", Minor: 9583, RF: part}}},
			enginetest.CamtEntry{NtryRef: "2", AcctSvcrRef: "S-2", Txs: []enginetest.CamtTx{{AcctSvcrRef: "TX-B", EndToEnd: "E-B", Minor: 5000, RF: whole}}})
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		for range 2 {
			if _, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban, Actor: &treasurer}); err != nil {
				t.Fatal(err)
			}
		}
		var entries []engine.AuditRecord
		if err := db.NewSelect().Model(&entries).Where("action = ?", "payment.capture").Order("id").Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 {
			t.Fatalf("%d capture entries for a part and a whole payment imported twice, want 2", len(entries))
		}
		for _, e := range entries {
			if e.Actor != treasurer.Name {
				t.Errorf("entry by %q", e.Actor)
			}
		}
	})
}
