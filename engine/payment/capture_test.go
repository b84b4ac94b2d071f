package payment_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/staff"
)

// TestBankTransferCommitAndCapture: the commit opens a pending attempt
// with the order's RF reference and no expiry; a partial capture is
// recorded as a problem and completes nothing; after the member follows
// the pay link again, the exact amount completes the registration as an
// online payment does, once, however often the capture is repeated.
func TestBankTransferCommitAndCapture(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		form := r.Commit()
		orderRef := f.OrderRefOf(form.PaymentURL)
		ps := f.Payments(r.ID)
		if len(ps) != 1 {
			t.Fatalf("%d attempts after the commit, want 1", len(ps))
		}
		p := ps[0]
		rf, err := banking.CreditorReference(orderRef)
		if err != nil {
			t.Fatal(err)
		}
		if p.Provider != "bank_transfer" || p.Status != engine.PaymentPending || enginetest.Deref(p.ProviderID) != string(rf) || p.ExpiresAt != nil {
			t.Fatalf("attempt %+v: want pending bank_transfer with provider id %s and no expiry", p, rf)
		}
		total := p.AmountMinor
		// Loading the registration (which reconciles pending attempts)
		// leaves a bank transfer alone.
		if _, err := payment.Of(f.Svc).ReconcilePayments(f.Ctx, 0, 10); err != nil {
			t.Fatal(err)
		}
		if got := f.Payments(r.ID)[0].Status; got != engine.PaymentPending {
			t.Fatalf("after reconciliation: %s", got)
		}

		// Nonsense is refused and changes nothing.
		before := f.State()
		_, err = payment.Of(f.Svc).CapturePayment(f.Ctx, payment.Capture{Reference: "RF00" + string(rf)[4:], AmountMinor: total})
		enginetest.WantCode(t, err, engine.CodeInvalid)
		_, err = payment.Of(f.Svc).CapturePayment(f.Ctx, payment.Capture{Reference: string(rf), AmountMinor: 0})
		enginetest.WantCode(t, err, engine.CodeInvalid)
		other, _ := banking.CreditorReference("PO-NOTANORDER")
		_, err = payment.Of(f.Svc).CapturePayment(f.Ctx, payment.Capture{Reference: string(other), AmountMinor: total})
		enginetest.WantCode(t, err, engine.CodeNotFound)
		enginetest.AssertUnchanged(t, before, f.State())

		// Partial: recorded, the payment stays open for the rest.
		booked := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		res := f.Capture(payment.Capture{Reference: strings.ToLower(rf.String()), AmountMinor: total - 1000, BookedOn: booked, Note: "first half"})
		if res.Problem != "partial" || !res.Partial || res.CapturedMinor != total-1000 || res.Outcome == engine.OutcomeSuccess {
			t.Fatalf("partial capture: %+v", res)
		}
		p = f.Payments(r.ID)[0]
		if p.Problem != "" || p.Status != engine.PaymentPending {
			t.Fatalf("after a partial capture the attempt is %s with problem %q; want open for the rest", p.Status, p.Problem)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateDone {
			t.Fatalf("instance %s after a partial capture", inst.Status)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = 'membership_confirmation'"); n != 0 {
			t.Fatalf("%d confirmations after a partial capture", n)
		}
		var ev engine.PaymentEvent
		if err := db.NewSelect().Model(&ev).Where("event_id = ?", fmt.Sprintf("manual:%s:2026-11-20:EUR %s", rf, engine.FormatAmount(total-1000))).Scan(f.Ctx); err != nil {
			t.Fatalf("capture event: %v", err)
		}
		if !strings.Contains(ev.Note, "booked 2026-11-20; first half") || ev.Outcome != "partial" {
			t.Fatalf("event %q note %q", ev.Outcome, ev.Note)
		}
		// The same capture again adds nothing.
		if res := f.Capture(payment.Capture{Reference: string(rf), AmountMinor: total - 1000, BookedOn: booked}); !res.Replayed || res.CapturedMinor != total-1000 {
			t.Fatalf("repeated partial capture: %+v", res)
		}

		// The pay link still shows the open attempt with the same reference.
		again, err := payment.Of(f.Svc).FollowPayLink(f.Ctx, orderRef)
		if err != nil {
			t.Fatal(err)
		}
		if enginetest.Deref(again.ProviderID) != string(rf) || again.Status != engine.PaymentPending || again.ID != p.ID {
			t.Fatalf("attempt after a partial payment %+v", again)
		}

		// The rest, by the order's reference: the two parts complete the
		// registration as an online payment.
		res = f.Capture(payment.Capture{Reference: orderRef, AmountMinor: 1000, Currency: "eur", BookedOn: booked, ID: "credit-1"})
		if res.Problem != "" || res.Mismatch || res.Replayed || res.Outcome != engine.OutcomeSuccess || res.CapturedMinor != total {
			t.Fatalf("capture of the rest: %+v", res)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Fatalf("instance %s after the capture", inst.Status)
		}
		for _, m := range f.Memberships(r.ID) {
			if m.Status != engine.MembershipActive {
				t.Fatalf("membership %d is %s", m.ID, m.Status)
			}
		}
		if o := f.Orders(r.ID)[0]; o.Status != engine.OrderPaid {
			t.Fatalf("order %s", o.Status)
		}
		// Again with the same id: nothing changes.
		before = f.State()
		if res = f.Capture(payment.Capture{Reference: string(rf), AmountMinor: 1000, Currency: "EUR", BookedOn: booked, ID: "credit-1"}); !res.Replayed || res.SecondCredit || res.Stale {
			t.Fatalf("repeated capture: %+v", res)
		}
		enginetest.AssertUnchanged(t, before, f.State())

		// Another credit for the paid order (the member paid twice): a
		// payment of its own, owed back by hand and listed for staff;
		// the registration stays as it is. The same capture again (the
		// staff form sent twice) records it once.
		second := payment.Capture{Reference: string(rf), AmountMinor: total, BookedOn: booked.AddDate(0, 0, 2)}
		res = f.Capture(second)
		if res.Replayed || !res.SecondCredit || !res.Stale || res.CreditReference == "" || res.Problem != "" || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("second credit: %+v", res)
		}
		credit := res.CreditReference
		if again := f.Capture(second); !again.Replayed || !again.SecondCredit || again.CreditReference != credit {
			t.Fatalf("the second credit again: %+v", again)
		}
		var credits []engine.Payment
		for _, p := range f.Payments(r.ID) {
			if p.Reference == credit {
				credits = append(credits, p)
			}
		}
		if len(f.Payments(r.ID)) != 2 || len(credits) != 1 {
			t.Fatalf("%d attempts, the credit %d times; want the attempt and the credit once", len(f.Payments(r.ID)), len(credits))
		}
		if c := credits[0]; c.Status != engine.PaymentSucceeded || c.AmountMinor != total || c.RefundStatus != engine.RefundDue || !c.RefundManual || enginetest.Deref(c.ProviderID) != string(rf) {
			t.Fatalf("the credit %+v: want succeeded, owed back by hand", c)
		}
		attention, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{})
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, a := range attention {
			listed = listed || a.Payment.Reference == credit && a.Reason == staff.AttentionSecondPayment && a.RefundByHand
		}
		if !listed {
			t.Fatalf("the second credit is not listed as owed back by hand: %+v", attention)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Fatalf("instance %s after a second credit", inst.Status)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = 'membership_confirmation'"); n != 1 {
			t.Fatalf("%d confirmations, want 1", n)
		}
		// Staff transfer it back and say so, by the RF reference.
		if back, err := payment.Of(f.Svc).MarkRefundPaidBack(f.Ctx, string(rf), "sent back 2026-11-25"); err != nil || back.Reference != credit || back.RefundStatus != engine.RefundDone {
			t.Fatalf("paid back: %+v, %v", back, err)
		}
	})
}

// fixtureOpen are the open payments engine/banking's camt053_v02.xml is
// written against (its match_test): their RF references and amounts.
var fixtureOpen = []banking.Expected{
	{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, Currency: "EUR"},
	{Reference: "RF32PRBRAVO2345BRAVO234", AmountMinor: 6000, Currency: "EUR"},
	{Reference: "RF59PRCHARL2345CHARL234", AmountMinor: 7525, Currency: "EUR"},
	{Reference: "RF38PRDELTA2345DELTA234", AmountMinor: 12000, Currency: "EUR"},
	{Reference: "RF65PRECHOO2345ECHOO234", AmountMinor: 5000, Currency: "EUR"},
	{Reference: "RF57PRFOXTR2345FOXTR234", AmountMinor: 3000, Currency: "EUR"},
	{Reference: "RF72PRGOLFF2345GOLFF234", AmountMinor: 3000, Currency: "EUR"},
}

// TestImportStatementFixture imports the camt.053 fixture against seven
// committed registrations paying by bank transfer (their attempts given
// the fixture's references and amounts): exact references, a reference
// mangled in free text and a unique amount are captured and complete their
// registrations; partial and excess amounts are recorded as problems;
// unknown references, an ambiguous amount and a second payment are listed.
// A dry run changes nothing; re-importing captures nothing twice.
func TestImportStatementFixture(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, len(fixtureOpen))
		byRF := map[banking.Reference]int64{} // instance by reference
		for i, e := range fixtureOpen {
			key := fmt.Sprintf("demo-%d", i+1)
			form, _ := f.Load(key)
			r := f.Start(key, form.People[0].ID)
			r.Commit()
			ps := f.Payments(r.ID)
			if len(ps) != 1 {
				t.Fatalf("%s: %d attempts", key, len(ps))
			}
			if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("provider_id = ?", string(e.Reference)).
				Set("amount_minor = ?", e.AmountMinor).Where("id = ?", ps[0].ID).Exec(f.Ctx); err != nil {
				t.Fatal(err)
			}
			byRF[e.Reference] = r.ID
		}
		st := enginetest.ReadStatementFixture(t, "camt053_v02.xml")
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)

		before := f.State()
		dry, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		enginetest.AssertUnchanged(t, before, f.State())
		if n := f.Count((*bankstatement.BankCredit)(nil), "1 = 1"); n != 0 {
			t.Fatalf("a dry run kept %d credits", n)
		}
		if len(dry.Lines) != 8 {
			t.Fatalf("dry run: %d lines, want 8", len(dry.Lines))
		}

		rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			credit                    string
			outcome                   banking.Outcome
			rf                        banking.Reference
			captured, completed, kept bool
		}{
			{"2026110300001", banking.OutcomeExact, "RF48PRALPHA2345ALPHA234", true, true, false},
			{"2026110400002", banking.OutcomeExact, "RF32PRBRAVO2345BRAVO234", true, true, false},
			{"2026110600003", banking.OutcomeByAmount, "RF59PRCHARL2345CHARL234", true, true, false},
			{"2026110700004", banking.OutcomeUnknown, "", false, false, true},
			{"2026111000007/1", banking.OutcomePartial, "RF38PRDELTA2345DELTA234", true, false, false},
			{"2026111000007/2", banking.OutcomeExcess, "RF65PRECHOO2345ECHOO234", true, false, false},
			{"2026111200008", banking.OutcomeUnknown, "", false, false, true},
			// ALPHA paid twice in the file: the second is owed back, as a
			// second transfer captured by hand is.
			{"2026111400009", banking.OutcomeSecond, "RF48PRALPHA2345ALPHA234", true, false, false},
		}
		if len(rep.Lines) != len(want) {
			t.Fatalf("%d lines, want %d: %+v", len(rep.Lines), len(want), rep.Lines)
		}
		for i, w := range want {
			l := rep.Lines[i]
			if l.Credit.ID != w.credit || l.Outcome != w.outcome || l.RF != w.rf || l.Captured != w.captured || l.Completed != w.completed || l.Kept != w.kept || l.Err != nil {
				t.Errorf("line %d: %s %s %s captured=%v completed=%v err=%v (%s); want %+v", i, l.Credit.ID, l.Outcome, l.RF, l.Captured, l.Completed, l.Err, l.Reason, w)
			}
			if l.Reason == "" {
				t.Errorf("line %d has no reason", i)
			}
		}
		for _, e := range fixtureOpen {
			inst := f.Instance(byRF[e.Reference])
			p := f.Payments(inst.ID)[0]
			switch e.Reference {
			case "RF48PRALPHA2345ALPHA234", "RF32PRBRAVO2345BRAVO234", "RF59PRCHARL2345CHARL234":
				if inst.Status != engine.StateCompleted || p.Status != engine.PaymentSucceeded {
					t.Errorf("%s: instance %s, attempt %s; want completed and paid", e.Reference, inst.Status, p.Status)
				}
			case "RF38PRDELTA2345DELTA234":
				if inst.Status != engine.StateDone || p.Problem != "" || p.Status != engine.PaymentPending {
					t.Errorf("%s: instance %s, attempt %s, problem %q; want DONE and open for the rest", e.Reference, inst.Status, p.Status, p.Problem)
				}
			case "RF65PRECHOO2345ECHOO234":
				if inst.Status != engine.StateDone || p.Problem == "" {
					t.Errorf("%s: instance %s, problem %q; want DONE with the problem recorded", e.Reference, inst.Status, p.Problem)
				}
			default:
				if inst.Status != engine.StateDone || p.Status != engine.PaymentPending {
					t.Errorf("%s: instance %s, attempt %s; want untouched", e.Reference, inst.Status, p.Status)
				}
			}
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = 'membership_confirmation'"); n != 3 {
			t.Fatalf("%d confirmations, want 3", n)
		}

		// The second payment is owed back, listed for staff.
		owed, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{})
		if err != nil {
			t.Fatal(err)
		}
		seconds := 0
		for _, a := range owed {
			if a.Reason == staff.AttentionSecondPayment && a.RefundByHand && a.Payment.AmountMinor == 18450 {
				seconds++
			}
		}
		if seconds != 1 || !rep.Lines[7].SecondCredit {
			t.Fatalf("the second payment of ALPHA: %d listed as owed back (%+v)", seconds, owed)
		}

		// The unknown credits are kept for a treasurer, with what the
		// payer wrote.
		kept, err := bankstatement.Of(f.Svc).BankCredits(f.Ctx, bankstatement.CreditQuery{States: []bankstatement.CreditState{bankstatement.CreditUnmatched}})
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != 2 {
			t.Fatalf("%d kept credits, want 2: %+v", len(kept), kept)
		}
		if k := kept[1]; k.CreditID != "2026110700004" || k.AmountMinor != 18450 || k.Currency != "EUR" || k.DebtorName != "Udo Unbekannt" ||
			k.Reference != "RF35PRUNKNO2345UNKNO234" || k.Reason == "" || k.OrganisationID != nil || k.BookedOn == nil || k.StatementID == "" {
			t.Fatalf("kept credit %+v", k)
		}

		// Again: the captured and the kept credits are known by the bank's id.
		before = f.State()
		again, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		enginetest.AssertUnchanged(t, before, f.State())
		if again.AlreadyImported != 8 || len(again.Lines) != 0 {
			t.Fatalf("re-import: %d already imported, %d lines; want 8 and 0", again.AlreadyImported, len(again.Lines))
		}
		if n := f.Count((*bankstatement.BankCredit)(nil), "1 = 1"); n != 2 {
			t.Fatalf("%d credits kept after the re-import, want 2", n)
		}

		// Next month's statement brings the rest of the partial payment:
		// the two parts add up and complete the registration.
		delta := fixtureOpen[3]
		next := banking.Statement{Message: "camt.053.001.02", MessageID: "STMT-NEXT", Credits: []banking.Credit{
			{ID: "2026120100001", Account: enginetest.DemoIBAN, AmountMinor: 2000, Currency: "EUR", References: []string{string(delta.Reference)},
				BookingDate: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}}
		rest, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, next, engine.StatementOptions{Account: iban})
		if err != nil {
			t.Fatal(err)
		}
		if l := rest.Lines[0]; l.Outcome != banking.OutcomeExact || !l.Captured || !l.Completed || !strings.Contains(l.Reason, "paid before") {
			t.Fatalf("the rest of a partial payment: %+v", l)
		}
		if inst := f.Instance(byRF[delta.Reference]); inst.Status != engine.StateCompleted {
			t.Fatalf("instance %s after the rest arrived", inst.Status)
		}
	})
}

// TestCheckoutIDsUniquePerAccount: a provider's checkout id names one
// payment per provider account (payments_provider_account_id); another
// account may reuse it, and a bank transfer's attempts share their RF
// reference.
func TestCheckoutIDsUniquePerAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.Commit()
		first := f.Payments(r.ID)[0]
		insert := func(ref, provider, account, providerID string) error {
			now := clock.Now().UTC()
			_, err := db.NewInsert().Model(&engine.Payment{OrderID: first.OrderID, Provider: provider, Account: account, Reference: ref,
				AmountMinor: 100, Currency: "EUR", Status: engine.PaymentFailed, ProviderID: &providerID, CreatedAt: now, UpdatedAt: now}).Exec(f.Ctx)
			return err
		}
		if err := insert("PR-ACCOUNTA1", "stripe", "key:a", "cs_test_same"); err != nil {
			t.Fatal(err)
		}
		if err := insert("PR-ACCOUNTA2", "stripe", "key:a", "cs_test_same"); err == nil {
			t.Fatal("a checkout id stored twice for one account")
		}
		if err := insert("PR-ACCOUNTB1", "stripe", "key:b", "cs_test_same"); err != nil {
			t.Fatalf("the same id at another account: %v", err)
		}
		if err := insert("PR-BANKAGAIN", payment.BankTransferProvider, "", enginetest.Deref(first.ProviderID)); err != nil {
			t.Fatalf("a second attempt of a bank transfer with its order's RF reference: %v", err)
		}
	})
}

// TestCompletingPartRecordsItsOwnAmount: the credit that completes
// earlier parts is checked as their sum but recorded with its own amount,
// so that the registration's history shows each credit as the bank booked
// it (a second part of 17.34 as 17.34, not as the order's total) while the
// attempt is paid the whole.
func TestCompletingPartRecordsItsOwnAmount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.Commit()
		p := f.Payments(r.ID)[0]
		first, second := p.AmountMinor-1734, int64(1734)
		f.Capture(payment.Capture{Reference: enginetest.Deref(p.ProviderID), AmountMinor: first, Note: "first part"})
		if res := f.Capture(payment.Capture{Reference: enginetest.Deref(p.ProviderID), AmountMinor: second, Note: "second part"}); res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("the completing part: %+v", res)
		}
		var events []engine.PaymentEvent
		if err := db.NewSelect().Model(&events).Where("reference = ? AND event_type = ?", p.Reference, payment.BankCaptureEvent).Order("id").Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if len(events) != 2 || *events[0].AmountMinor != first || *events[1].AmountMinor != second || !strings.Contains(events[1].Note, "with earlier partial payments") {
			for _, e := range events {
				t.Logf("event %s %v %q", e.Outcome, e.AmountMinor, e.Note)
			}
			t.Fatalf("%d capture events; want the parts %d and %d as booked", len(events), first, second)
		}
		if paid := f.Payments(r.ID)[0]; paid.Status != engine.PaymentSucceeded || paid.PaidAmountMinor == nil || *paid.PaidAmountMinor != p.AmountMinor {
			t.Fatalf("the attempt after both parts: %s, paid %v of %d", paid.Status, paid.PaidAmountMinor, p.AmountMinor)
		}
	})
}

// TestCaptureTodayIsTheClubsDay: a capture without a booking date is
// booked on the club's day in its time zone: at 23:30 UTC on 6 December
// it is already 7 December in Berlin (the default) and still 6 December in
// New York. An unknown zone is refused at the setting, named by its field.
func TestCaptureTodayIsTheClubsDay(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		at := time.Date(2026, 12, 6, 23, 30, 0, 0, time.UTC)
		f := enginetest.BankFixture(t, db, 2)
		iban, _ := banking.ParseIBAN(enginetest.DemoIBAN)
		bt, err := banktransfer.New(banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: iban}, func(ref string, _ int64) string { return "http://portal.test/pay/" + ref })
		if err != nil {
			t.Fatal(err)
		}
		f.Svc = engine.NewService(db, bt, engine.WithClock(func() time.Time { return at }))
		const owes = "RF48PRALPHA2345ALPHA234"
		ps := enginetest.OpenTransfers(t, f, banking.Expected{Reference: owes, AmountMinor: 28750, Currency: "EUR"})
		booked := func() string {
			t.Helper()
			var notes []string
			if err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Column("note").Where("reference = ? AND event_type = ?", ps[0].Reference, payment.BankCaptureEvent).
				Order("id").Scan(f.Ctx, &notes); err != nil {
				t.Fatal(err)
			}
			return notes[len(notes)-1]
		}
		f.Capture(payment.Capture{Reference: owes, AmountMinor: 1000, ID: "berlin"})
		if got := booked(); !strings.HasPrefix(got, "booked 2026-12-07") {
			t.Errorf("a club in Berlin at 00:30 its time: %q, want booked 2026-12-07", got)
		}
		zone := "America/New_York"
		if _, err := organisation.Of(f.Svc).UpdateOrganisation(f.Ctx, 1, organisation.OrganisationChange{TimeZone: &zone}); err != nil {
			t.Fatal(err)
		}
		f.Capture(payment.Capture{Reference: owes, AmountMinor: 1000, ID: "new-york"})
		if got := booked(); !strings.HasPrefix(got, "booked 2026-12-06") {
			t.Errorf("a club in New York at 18:30 its time: %q, want booked 2026-12-06", got)
		}
		for _, bad := range []string{"Mars/Olympus", "", "Local"} {
			_, err := organisation.Of(f.Svc).UpdateOrganisation(f.Ctx, 1, organisation.OrganisationChange{TimeZone: &bad})
			if e, ok := engine.AsError(err); !ok || len(e.Fields) != 1 || e.Fields[0].Field != "timeZone" {
				t.Errorf("time zone %q: %v, want refused at timeZone", bad, err)
			}
		}
	})
}
