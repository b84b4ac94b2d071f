package directdebit_test

import (
	"context"
	"encoding/xml"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banking/schematest"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
)

// pain008 is what the run test reads back from a collection file.
type pain008 struct {
	GrpHdr struct {
		MsgID   string `xml:"MsgId"`
		NbOfTxs int    `xml:"NbOfTxs"`
		CtrlSum string `xml:"CtrlSum"`
	} `xml:"CstmrDrctDbtInitn>GrpHdr"`
	PmtInf []struct {
		SeqTp        string `xml:"PmtTpInf>SeqTp"`
		LclInstrm    string `xml:"PmtTpInf>LclInstrm>Cd"`
		ReqdColltnDt string `xml:"ReqdColltnDt"`
		CdtrSchmeID  string `xml:"CdtrSchmeId>Id>PrvtId>Othr>Id"`
		Tx           []struct {
			EndToEndID string `xml:"PmtId>EndToEndId"`
			Amount     string `xml:"InstdAmt"`
			MndtID     string `xml:"DrctDbtTx>MndtRltdInf>MndtId"`
			DtOfSgntr  string `xml:"DrctDbtTx>MndtRltdInf>DtOfSgntr"`
			DebtorIBAN string `xml:"DbtrAcct>Id>IBAN"`
		} `xml:"DrctDbtTxInf"`
	} `xml:"CstmrDrctDbtInitn>PmtInf"`
}

// TestCollectionRun: a direct-debit order with its mandate is due after
// the pre-notification period; a run before then finds nothing; a run
// gathers it into a pain.008 file whose counts, sums, sequence type and
// mandate data are the order's; it is in one live run only; the file
// downloads unchanged; a cancelled run frees it for the next; marking the
// run sent settles the payment (order paid, memberships active, the
// confirmation queued, the mandate used) once; another club's run is not
// found; a prepared run whose due date passed is marked sent by the job.
func TestCollectionRun(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		day := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
		var now atomic.Value
		now.Store(day)
		clock := func() time.Time { return now.Load().(time.Time) }
		f := enginetest.DirectDebitFixture(t, db, 0, engine.WithClock(clock))
		order := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		unsigned := f.CommitDirectDebit("demo-1", 5) // never gives its mandate
		id := order.ProcessInstanceID
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "DE02 1203 0000 0000 2020 51",
			Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		order = f.Orders(id)[0]
		if order.DebitDueOn == nil || order.DebitDueOn.Format(time.DateOnly) != "2027-03-15" {
			t.Fatalf("due date %v, want 2027-03-15 (14 days after 1 March 2027)", order.DebitDueOn)
		}
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		if _, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Until: day.AddDate(0, 0, 7), Actor: treasurer}); engine.ErrorCode(err) != engine.CodeConflict ||
			!errors.Is(err, directdebit.ErrNothingDue) {
			t.Fatalf("a run before the due date: %v, want a conflict (nothing due)", err)
		}
		run, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil {
			t.Fatal(err)
		}
		if run.DebitCount != 1 || run.TotalMinor != order.TotalMinor || run.Status != payment.DebitRunPrepared || run.FileVersion != "pain.008.001.08" {
			t.Fatalf("run %+v", run)
		}
		if msg := schematest.Validate(t, "pain.008.001.08.xsd", run.File); msg != "" {
			t.Fatalf("the run's file is not valid pain.008.001.08: %s\n%s", msg, run.File)
		}
		var doc pain008
		if err := xml.Unmarshal(run.File, &doc); err != nil {
			t.Fatal(err)
		}
		pay := f.Payments(id)[0]
		if doc.GrpHdr.NbOfTxs != 1 || doc.GrpHdr.CtrlSum != engine.FormatAmount(order.TotalMinor) || doc.GrpHdr.MsgID != run.MessageID ||
			len(doc.PmtInf) != 1 || len(doc.PmtInf[0].Tx) != 1 {
			t.Fatalf("file header %+v for order total %d:\n%s", doc.GrpHdr, order.TotalMinor, run.File)
		}
		pi, tx := doc.PmtInf[0], doc.PmtInf[0].Tx[0]
		if pi.SeqTp != "FRST" || pi.LclInstrm != "CORE" || pi.ReqdColltnDt != "2027-03-15" || pi.CdtrSchmeID != enginetest.TestCreditorID ||
			tx.MndtID != m.Reference || tx.DtOfSgntr != "2027-03-01" || tx.DebtorIBAN != "DE02120300000000202051" ||
			!strings.HasPrefix(tx.EndToEndID, pay.Reference) || tx.Amount != engine.FormatAmount(order.TotalMinor) {
			t.Fatalf("payment information %+v", pi)
		}
		if _, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a second run with the order in the first: %v, want nothing due", err)
		}
		detail, err := directdebit.Of(f.Svc).DebitRunByID(f.Ctx, 1, run.ID)
		if err != nil || string(detail.Run.File) != string(run.File) || len(detail.Debits) != 1 || detail.Debits[0].MandateReference != m.Reference {
			t.Fatalf("run again: %+v %v", detail, err)
		}
		if _, err := directdebit.Of(f.Svc).DebitRunByID(f.Ctx, 2, run.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another club's run: %v", err)
		}
		if _, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 2, run.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another club marks the run sent: %v", err)
		}

		// Cancelled: the order is due again, in a new file.
		if c, err := directdebit.Of(f.Svc).CancelDebitRun(f.Ctx, treasurer, 1, run.ID); err != nil || c.Status != payment.DebitRunCancelled {
			t.Fatalf("cancel: %+v %v", c, err)
		}
		if _, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a cancelled run marked sent: %v", err)
		}
		// Its file is handed out nowhere (the admin API, portal debits file).
		if _, err := directdebit.Of(f.Svc).DebitRunFile(f.Ctx, 1, run.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a cancelled run's file: %v", err)
		}
		if f.Orders(id)[0].Status != engine.OrderUnpaid {
			t.Fatal("the cancelled run paid the order")
		}
		run2, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil || run2.DebitCount != 1 || run2.MessageID == run.MessageID {
			t.Fatalf("second run: %+v %v", run2, err)
		}

		// The due date passes with the run prepared: the job marks it sent.
		now.Store(time.Date(2027, 3, 16, 8, 0, 0, 0, time.UTC))
		// Fifteen days on, the order waiting for its collection needs nobody;
		// the one whose mandate never came does.
		attention, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{OrganisationID: 1})
		if err != nil || len(attention) != 1 || attention[0].Order.ID != unsigned.ID || attention[0].Reason != staff.AttentionPendingTooLong {
			t.Fatalf("payments needing attention: %+v %v", attention, err)
		}
		if n, err := directdebit.Of(f.Svc).SettleDueDebitRuns(engine.WithOrganisation(f.Ctx, 2)); err != nil || n != 0 {
			t.Fatalf("the job for another club: %d %v", n, err)
		}
		if f.Orders(id)[0].Status != engine.OrderUnpaid {
			t.Fatal("the job for another club paid the order")
		}
		if n, err := directdebit.Of(f.Svc).SettleDueDebitRuns(f.Ctx); err != nil || n != 1 {
			t.Fatalf("the job: %d %v", n, err)
		}
		sent, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run2.ID)
		if err != nil || sent.Run.Status != payment.DebitRunSent || sent.Settled != 0 {
			t.Fatalf("marking the sent run again: %+v %v", sent, err)
		}
		if o := f.Orders(id)[0]; o.Status != engine.OrderPaid {
			t.Fatalf("order after the run was sent: %s", o.Status)
		}
		for _, ms := range f.Memberships(id) {
			if ms.Status != engine.MembershipActive {
				t.Fatalf("membership %d is %s", ms.ID, ms.Status)
			}
		}
		var mandate directdebit.DebitMandate
		if err := db.NewSelect().Model(&mandate).Where("id = ?", m.ID).Scan(f.Ctx); err != nil || mandate.LastCollectedAt == nil {
			t.Fatalf("mandate after collection: %+v %v", mandate, err)
		}
		if n, err := db.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", payment.KindConfirmation).Count(f.Ctx); err != nil || n != 1 {
			t.Fatalf("confirmations: %d %v", n, err)
		}
		if _, err := directdebit.Of(f.Svc).CancelDebitRun(f.Ctx, treasurer, 1, run2.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("cancelling a sent run: %v", err)
		}
		var audited []string
		if err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Column("action").Where("target_type = 'debit_run'").Order("id").Scan(f.Ctx, &audited); err != nil {
			t.Fatal(err)
		}
		if strings.Join(audited, " ") != "debit_run.create debit_run.cancel debit_run.create debit_run.send" {
			t.Fatalf("audit: %v", audited)
		}
	})
}

// TestAmendmentStatedOnce: a changed account is stated in the next file
// (the original IBAN), and cleared once that file is sent; a change made
// after the file was written stays for the next one.
func TestAmendmentStatedOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		var now atomic.Value
		now.Store(time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC))
		f := enginetest.DirectDebitFixture(t, db, 0, engine.WithClock(func() time.Time { return now.Load().(time.Time) }))
		first := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, first.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, Consent: true})
		if err != nil {
			t.Fatal(err)
		}
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		run, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run.ID); err != nil {
			t.Fatal(err)
		}

		// Next season: the account changes, then the run is written.
		second := nextOrder(t, f, first, "NEXTSEASON-A")
		if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, second.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: otherIBAN, Consent: true}); err != nil {
			t.Fatal(err)
		}
		now.Store(time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC))
		run2, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Until: time.Date(2027, 4, 30, 0, 0, 0, 0, time.UTC), Actor: treasurer})
		if err != nil {
			t.Fatal(err)
		}
		var doc pain008
		if err := xml.Unmarshal(run2.File, &doc); err != nil || len(doc.PmtInf) != 1 || doc.PmtInf[0].SeqTp != "RCUR" {
			t.Fatalf("second file: %v\n%s", err, run2.File)
		}
		if !strings.Contains(string(run2.File), "<AmdmntInd>true</AmdmntInd>") || !strings.Contains(string(run2.File), enginetest.DemoIBAN) && !strings.Contains(string(run2.File), "SMNDA") {
			t.Fatalf("the amendment is not stated:\n%s", run2.File)
		}
		// Changed again before the file is sent: that change is still to state.
		now.Store(time.Date(2027, 3, 3, 9, 0, 0, 0, time.UTC))
		third := nextOrder(t, f, first, "NEXTSEASON-B")
		if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, third.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: "FR76 3000 6000 0112 3456 7890 189", Consent: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run2.ID); err != nil {
			t.Fatal(err)
		}
		if got := loadMandate(t, f, m.ID); got.PreviousIBAN == "" {
			t.Fatalf("the change made after the file was written was cleared: %+v", got)
		}
		run3, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Until: time.Date(2027, 4, 30, 0, 0, 0, 0, time.UTC), Actor: treasurer})
		if err != nil || !strings.Contains(string(run3.File), "<AmdmntInd>true</AmdmntInd>") {
			t.Fatalf("third file (%v):\n%s", err, run3.File)
		}
		if _, err := directdebit.Of(f.Svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run3.ID); err != nil {
			t.Fatal(err)
		}
		if got := loadMandate(t, f, m.ID); got.PreviousIBAN != "" || got.IBAN != "FR7630006000011234567890189" {
			t.Fatalf("after the third file was sent: %+v", got)
		}
	})
}

// TestSentRunSettlesInBatches: a run of more debits than one batch
// settles them all; a run whose settling stopped after it was marked sent
// (an instance stopped between batches) is finished by the debits.settle
// job, each debit once.
func TestSentRunSettlesInBatches(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		enginetest.SeedSeason(t, db, 1300) // about 216 unpaid orders: three batches
		svc, _ := enginetest.DirectDebitClub(t, db)
		n := seedDirectDebits(t, db)
		actor := engine.Actor{Name: "treasurer@example.org"}
		run, err := directdebit.Of(svc).CollectDebits(ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: actor})
		if err != nil || run.DebitCount != n || n <= 200 {
			t.Fatalf("run of %d debits of %d (%v)", run.DebitCount, n, err)
		}
		// Sent, then stopped before any debit settled.
		if _, err := db.NewUpdate().Model((*payment.DebitRun)(nil)).Set("status = ?", payment.DebitRunSent).Set("sent_at = ?", clock.Now().UTC()).
			Where("id = ?", run.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := directdebit.Of(svc).SettleDueDebitRuns(ctx); err != nil {
			t.Fatal(err)
		}
		paid, err := db.NewSelect().Model((*engine.Order)(nil)).Where("payment_method = ? AND status = ?", payment.DirectDebitProvider, engine.OrderPaid).Count(ctx)
		if err != nil || paid != int64(n) {
			t.Fatalf("%d of %d orders paid (%v)", paid, n, err)
		}
		again, err := directdebit.Of(svc).MarkDebitRunSent(ctx, actor, 1, run.ID)
		if err != nil || again.Settled != 0 || again.Run.Status != payment.DebitRunSent {
			t.Fatalf("marking the finished run again: %+v %v", again, err)
		}
		if c, err := db.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", payment.KindConfirmation).Count(ctx); err != nil || c != int64(n) {
			t.Fatalf("%d confirmations for %d orders (%v)", c, n, err)
		}
	})
}

// TestCollectionFileVersion02: a club whose bank still asks for
// pain.008.001.02 gets its runs in that version, valid against its schema.
func TestCollectionFileVersion02(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 0)
		v02 := "pain.008.001.02"
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{DebitFileVersion: &v02}); err != nil {
			t.Fatal(err)
		}
		order := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		if _, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, Consent: true}); err != nil {
			t.Fatal(err)
		}
		run, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: engine.CommandLine})
		if err != nil || run.FileVersion != v02 || !strings.Contains(string(run.File), "urn:iso:std:iso:20022:tech:xsd:pain.008.001.02") {
			t.Fatalf("run %+v (%v)", run, err)
		}
		if msg := schematest.Validate(t, "pain.008.001.02.xsd", run.File); msg != "" {
			t.Fatalf("not valid pain.008.001.02: %s\n%s", msg, run.File)
		}
	})
}

// TestCollectionWithoutDateTakesTodaysMandate: a mandate given today falls
// due on a TARGET business day, and a run prepared today without a date
// takes it, whatever day today is (make test-calendar runs this on a
// Saturday, a Sunday, 24 and 31 December, the day before Good Friday and
// 29 February): on Sunday 6 December 2026 the debit falls due on Monday
// the 21st, a day after today + 14, and the run says it took debits due
// up to that Monday.
func TestCollectionWithoutDateTakesTodaysMandate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 0)
		order := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		if _, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, Consent: true}); err != nil {
			t.Fatal(err)
		}
		order = f.Orders(order.ProcessInstanceID)[0]
		today := f.Svc.Clock()
		if order.DebitDueOn == nil || !banking.IsTARGETBusinessDay(*order.DebitDueOn) || order.DebitDueOn.Before(payment.DateOf(today).AddDate(0, 0, payment.DefaultPrenotificationDays)) {
			t.Fatalf("a mandate given on %s falls due on %v", today.Format(time.DateOnly), order.DebitDueOn)
		}
		run, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: engine.CommandLine})
		if err != nil {
			t.Fatalf("a run prepared on %s (%s) without a date, the debit due on %s: %v", today.Format(time.DateOnly), today.Weekday(), order.DebitDueOn.Format(time.DateOnly), err)
		}
		if run.DebitCount != 1 || !run.UntilOn.Equal(directdebit.DefaultCollectionUntil(today)) || run.UntilOn.Before(*order.DebitDueOn) {
			t.Fatalf("run %d debits until %s, the debit due on %s", run.DebitCount, run.UntilOn.Format(time.DateOnly), order.DebitDueOn.Format(time.DateOnly))
		}
	})
}

// TestCollectionLeavesOutBadDebit: one mandate that cannot go into a
// collection file (an account in Switzerland without its bank's BIC, given
// before the form asked for it) never blocks the club's collection: the
// run writes the others into a valid file and leaves that one out, named
// with why in the run's result and on the run, and listed among the
// payments needing attention; a run in which nothing can go is refused
// (no run) and the debit stays listed; once the member gives the BIC the
// next run takes it and nothing needs attention.
func TestCollectionLeavesOutBadDebit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		day := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
		var now atomic.Value
		now.Store(day)
		f := enginetest.DirectDebitFixture(t, db, 0, engine.WithClock(func() time.Time { return now.Load().(time.Time) }))
		good := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		bad := f.CommitDirectDebit("demo-1", 5)
		if _, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, good.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN,
			Consent: true, Language: "en"}); err != nil {
			t.Fatal(err)
		}
		swiss, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, bad.PayReference, directdebit.MandateInput{Holder: "Kim Keller", IBAN: "CH9300762011623852957",
			BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		// Given before the form asked for the BIC of an account outside the EEA.
		if _, err := db.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("bic = ''").Where("id = ?", swiss.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		run, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil {
			t.Fatalf("one mandate without its BIC blocked the run: %v", err)
		}
		good = f.Orders(good.ProcessInstanceID)[0]
		if run.DebitCount != 1 || run.TotalMinor != good.TotalMinor || strings.Contains(string(run.File), "CH9300762011623852957") {
			t.Fatalf("run %d debits, %d cents, want the good order's alone:\n%s", run.DebitCount, run.TotalMinor, run.File)
		}
		if msg := schematest.Validate(t, "pain.008.001.08.xsd", run.File); msg != "" {
			t.Fatalf("the run's file is not valid: %s\n%s", msg, run.File)
		}
		if len(run.LeftOut) != 1 || run.LeftOut[0].OrderReference != bad.PayReference || run.LeftOut[0].MandateReference != swiss.Reference ||
			!strings.Contains(run.LeftOut[0].Problem, "BIC") || !strings.Contains(run.LeftOut[0].Problem, "CH") || strings.Contains(run.LeftOut[0].Problem, "CH9300762011623852957") {
			t.Fatalf("left out %+v, want the Swiss mandate's order with why (its IBAN masked)", run.LeftOut)
		}
		detail, err := directdebit.Of(f.Svc).DebitRunByID(f.Ctx, 1, run.ID)
		if err != nil || len(detail.Debits) != 1 || len(detail.LeftOut) != 1 || detail.LeftOut[0].Problem != run.LeftOut[0].Problem || detail.LeftOut[0].Holder != "Kim Keller" {
			t.Fatalf("the run again: %+v %v", detail, err)
		}
		attention := func() []staff.AttentionPayment {
			t.Helper()
			list, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{OrganisationID: 1})
			if err != nil {
				t.Fatal(err)
			}
			return list
		}
		if a := attention(); len(a) != 1 || a[0].Order.ID != bad.ID || a[0].Reason != staff.AttentionDebitLeftOut || a[0].Order.DebitProblem != run.LeftOut[0].Problem ||
			a[0].Payment.Provider != payment.DirectDebitProvider {
			t.Fatalf("payments needing attention: %+v", a)
		}
		if n, err := staff.Of(f.Svc).CountPaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{OrganisationID: 1}, 0); err != nil || n != 1 {
			t.Fatalf("counted %d (%v), want 1", n, err)
		}

		// Only the Swiss debit is due now: no run, said as such, still listed.
		now.Store(day.AddDate(0, 0, 1))
		if again, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer}); engine.ErrorCode(err) != engine.CodeConflict ||
			!errors.Is(err, directdebit.ErrNoneCollectable) || !strings.Contains(err.Error(), bad.PayReference) || again != nil {
			t.Fatalf("a run of the Swiss debit alone: %+v %v, want a conflict naming it", again, err)
		}
		if runs, err := directdebit.Of(f.Svc).DebitRuns(f.Ctx, 1); err != nil || len(runs) != 1 {
			t.Fatalf("runs: %d %v, want the first alone", len(runs), err)
		}
		if a := attention(); len(a) != 1 || a[0].Reason != staff.AttentionDebitLeftOut {
			t.Fatalf("payments needing attention after the refused run: %+v", a)
		}

		// The member gives the BIC: the next run takes the debit.
		if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, bad.PayReference, swiss.ID, directdebit.MandateInput{Holder: "Kim Keller",
			IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A", Consent: true, Language: "en"}); err != nil {
			t.Fatal(err)
		}
		if a := attention(); len(a) != 0 {
			t.Fatalf("payments needing attention after the BIC was given: %+v", a)
		}
		run2, err := directdebit.Of(f.Svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil || run2.DebitCount != 1 || len(run2.LeftOut) != 0 || !strings.Contains(string(run2.File), "UBSWCHZH80A") {
			t.Fatalf("the run after the BIC was given: %+v %v", run2, err)
		}
		if detail, err := directdebit.Of(f.Svc).DebitRunByID(f.Ctx, 1, run.ID); err != nil || len(detail.LeftOut) != 0 {
			t.Fatalf("the first run still names the debit another run took: %+v %v", detail, err)
		}
		var audited []string
		if err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Column("action").Where("action LIKE 'debit_run.%'").Order("id").Scan(f.Ctx, &audited); err != nil {
			t.Fatal(err)
		}
		if strings.Join(audited, " ") != "debit_run.create debit_run.none_collectable debit_run.create" {
			t.Fatalf("audit: %v", audited)
		}
	})
}
