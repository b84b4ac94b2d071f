package directdebit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/staff"
)

// testReturn is one returned debit of a test statement.
type testReturn struct {
	e2e    string
	amount int64
	code   string
}

// returnsStatement is a camt.053 statement of account with one booked
// return entry per r, as a bank books them (debit, reversal, PMNT/IDDT/UPDD,
// return information with the reason code).
func returnsStatement(t *testing.T, msgID, account string, returns ...testReturn) banking.Statement {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>%s</MsgId><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm></GrpHdr>
<Stmt><Id>%s</Id><CreDtTm>2027-01-20T06:00:00+01:00</CreDtTm><Acct><Id><IBAN>%s</IBAN></Id><Ccy>EUR</Ccy></Acct>`, msgID, msgID, account)
	for i, r := range returns {
		amount := fmt.Sprintf("%d.%02d", r.amount/100, r.amount%100)
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%[1]s</Amt><CdtDbtInd>DBIT</CdtDbtInd><RvslInd>true</RvslInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2027-01-19</Dt></BookgDt><ValDt><Dt>2027-01-19</Dt></ValDt><AcctSvcrRef>RET-%[2]d-%[3]s</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><Refs><EndToEndId>%[3]s</EndToEndId></Refs><Amt Ccy="EUR">%[1]s</Amt><CdtDbtInd>DBIT</CdtDbtInd>
<RtrInf><Rsn><Cd>%[4]s</Cd></Rsn></RtrInf></TxDtls></NtryDtls></Ntry>`, amount, i+1, r.e2e, r.code)
	}
	b.WriteString(`</Stmt></BkToCstmrStmt></Document>`)
	st, err := banking.ParseStatement(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("parse the test statement: %v\n%s", err, b.String())
	}
	if len(st.Returns) != len(returns) {
		t.Fatalf("%d returns read, want %d", len(st.Returns), len(returns))
	}
	return st
}

// TestImportStatementTakesBackReturnedDebits: a statement returning one
// collected debit with MD06 and another with AC04 takes those two back and
// leaves a third collected debit paid: their attempts fail with the reason
// in words, their orders are unpaid again (no longer due for collection)
// with the club's return fee as a line of their own, their memberships
// wait for payment again and their registrations await payment; the
// mandate ends for AC04, not for MD06; each member is told in their
// language; a payment.failed event is written; the treasurer sees both
// among the payments needing attention. Importing it again, or an
// overlapping advice of the same returns, changes nothing.
func TestImportStatementTakesBackReturnedDebits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 3, 350)
		de := f.CommitDebit("demo-1", "de")
		fr := f.CommitDebit("demo-2", "fr")
		kept := f.CommitDebit("demo-3", "en")
		f.Collect(payment.DebitCollected, de, fr, kept)
		for _, m := range []*enginetest.DebitMember{de, fr, kept} {
			if o := f.Orders(m.Instance)[0]; o.Status != engine.OrderPaid {
				t.Fatalf("order %d after the collection: %s", o.ID, o.Status)
			}
		}
		st := returnsStatement(t, "STMT-RET-1", enginetest.DemoIBAN,
			testReturn{de.Debit.EndToEndID, de.Debit.AmountMinor, "MD06"},
			testReturn{fr.Debit.EndToEndID, fr.Debit.AmountMinor, "AC04"})

		now := clock.Now().UTC()
		if _, err := db.NewInsert().Model(&engine.WebhookEndpoint{OrganisationID: 1, URL: "https://hooks.example.org/portal", SecretSealed: "s",
			EventsList: engine.EventPaymentFailed, Active: true, CreatedAt: now, UpdatedAt: now}).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		before := f.State()
		dry := f.ImportStatement(st, engine.StatementOptions{DryRun: true})
		enginetest.AssertUnchanged(t, before, f.State())
		if len(dry.Returns) != 2 || dry.Returns[0].Outcome != directdebit.ReturnApplied {
			t.Fatalf("dry run: %+v", dry.Returns)
		}

		actor := engine.Actor{Name: "treasurer@example.org"}
		rep := f.ImportStatement(st, engine.StatementOptions{Actor: &actor})
		if len(rep.Returns) != 2 {
			t.Fatalf("%d return lines: %+v", len(rep.Returns), rep.Returns)
		}
		for i, want := range []struct {
			m     *enginetest.DebitMember
			ended bool
		}{{de, false}, {fr, true}} {
			l := rep.Returns[i]
			if l.Err != nil || l.Outcome != directdebit.ReturnApplied || !l.Reversed || l.OrderID != want.m.Order.ID || l.MandateEnded != want.ended || l.FeeMinor != 350 {
				t.Errorf("return %d: %+v", i, l)
			}
		}
		if !strings.Contains(rep.Returns[0].Reason, "asked their bank for a refund") || !strings.Contains(rep.Returns[1].Reason, "account is closed") {
			t.Errorf("reasons: %q / %q", rep.Returns[0].Reason, rep.Returns[1].Reason)
		}

		for _, m := range []*enginetest.DebitMember{de, fr} {
			o := f.Orders(m.Instance)[0]
			if o.Status != engine.OrderUnpaid || o.PaidAt != nil || o.DebitDueOn != nil || o.TotalMinor != m.Order.TotalMinor+350 {
				t.Errorf("order %d: %s paid=%v due=%v total %d (was %d)", o.ID, o.Status, o.PaidAt, o.DebitDueOn, o.TotalMinor, m.Order.TotalMinor)
			}
			fee := o.Lines[len(o.Lines)-1]
			if fee.Kind != directdebit.DebitReturnFeeKind || fee.AmountMinor != 350 || fee.LineNo != len(o.Lines) {
				t.Errorf("order %d: fee line %+v", o.ID, fee)
			}
			p := f.Payments(m.Instance)[0]
			if p.Status != engine.PaymentFailed {
				t.Errorf("attempt %s: %s, want FAILED", p.Reference, p.Status)
			}
			var d payment.Debit
			if err := db.NewSelect().Model(&d).Where("id = ?", m.Debit.ID).Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			if d.Status != payment.DebitReturned || d.ReturnedAt == nil || d.ReturnCode == "" {
				t.Errorf("debit %s: %+v", d.EndToEndID, d)
			}
			for _, ms := range f.Memberships(m.Instance) {
				if ms.Status != engine.MembershipPending || ms.ActivatedAt != nil {
					t.Errorf("membership %d: %s", ms.ID, ms.Status)
				}
			}
			if n := f.Count((*engine.ProcessInstance)(nil), "id = ? AND status = ?", m.Instance, engine.StateDone); n != 1 {
				t.Errorf("registration %d does not await payment again", m.Instance)
			}
		}
		if fee := f.Orders(de.Instance)[0].Lines; !strings.Contains(fee[len(fee)-1].Description, "Lastschrift") {
			t.Errorf("fee line of a German registration: %q", fee[len(fee)-1].Description)
		}
		// The one not returned stays paid.
		if o := f.Orders(kept.Instance)[0]; o.Status != engine.OrderPaid || f.Payments(kept.Instance)[0].Status != engine.PaymentSucceeded {
			t.Errorf("the debit not returned changed: order %s", o.Status)
		}
		if n := f.Count((*engine.ProcessInstance)(nil), "id = ? AND status = ?", kept.Instance, engine.StateCompleted); n != 1 {
			t.Errorf("the registration not returned is no longer completed")
		}

		// AC04 ends the mandate, MD06 does not.
		mandate := func(id int64) directdebit.DebitMandate {
			var m directdebit.DebitMandate
			if err := db.NewSelect().Model(&m).Where("id = ?", id).Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if m := mandate(fr.Mandate.ID); m.RevokedAt == nil || m.EndReason != "return:AC04" {
			t.Errorf("AC04 mandate: revoked %v, reason %q", m.RevokedAt, m.EndReason)
		}
		if m := mandate(de.Mandate.ID); m.RevokedAt != nil || m.EndReason != "" {
			t.Errorf("MD06 mandate ended: %q", m.EndReason)
		}

		// The member is told, in their language, with the pay link.
		for _, m := range []*enginetest.DebitMember{de, fr} {
			var msgs []engine.OutboxMessage
			if err := db.NewSelect().Model(&msgs).Where("kind = ?", directdebit.KindDebitReturned).
				Where("dedup_key LIKE ?", fmt.Sprintf("%%:order:%d:%%", m.Order.ID)).Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 1 {
				t.Fatalf("order %d: %d return messages", m.Order.ID, len(msgs))
			}
			var p directdebit.DebitReturnPayload
			if err := json.Unmarshal([]byte(msgs[0].Payload), &p); err != nil || p.DebitID != m.Debit.ID || p.FeeMinor != 350 || p.Link == "" {
				t.Fatalf("payload %s: %v", msgs[0].Payload, err)
			}
			msg, err := directdebit.LoadDebitReturnMessage(f.Ctx, db, p)
			if err != nil || !msg.Due || msg.Order.TotalMinor != m.Order.TotalMinor+350 || len(msg.Persons) == 0 {
				t.Fatalf("message of order %d: %+v %v", m.Order.ID, msg, err)
			}
			want := map[int64]string{de.Order.ID: "de", fr.Order.ID: "fr"}[m.Order.ID]
			if msg.Language != want {
				t.Errorf("message of order %d in %q, want %q", m.Order.ID, msg.Language, want)
			}
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = ?", directdebit.KindDebitReturned); n != 2 {
			t.Errorf("%d return messages, want 2", n)
		}
		var failed []string
		if err := db.NewSelect().Table("webhook_events").Column("body").Where("type = ?", engine.EventPaymentFailed).Scan(f.Ctx, &failed); err != nil {
			t.Fatal(err)
		}
		if len(failed) != 2 || !strings.Contains(strings.Join(failed, " "), "MD06") {
			t.Errorf("payment.failed events: %q", failed)
		}
		if n := f.Count((*engine.AuditRecord)(nil), "action = ?", "payment.debit_return"); n != 2 {
			t.Errorf("%d audit entries, want 2", n)
		}

		// The treasurer sees them, with the reason.
		attention, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{OrganisationID: 1})
		if err != nil {
			t.Fatal(err)
		}
		codes := map[string]string{}
		for _, a := range attention {
			if a.Reason == staff.AttentionDebitReturned {
				codes[a.Payment.Reference] = a.ReturnCode
			}
		}
		if codes[de.Payment.Reference] != "MD06" || codes[fr.Payment.Reference] != "AC04" || len(codes) != 2 {
			t.Errorf("returned debits needing attention: %v", codes)
		}

		// The same statement again, and a camt.054 advice of the same
		// returns (other bank references): nothing changes.
		after := f.State()
		again := f.ImportStatement(st, engine.StatementOptions{Actor: &actor})
		advice := returnsStatement(t, "NTF-RET-1", enginetest.DemoIBAN,
			testReturn{fr.Debit.EndToEndID, fr.Debit.AmountMinor, "AC04"},
			testReturn{de.Debit.EndToEndID, de.Debit.AmountMinor, "MD06"})
		overlap := f.ImportStatement(advice, engine.StatementOptions{})
		enginetest.AssertUnchanged(t, after, f.State())
		if len(again.Returns)+len(overlap.Returns) != 0 || again.ReturnsBefore != 2 || overlap.ReturnsBefore != 2 ||
			again.AlreadyImported+overlap.AlreadyImported+again.NotCredits+overlap.NotCredits != 0 {
			t.Errorf("replay: %+v / %+v", again, overlap)
		}
		if n := f.Count((*engine.AuditRecord)(nil), "action = ?", "payment.debit_return"); n != 2 {
			t.Errorf("%d audit entries after the replay, want 2", n)
		}

		// A later settlement of the returned attempt (its run marked sent
		// again, a replayed confirmation) does not make it paid.
		if res, err := payment.Of(f.Svc).PaymentState(f.Ctx, de.Payment.Reference); err != nil || res.Outcome != engine.OutcomeFailed {
			t.Fatalf("returned attempt refreshed: %+v %v", res, err)
		}
		enginetest.AssertUnchanged(t, after, f.State())
	})
}

// TestImportStatementUnknownReturnChangesNothing: a return naming no debit
// of the club (an unknown end-to-end id, or another club's), is reported
// as such and changes nothing, while the rest of the statement imports;
// one whose amount differs from the debit's is recorded as a problem for
// staff and reverses nothing.
func TestImportStatementUnknownReturnChangesNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 2, 0)
		a := f.CommitDebit("demo-1", "en")
		b := f.CommitDebit("demo-2", "en")
		f.Collect(payment.DebitCollected, a, b)
		// Another club's debit with the end-to-end id the statement names.
		if _, err := db.NewInsert().Model(&engine.Organisation{ID: 2, Name: "Other Club", Slug: "other", DefaultLanguage: "en"}).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*payment.Debit)(nil)).Set("organisation_id = 2").Where("id = ?", b.Debit.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		before := f.State()
		st := returnsStatement(t, "STMT-RET-2", enginetest.DemoIBAN,
			testReturn{"NO-SUCH-DEBIT", 4500, "MD06"},
			testReturn{b.Debit.EndToEndID, b.Debit.AmountMinor, "AC04"},
			testReturn{a.Debit.EndToEndID, a.Debit.AmountMinor + 100, "MD06"})
		rep := f.ImportStatement(st, engine.StatementOptions{})
		if len(rep.Returns) != 3 {
			t.Fatalf("%d return lines", len(rep.Returns))
		}
		if l := rep.Returns[0]; l.Outcome != directdebit.ReturnUnknown || l.Reason != "unknown direct debit return NO-SUCH-DEBIT" || l.Err != nil {
			t.Errorf("unknown: %+v", l)
		}
		if l := rep.Returns[1]; l.Outcome != directdebit.ReturnUnknown || l.Reason != "unknown direct debit return "+b.Debit.EndToEndID {
			t.Errorf("another club's: %+v", l)
		}
		if l := rep.Returns[2]; l.Outcome != directdebit.ReturnMismatch || l.Reversed || !strings.Contains(l.Reason, "not reversed") {
			t.Errorf("amount mismatch: %+v", l)
		}
		// Orders, memberships, instances, outbox unchanged; the mismatch
		// is recorded on its attempt, which stays paid.
		after := f.State()
		for _, table := range []string{"instances", "memberships", "orders", "order_lines", "outbox"} {
			if strings.Join(before[table], "|") != strings.Join(after[table], "|") {
				t.Errorf("%s changed", table)
			}
		}
		p := f.Payments(a.Instance)[0]
		if p.Status != engine.PaymentSucceeded || !strings.Contains(p.Problem, "not reversed") {
			t.Errorf("attempt with a mismatched return: %s %q", p.Status, p.Problem)
		}
		if n := f.Count((*directdebit.DebitMandate)(nil), "revoked_at IS NOT NULL"); n != 0 {
			t.Errorf("%d mandates ended", n)
		}
		attention, err := staff.Of(f.Svc).PaymentsNeedingAttention(f.Ctx, staff.AttentionQuery{OrganisationID: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(attention) != 1 || attention[0].Reason != staff.AttentionProblem || attention[0].Payment.ID != p.ID {
			t.Errorf("attention: %+v", attention)
		}
		// Once recorded, the same mismatched return again is not a new problem.
		again := f.ImportStatement(st, engine.StatementOptions{})
		if again.ReturnsBefore != 1 || again.AlreadyImported != 0 || len(again.Returns) != 2 {
			t.Errorf("replay: %d returns and %d credits already, %d lines", again.ReturnsBefore, again.AlreadyImported, len(again.Returns))
		}
	})
}

// TestReturnOfADebitNotMarkedSent: the bank executed a file the club had
// not marked sent yet, and returned one of its debits: the attempt fails,
// the order (unpaid still) is no longer due for collection, the fee is
// added, and the member is told.
func TestReturnOfADebitNotMarkedSent(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 1, 250)
		m := f.CommitDebit("demo-1", "fr")
		f.Collect(payment.DebitInRun, m)
		if o := f.Orders(m.Instance)[0]; o.DebitDueOn == nil {
			t.Fatal("a mandated order has no due date")
		}
		rep := f.ImportStatement(returnsStatement(t, "STMT-RET-3", enginetest.DemoIBAN, testReturn{m.Debit.EndToEndID, m.Debit.AmountMinor, "AM04"}),
			engine.StatementOptions{})
		if len(rep.Returns) != 1 || rep.Returns[0].Outcome != directdebit.ReturnApplied || rep.Returns[0].Reversed || rep.Returns[0].FeeMinor != 250 {
			t.Fatalf("return: %+v", rep.Returns)
		}
		o := f.Orders(m.Instance)[0]
		if o.Status != engine.OrderUnpaid || o.DebitDueOn != nil || o.TotalMinor != m.Order.TotalMinor+250 {
			t.Errorf("order: %s due=%v total %d", o.Status, o.DebitDueOn, o.TotalMinor)
		}
		if fee := o.Lines[len(o.Lines)-1]; !strings.Contains(fee.Description, "prélèvement") {
			t.Errorf("fee line of a French registration: %q", fee.Description)
		}
		if p := f.Payments(m.Instance)[0]; p.Status != engine.PaymentFailed {
			t.Errorf("attempt: %s", p.Status)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = ?", directdebit.KindDebitReturned); n != 1 {
			t.Errorf("%d return messages", n)
		}
		if n := f.Count((*engine.ProcessInstance)(nil), "id = ? AND status = ?", m.Instance, engine.StateDone); n != 1 {
			t.Errorf("the registration no longer awaits payment")
		}
	})
}

// TestReturnedDebitIsNotCollectedAgain: a run collects two households and
// is marked sent; the statement returns one with MD06 and the other with
// AC04; the next run collects neither (the orders are no longer due); once
// the MD06 member confirms again on the pay link (a due date again), the
// next run collects the amount and the club's fee on a new attempt, while
// the AC04 order stays out: its mandate ended.
func TestReturnedDebitIsNotCollectedAgain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		day := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
		var now atomic.Value
		now.Store(day)
		clock := func() time.Time { return now.Load().(time.Time) }
		if err := demodata.SeedDemo(context.Background(), db, 2, day); err != nil {
			t.Fatalf("seed: %v", err)
		}
		svc, dd := enginetest.DirectDebitClub(t, db, engine.WithClock(clock))
		f := &enginetest.DebitFixture{Fixture: &enginetest.Fixture{T: t, Ctx: context.Background(), DB: db, Svc: svc}, DD: dd}
		f.IBAN, _ = banking.ParseIBAN(enginetest.DemoIBAN)
		if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("debit_return_fee_minor = 300").Where("organisation_id = 1").Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		refund := f.CommitDebit("demo-1", "de")
		closed := f.CommitDebit("demo-2", "en")
		treasurer := engine.Actor{Name: "treasurer@example.org"}
		now.Store(day.AddDate(0, 0, 20))
		run, err := directdebit.Of(svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil || run.DebitCount != 2 {
			t.Fatalf("first run: %+v %v", run, err)
		}
		if _, err := directdebit.Of(svc).MarkDebitRunSent(f.Ctx, treasurer, 1, run.ID); err != nil {
			t.Fatal(err)
		}
		e2e := func(m *enginetest.DebitMember) payment.Debit {
			var d payment.Debit
			if err := db.NewSelect().Model(&d).Where("order_id = ? AND run_id = ?", m.Order.ID, run.ID).Scan(f.Ctx); err != nil {
				t.Fatal(err)
			}
			return d
		}
		a, b := e2e(refund), e2e(closed)
		if a.Status != payment.DebitCollected || f.Orders(refund.Instance)[0].Status != engine.OrderPaid {
			t.Fatalf("after the run was sent: debit %s, order %s", a.Status, f.Orders(refund.Instance)[0].Status)
		}
		rep := f.ImportStatement(returnsStatement(t, "STMT-2027-03-30", enginetest.DemoIBAN,
			testReturn{a.EndToEndID, a.AmountMinor, "MD06"}, testReturn{b.EndToEndID, b.AmountMinor, "AC04"}), engine.StatementOptions{})
		if len(rep.Returns) != 2 || !rep.Returns[0].Reversed || !rep.Returns[1].Reversed || !rep.Returns[1].MandateEnded {
			t.Fatalf("returns: %+v", rep.Returns)
		}
		if _, err := directdebit.Of(svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a run right after the returns: %v, want nothing due", err)
		}
		// The members confirm again on the pay link (the pay page's part):
		// their orders are due again. The ended mandate still keeps the
		// AC04 order out.
		for _, m := range []*enginetest.DebitMember{refund, closed} {
			if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_due_on = ?", day.AddDate(0, 0, 35)).Where("id = ?", m.Order.ID).Exec(f.Ctx); err != nil {
				t.Fatal(err)
			}
		}
		now.Store(day.AddDate(0, 0, 40))
		again, err := directdebit.Of(svc).CollectDebits(f.Ctx, directdebit.CollectRequest{OrganisationID: 1, Actor: treasurer})
		if err != nil {
			t.Fatal(err)
		}
		want := refund.Order.TotalMinor + 300
		if again.DebitCount != 1 || again.TotalMinor != want {
			t.Fatalf("second run: %d debits, %d total; want 1 of %d", again.DebitCount, again.TotalMinor, want)
		}
		ps := f.Payments(refund.Instance)
		// (The fake's checkouts expire in a day: the first run replaced the
		// commit's attempt.) The returned attempt stays failed; the new one
		// asks for the amount and the fee.
		if n := len(ps); n < 2 || ps[n-2].ID != a.PaymentID || ps[n-2].Status != engine.PaymentFailed ||
			ps[n-1].Status != engine.PaymentPending || ps[n-1].AmountMinor != want {
			t.Fatalf("attempts after the second run: %+v", ps)
		}
		if _, err := directdebit.Of(svc).MarkDebitRunSent(f.Ctx, treasurer, 1, again.ID); err != nil {
			t.Fatal(err)
		}
		if o := f.Orders(refund.Instance)[0]; o.Status != engine.OrderPaid {
			t.Errorf("order after the second collection: %s", o.Status)
		}
		if n := f.Count((*engine.ProcessInstance)(nil), "id = ? AND status = ?", refund.Instance, engine.StateCompleted); n != 1 {
			t.Errorf("the registration is not completed after the second collection")
		}
		for _, ms := range f.Memberships(refund.Instance) {
			if ms.Status != engine.MembershipActive {
				t.Errorf("membership %d after the second collection: %s", ms.ID, ms.Status)
			}
		}
		// Paid twice (once taken back): confirmed twice.
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = ? AND dedup_key LIKE ?", payment.KindConfirmation,
			fmt.Sprintf("%%:order:%d%%", refund.Order.ID)); n != 2 {
			t.Errorf("%d confirmations of the order paid again after its return, want 2", n)
		}
	})
}

// TestReturnKeepsRegistrationCompletedBesideAnOpenOne: when the household
// has started another registration of the same period since, the returned
// one stays COMPLETED (only one may be open), while its order and
// memberships wait for payment again.
func TestReturnKeepsRegistrationCompletedBesideAnOpenOne(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 1, 0)
		m := f.CommitDebit("demo-1", "en")
		f.Collect(payment.DebitCollected, m)
		var inst engine.ProcessInstance
		if err := db.NewSelect().Model(&inst).Where("id = ?", m.Instance).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if inst.Status != engine.StateCompleted {
			t.Fatalf("registration after the collection: %s", inst.Status)
		}
		open := inst
		open.ID, open.Status, open.EndTime, open.CurrentStepID = 0, engine.StateRunning, nil, nil
		if _, err := db.NewInsert().Model(&open).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		rep := f.ImportStatement(returnsStatement(t, "STMT-RET-4", enginetest.DemoIBAN, testReturn{m.Debit.EndToEndID, m.Debit.AmountMinor, "MS02"}),
			engine.StatementOptions{})
		if len(rep.Returns) != 1 || rep.Returns[0].Err != nil || !rep.Returns[0].Reversed {
			t.Fatalf("return: %+v", rep.Returns)
		}
		if n := f.Count((*engine.ProcessInstance)(nil), "id = ? AND status = ?", m.Instance, engine.StateCompleted); n != 1 {
			t.Errorf("the returned registration did not stay COMPLETED beside the open one")
		}
		if o := f.Orders(m.Instance)[0]; o.Status != engine.OrderUnpaid {
			t.Errorf("order: %s", o.Status)
		}
		for _, ms := range f.Memberships(m.Instance) {
			if ms.Status != engine.MembershipPending {
				t.Errorf("membership %d: %s", ms.ID, ms.Status)
			}
		}
		// The money is owed: the order is among the open payments, and the
		// unpaid reminders follow from the day of the return (the return's
		// message was the first notice), not from the commit a season ago.
		rows, err := staff.Of(f.Svc).OpenPayments(f.Ctx, staff.OpenPaymentQuery{OrganisationID: 1})
		if err != nil || len(rows) != 1 || rows[0].OrderID != m.Order.ID || rows[0].OwedMinor != m.Order.TotalMinor {
			t.Fatalf("open payments after the return: %+v (%v)", rows, err)
		}
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("created_at = ?", clock.Now().UTC().AddDate(0, 0, -60)).Where("id = ?", m.Order.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		reminders := func(after time.Duration) int {
			t.Helper()
			if _, err := message.QueueUnpaidReminders(f.Ctx, db, clock.Now().UTC().Add(after)); err != nil {
				t.Fatal(err)
			}
			return f.Count((*engine.OutboxMessage)(nil), "kind = ? AND dedup_key LIKE ?", message.KindUnpaidReminder, fmt.Sprintf("%%:order:%d:%%", m.Order.ID))
		}
		if n := reminders(24 * time.Hour); n != 0 {
			t.Errorf("%d reminders a day after the return, want none yet", n)
		}
		if n := reminders((3*24 + 1) * time.Hour); n != 1 {
			t.Errorf("%d reminders three days after the return, want 1", n)
		}
		if n := reminders((3*24 + 2) * time.Hour); n != 1 {
			t.Errorf("%d reminders after the reminder run again, want still 1", n)
		}
		if findings, err := books.Check(f.Ctx, f.Svc, 1); err != nil || len(findings) != 0 {
			t.Errorf("books: %v (%v)", findings, err)
		}
	})
}

// TestReturnOfACancelledDebit: a return of a debit whose run was cancelled
// (so never collected, by the portal's account) is a problem for staff:
// nothing is reversed, and the pending attempt keeps no problem, so that
// the next run still collects with it.
func TestReturnOfACancelledDebit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewDebitFixture(t, db, 1, 200)
		m := f.CommitDebit("demo-1", "en")
		f.Collect(payment.DebitCancelled, m)
		before := f.State()
		rep := f.ImportStatement(returnsStatement(t, "STMT-RET-5", enginetest.DemoIBAN, testReturn{m.Debit.EndToEndID, m.Debit.AmountMinor, "AC04"}),
			engine.StatementOptions{})
		if len(rep.Returns) != 1 || rep.Returns[0].Outcome != directdebit.ReturnMismatch || !strings.Contains(rep.Returns[0].Reason, "run was cancelled") {
			t.Fatalf("return: %+v", rep.Returns)
		}
		enginetest.AssertUnchanged(t, before, f.State())
		if n := f.Count((*directdebit.DebitMandate)(nil), "revoked_at IS NOT NULL"); n != 0 {
			t.Errorf("a cancelled debit's return ended the mandate")
		}
		if n := f.Count((*engine.PaymentEvent)(nil), "event_type = ?", "direct_debit.return"); n != 1 {
			t.Errorf("%d return events recorded, want 1", n)
		}
	})
}
