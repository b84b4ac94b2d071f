package payments_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffImportTakesBackReturnedDebit: a treasurer of a club collecting
// by direct debit uploads a statement with a return of a collected debit
// (MD06) and one of an unknown end-to-end id: the preview proposes to take
// the first back and lists the second as unknown, changing nothing;
// confirming takes it back (the order unpaid again, audited), and the
// payments page lists it as a returned debit with the reason in words.
func TestStaffImportTakesBackReturnedDebit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, rf := env.UnpaidDemoOrder()
		// Paid, as a collected debit: the order's attempt settled through
		// the one settlement, then recorded as the debit of a run sent.
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		paid := env.PostFile(tr, "/staff/payments/statement", nil, "camt054.xml",
			handlertest.Camt054(string(handlertest.StaffCreditor.IBAN), handlertest.CamtCredit{Id: "C-1", Amount: engine.FormatAmount(order.TotalMinor), Ref: string(rf), Debtor: "Demo Household"}))
		env.PostFile(tr, "/staff/payments/statement", map[string]string{"statement": paid.Doc.Find(`input[name="statement"]`).AttrOr("value", ""), "capture": "1"}, "", nil)
		if got := env.OrderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("order after the capture: %s", got)
		}
		creditorID, methods := "DE98ZZZ09999999999", []string{payment.BankTransferProvider, payment.DirectDebitProvider}
		if _, err := settings.Of(env.Engine).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{Methods: &methods, DebitCreditorID: &creditorID}); err != nil {
			t.Fatal(err)
		}
		var pay engine.Payment
		if err := db.NewSelect().Model(&pay).Where("order_id = ? AND status = ?", order.ID, engine.PaymentSucceeded).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("provider = ?", payment.DirectDebitProvider).Where("id = ?", pay.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		now := clock.Now().UTC()
		m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: order.UserKey, CreditorID: creditorID, Reference: "TVD-1", Holder: "Demo Household",
			IBAN: "DE02120300000000202051", Language: "en", Text: "…", TextVersion: "v", SignedAt: now}
		run := &payment.DebitRun{OrganisationID: 1, MessageID: "DD-1-1", FileVersion: "pain.008.001.08", UntilOn: now, Status: payment.DebitRunSent,
			DebitCount: 1, Currency: "EUR", File: []byte("<Document/>"), CreatedBy: "test", CreatedAt: now, SentAt: &now}
		for _, row := range []any{m, run} {
			if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		debit := &payment.Debit{RunID: run.ID, OrganisationID: 1, OrderID: order.ID, PaymentID: pay.ID, MandateID: m.ID, EndToEndID: "E2E-STAFF-1",
			AmountMinor: order.TotalMinor, Currency: "EUR", DueOn: now, Sequence: banking.SequenceFirst, Status: payment.DebitCollected}
		if _, err := db.NewInsert().Model(debit).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		file := handlertest.Camt053Return(string(handlertest.StaffCreditor.IBAN), engine.FormatAmount(order.TotalMinor), "MD06", "E2E-STAFF-1", "E2E-NOBODY")
		prev := env.PostFile(tr, "/staff/payments/statement", nil, "camt053.xml", file)
		if prev.Status != http.StatusOK || prev.TestID("statement-preview").Length() != 1 {
			t.Fatalf("preview: %d %s", prev.Status, prev.Body)
		}
		matched := prev.TestID("matched-table").Find(`[data-testid="credit-row"]`)
		if matched.Length() != 1 || matched.Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineWillReturn ||
			matched.Find(`[data-testid="credit-reference"]`).Text() != "E2E-STAFF-1" {
			t.Fatalf("proposed returns: %s", prev.TestID("matched-table").Text())
		}
		if u := prev.TestID("unmatched-table"); !strings.Contains(u.Text(), "unknown direct debit return E2E-NOBODY") {
			t.Fatalf("unknown return not listed: %s", u.Text())
		}
		if got := env.OrderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("the preview changed the order: %s", got)
		}

		confirm := map[string]string{"statement": prev.Doc.Find(`input[name="statement"]`).AttrOr("value", ""), "capture": "1"}
		done := env.PostFile(tr, "/staff/payments/statement", confirm, "", nil)
		if done.Status != http.StatusOK || !strings.HasPrefix(done.TestID("matched-table").Find(`[data-testid="credit-result"]`).Text(), staffview.OpsText.LineReturned) {
			t.Fatalf("confirm: %d %s", done.Status, done.TestID("staff-main").Text())
		}
		if got := env.OrderStatus(order.ID); got != engine.OrderUnpaid {
			t.Fatalf("order after the return: %s", got)
		}
		if env.AuditActions("payment.debit_return") != 1 {
			t.Fatal("the return was not audited")
		}
		// The audit entry says the status change in words, as a capture's does.
		audit := env.Get(tr, "/staff/audit?action=payment.debit_return")
		change := handlertest.Squash(handlertest.SpacedText(audit.Doc.Find(`[data-testid="audit-row"][data-action="payment.debit_return"] [data-testid="audit-change"]`)))
		for _, want := range []string{"Order status Paid → Unpaid", "Payment status Succeeded → Failed"} {
			if !strings.Contains(change, want) {
				t.Errorf("the return's audit entry does not say %q: %s", want, change)
			}
		}
		for _, raw := range []string{"SUCCEEDED", "FAILED", "PAID", "UNPAID"} {
			if strings.Contains(change, raw) {
				t.Errorf("the return's audit entry shows %q: %s", raw, change)
			}
		}
		p := env.Get(tr, "/staff/payments")
		if p.TestID("attention-reason").First().Text() != staffview.OpsText.AttentionReturned ||
			!strings.Contains(p.TestID("attention-table").Text(), banking.ReturnReasonText("MD06", "en")) {
			t.Fatalf("returned debit not listed with its reason: %s", p.TestID("staff-main").Text())
		}
		// The registration's history says it in words, with the message sent.
		reg := env.Get(tr, fmt.Sprintf("/staff/registrations/%d", order.ProcessInstanceID))
		body := reg.Doc.Text()
		if want := fmt.Sprintf(staffview.RegistrationText.EvReturned, ""); reg.Status != http.StatusOK || !strings.Contains(body, want) ||
			!strings.Contains(body, staffview.RegistrationText.MsgDebitReturned) || !strings.Contains(body, banking.ReturnReasonText("MD06", "en")) {
			t.Fatalf("registration history: %d %s", reg.Status, reg.TestID("staff-main").Text())
		}
	})
}
