package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/payment"
)

// camtTx is one transaction of a test bank file: its own references, the
// amount, the direction and the creditor reference (or the return reason).
type camtTx struct {
	acctSvcrRef, endToEnd string
	minor                 int64
	rf                    string
	returnCode            string // a returned direct debit (DBIT, reversal) with this reason
}

// camtEntry is one entry: its own references (which differ between the
// files that report the same transaction) and one transaction, or a batch.
type camtEntry struct {
	ntryRef, acctSvcrRef string
	txs                  []camtTx
}

// camtFile writes a camt.052, camt.053 or camt.054 (version 08) of the
// demo account with the entries as PostFinance and the Nordic banks shape
// them: a notification's entries without NtryRef, a statement's with, a
// batch as one entry with a TxDtls per transaction.
func camtFile(t *testing.T, message, msgID string, entries ...camtEntry) banking.Statement {
	t.Helper()
	root, report := map[string][2]string{
		"camt.052": {"BkToCstmrAcctRpt", "Rpt"}, "camt.053": {"BkToCstmrStmt", "Stmt"}, "camt.054": {"BkToCstmrDbtCdtNtfctn", "Ntfctn"},
	}[message][0], map[string]string{"camt.052": "Rpt", "camt.053": "Stmt", "camt.054": "Ntfctn"}[message]
	amount := func(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:%[1]s.001.08"><%[2]s>
<GrpHdr><MsgId>%[3]s</MsgId><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm></GrpHdr>
<%[4]s><Id>%[3]s</Id><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm><Acct><Id><IBAN>%[5]s</IBAN></Id><Ccy>EUR</Ccy></Acct>`, message, root, msgID, report, demoIBAN)
	for _, e := range entries {
		var total int64
		for _, tx := range e.txs {
			total += tx.minor
		}
		ind, rvsl, code := "CRDT", "", "<Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn>"
		if e.txs[0].returnCode != "" {
			ind, rvsl, code = "DBIT", "<RvslInd>true</RvslInd>", "<Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn>"
		}
		fmt.Fprintf(&b, `<Ntry>`)
		if e.ntryRef != "" {
			fmt.Fprintf(&b, `<NtryRef>%s</NtryRef>`, e.ntryRef)
		}
		fmt.Fprintf(&b, `<Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>%s<Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2027-01-19</Dt></BookgDt><ValDt><Dt>2027-01-19</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef><BkTxCd>%s</BkTxCd><NtryDtls>`,
			amount(total), ind, rvsl, e.acctSvcrRef, code)
		if len(e.txs) > 1 {
			fmt.Fprintf(&b, `<Btch><NbOfTxs>%d</NbOfTxs></Btch>`, len(e.txs))
		}
		for _, tx := range e.txs {
			fmt.Fprintf(&b, `<TxDtls><Refs><AcctSvcrRef>%s</AcctSvcrRef><EndToEndId>%s</EndToEndId></Refs><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>`,
				tx.acctSvcrRef, tx.endToEnd, amount(tx.minor), ind)
			if tx.returnCode != "" {
				fmt.Fprintf(&b, `<RtrInf><Rsn><Cd>%s</Cd></Rsn></RtrInf>`, tx.returnCode)
			} else {
				fmt.Fprintf(&b, `<RmtInf><Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>%s</Ref></CdtrRefInf></Strd></RmtInf>`, tx.rf)
			}
			b.WriteString(`</TxDtls>`)
		}
		b.WriteString(`</NtryDtls></Ntry>`)
	}
	fmt.Fprintf(&b, `</%s></%s></Document>`, report, root)
	st, err := banking.ParseStatement(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("parse the test file: %v\n%s", err, b.String())
	}
	return st
}

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
		f := bankFixture(t, db, 2)
		const owes, other = "RF48PRALPHA2345ALPHA234", "RF32PRBRAVO2345BRAVO234"
		ps := openTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"},
			banking.Expected{Reference: other, AmountMinor: 5000, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(demoIBAN)
		third := camtTx{acctSvcrRef: "TX-20270119-0042", endToEnd: "E2E-MORGAN-1", minor: 9583, rf: owes}
		otherTx := camtTx{acctSvcrRef: "TX-20270119-0043", endToEnd: "NOTPROVIDED", minor: 5000, rf: other}
		paidSoFar := func() int64 {
			t.Helper()
			parts, err := payment.PartialCapturesByReference(f.ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			return parts[owes+" EUR"]
		}
		imp := func(st banking.Statement) *bankstatement.StatementImport {
			t.Helper()
			rep, err := bankstatement.Of(f.svc).ImportStatement(f.ctx, st, engine.StatementOptions{Account: iban})
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

		rep := imp(camtFile(t, "camt.054", "N-1", camtEntry{acctSvcrRef: "N54-77", txs: []camtTx{third}}))
		if len(rep.Lines) != 1 || rep.Lines[0].Outcome != banking.OutcomePartial || !rep.Lines[0].Captured || paidSoFar() != 9583 {
			t.Fatalf("the camt.054: %+v, %d so far", rep.Lines, paidSoFar())
		}
		for _, st := range []banking.Statement{
			camtFile(t, "camt.052", "R-1", camtEntry{acctSvcrRef: "R52-5", txs: []camtTx{third}}),
			camtFile(t, "camt.053", "S-1", camtEntry{ntryRef: "0001", acctSvcrRef: "S53-1", txs: []camtTx{third}}),
			camtFile(t, "camt.053", "S-2", camtEntry{ntryRef: "0007", acctSvcrRef: "S53-B", txs: []camtTx{otherTx, third}}),
		} {
			rep := imp(st)
			for _, l := range rep.Lines {
				if l.Credit.AmountMinor == third.minor && l.Captured {
					t.Fatalf("%s %s captured the transfer again: %+v", st.Message, st.MessageID, l)
				}
			}
			if got := paidSoFar(); got != 9583 {
				t.Fatalf("after %s %s: EUR %s so far, want 95.83", st.Message, st.MessageID, engine.FormatAmount(got))
			}
		}
		if orderStatusOf(t, f, ps[1]) != engine.OrderPaid {
			t.Fatal("the other household's transfer in the batch was not captured")
		}
		// The same transaction-level AcctSvcrRef, another amount: a transfer of its own.
		again := third
		again.minor = 1000
		rep = imp(camtFile(t, "camt.053", "S-3", camtEntry{ntryRef: "0009", acctSvcrRef: "S53-9", txs: []camtTx{again}}))
		if len(rep.Lines) != 1 || !rep.Lines[0].Captured || paidSoFar() != 10583 {
			t.Fatalf("another amount under the same reference: %+v, %d so far", rep.Lines, paidSoFar())
		}
		if orderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
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
		f := bankFixture(t, db, 1)
		const owes = "RF48PRALPHA2345ALPHA234"
		ps := openTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"})
		st := camtFile(t, "camt.053", "S-OLD", camtEntry{ntryRef: "0001", acctSvcrRef: "S53-1",
			txs: []camtTx{{acctSvcrRef: "TX-1", endToEnd: "E2E-1", minor: 9583, rf: owes}}})
		c := st.Credits[0]
		if c.PreviousKey == "" || c.PreviousKey == c.Key {
			t.Fatalf("keys %q and %q", c.Key, c.PreviousKey)
		}
		// What the import before the upgrade recorded: the capture under
		// the bank credit's event id of that time.
		f.capture(payment.Capture{Reference: owes, AmountMinor: 9583, Currency: "EUR", BookedOn: c.BookingDate,
			EventID: bankstatement.CreditEventID(0, demoIBAN, c.PreviousKey)})
		iban, _ := banking.ParseIBAN(demoIBAN)
		rep, err := bankstatement.Of(f.svc).ImportStatement(f.ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		if rep.AlreadyImported != 1 || len(rep.Lines) != 0 {
			t.Fatalf("the statement imported before the upgrade: %d already, lines %+v", rep.AlreadyImported, rep.Lines)
		}
		parts, err := payment.PartialCapturesByReference(f.ctx, db)
		if err != nil || parts[owes+" EUR"] != 9583 || orderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
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
		f := bankFixture(t, db, 1)
		const owes, unknown = "RF48PRALPHA2345ALPHA234", "RF71UNKNOWN2345UNKNOWN"
		ps := openTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(demoIBAN)
		third := camtTx{acctSvcrRef: "TX-20270119-0042", endToEnd: "E2E-MORGAN-1", minor: 9583, rf: owes}
		stranger := camtTx{acctSvcrRef: "TX-20270119-0050", endToEnd: "E2E-STRANGER", minor: 4200, rf: unknown}
		day := camtFile(t, "camt.054", "N-OLD", camtEntry{acctSvcrRef: "N54-77", txs: []camtTx{third}},
			camtEntry{acctSvcrRef: "N54-78", txs: []camtTx{stranger}})
		// What the import before the upgrade recorded: the capture under
		// the credit's event id of that time and the note it wrote, and the
		// unknown credit kept under its key of that time.
		c := day.Credits[0]
		f.capture(payment.Capture{Reference: owes, AmountMinor: c.AmountMinor, Currency: "EUR", BookedOn: c.BookingDate,
			Note: fmt.Sprintf("statement %s, credit %s from Morgan", day.MessageID, c.ID), EventID: bankstatement.CreditEventID(0, demoIBAN, c.PreviousKey)})
		k := day.Credits[1]
		booked := k.BookingDate
		if _, err := db.NewInsert().Model(&bankstatement.BankCredit{Account: demoIBAN, CreditID: k.ID, CreditKey: k.PreviousKey, StatementID: day.MessageID,
			AmountMinor: k.AmountMinor, Currency: "EUR", BookedOn: &booked, Reference: unknown, Reason: "unknown reference",
			State: bankstatement.CreditUnmatched, CreatedAt: time.Now()}).Exec(f.ctx); err != nil {
			t.Fatal(err)
		}
		rerunMigration(t, db, "20270111000001_bank_records_before_keys")

		for _, st := range []banking.Statement{
			camtFile(t, "camt.053", "S-1", camtEntry{ntryRef: "0001", acctSvcrRef: "S53-1", txs: []camtTx{third}},
				camtEntry{ntryRef: "0002", acctSvcrRef: "S53-2", txs: []camtTx{stranger}}),
			camtFile(t, "camt.053", "S-2", camtEntry{ntryRef: "0007", acctSvcrRef: "S53-B", txs: []camtTx{stranger, third}}),
		} {
			rep, err := bankstatement.Of(f.svc).ImportStatement(f.ctx, st, engine.StatementOptions{Account: iban})
			if err != nil {
				t.Fatal(err)
			}
			if rep.AlreadyImported != 2 || len(rep.Lines) != 0 {
				t.Fatalf("%s: %d already imported, lines %+v", st.MessageID, rep.AlreadyImported, rep.Lines)
			}
		}
		parts, err := payment.PartialCapturesByReference(f.ctx, db)
		if err != nil || parts[owes+" EUR"] != 9583 || orderStatusOf(t, f, ps[0]) != engine.OrderUnpaid {
			t.Fatalf("EUR %d so far (%v)", parts[owes+" EUR"], err)
		}
		if n, err := db.NewSelect().Model((*bankstatement.BankCredit)(nil)).Count(f.ctx); err != nil || n != 1 {
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
	up, err := os.ReadFile(filepath.Join("..", "migrations", folder, name+".tx.up.sql"))
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
		f := newDebitFixture(t, db, 2, 200)
		m := f.commitDebit("demo-1", "en")
		n := f.commitDebit("demo-2", "en")
		f.collect(payment.DebitCancelled, m, n)
		ret := camtTx{acctSvcrRef: "RET-TX-1", endToEnd: m.debit.EndToEndID, minor: m.debit.AmountMinor, returnCode: "AC04"}
		otherRet := camtTx{acctSvcrRef: "RET-TX-2", endToEnd: n.debit.EndToEndID, minor: n.debit.AmountMinor, returnCode: "MD06"}
		for _, st := range []banking.Statement{
			camtFile(t, "camt.054", "N-RET", camtEntry{acctSvcrRef: "N54-R1", txs: []camtTx{ret}}),
			camtFile(t, "camt.053", "S-RET", camtEntry{ntryRef: "0003", acctSvcrRef: "S53-RB", txs: []camtTx{ret, otherRet}}),
		} {
			if len(st.Returns) == 0 {
				t.Fatalf("%s: no returns read", st.MessageID)
			}
			f.importStatement(st, engine.StatementOptions{})
		}
		count := func(e2e string) int {
			n, err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Where("event_type = ?", directdebit.DebitReturnEvent).
				Where("reference IN (?)", db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").
					Where("id IN (?)", db.NewSelect().Model((*payment.Debit)(nil)).Column("payment_id").Where("end_to_end_id = ?", e2e))).Count(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		if got := count(m.debit.EndToEndID); got != 1 {
			t.Errorf("the return reported in both files: %d records, want 1", got)
		}
		if got := count(n.debit.EndToEndID); got != 1 {
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
		f := bankFixture(t, db, 2)
		const part, whole = "RF48PRALPHA2345ALPHA234", "RF32PRBRAVO2345BRAVO234"
		openTransfers(t, f, banking.Expected{Reference: part, AmountMinor: 28750, Currency: "EUR"},
			banking.Expected{Reference: whole, AmountMinor: 5000, Currency: "EUR"})
		iban, _ := banking.ParseIBAN(demoIBAN)
		st := camtFile(t, "camt.053", "S-AUD", camtEntry{ntryRef: "1", acctSvcrRef: "S-1", txs: []camtTx{{acctSvcrRef: "TX-A", endToEnd: "E-A", minor: 9583, rf: part}}},
			camtEntry{ntryRef: "2", acctSvcrRef: "S-2", txs: []camtTx{{acctSvcrRef: "TX-B", endToEnd: "E-B", minor: 5000, rf: whole}}})
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		for range 2 {
			if _, err := bankstatement.Of(f.svc).ImportStatement(f.ctx, st, engine.StatementOptions{Account: iban, Actor: &treasurer}); err != nil {
				t.Fatal(err)
			}
		}
		var entries []engine.AuditRecord
		if err := db.NewSelect().Model(&entries).Where("action = ?", "payment.capture").Order("id").Scan(f.ctx); err != nil {
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
