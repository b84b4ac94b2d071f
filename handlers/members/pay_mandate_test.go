package members_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// anotherOrder is another unpaid order of the household of like (its next
// season, a renewal), in a registration of its own, with no mandate yet.
func anotherOrder(t *testing.T, db *bun.DB, like engine.Order, ref string) engine.Order {
	t.Helper()
	ctx := context.Background()
	var inst engine.ProcessInstance
	if err := db.NewSelect().Model(&inst).Where("id = ?", like.ProcessInstanceID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	inst.ID, inst.Status = 0, engine.StateCompleted
	if _, err := db.NewInsert().Model(&inst).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := like
	o.ID, o.ProcessInstanceID, o.PayReference, o.PaymentMethod, o.DebitMandateID, o.DebitDueOn, o.Lines = 0, inst.ID, ref, "", nil, nil, nil
	if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestMandateChoicesPage: the household's mandate is offered on the pay
// link of its next direct-debit order with its holder, masked account,
// reference and date, and three plain forms. Keeping it (twice) makes the
// order due and shows it given with its date; a bad IBAN in a change is
// shown at its field as typed and changes nothing, a good one changes the
// account; revoking it brings the methods back and then the form for a new
// mandate. Staff (treasurer) see it ended, revoke the new one after a
// question that says what it does; a viewer has no button; an unknown
// mandate is not found.
func TestMandateChoicesPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		if _, err := settings.Of(env.Engine).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
			BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.NewClient()
		f := env.CompleteDemo(c)
		u, _ := url.Parse(*f.PaymentURL)
		debit := env.Post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}})
		action := debit.Doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		if r := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}, "consent": {"1"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("mandate: %d\n%s", r.Status, r.Body)
		}
		var first engine.Order
		if err := db.NewSelect().Model(&first).Where("pay_reference = ?", strings.TrimPrefix(u.Path, "/pay/")).Scan(ctx); err != nil || first.DebitMandateID == nil {
			t.Fatalf("first order %+v %v", first, err)
		}
		m := directdebit.DebitMandate{ID: *first.DebitMandateID}
		if err := db.NewSelect().Model(&m).WherePK().Scan(ctx); err != nil {
			t.Fatal(err)
		}

		// The next season's order: the methods, then the mandate offered.
		next := anotherOrder(t, db, first, "NEXTSEASON1")
		if choose := env.Get(c, "/pay/NEXTSEASON1"); choose.TestID("pay-choose").Length() != 1 {
			t.Fatalf("the next order's pay link: %d\n%s", choose.Status, choose.Body)
		}
		held := env.Post(c, "/pay/NEXTSEASON1", url.Values{"paymentMethod": {"direct_debit"}})
		if held.Status != http.StatusOK || held.TestID("mandate-held").Length() != 1 || held.TestID("held-reference").Text() != m.Reference ||
			held.TestID("held-account").Text() != "DE89 … 3000" || held.TestID("held-holder").Text() != "Alex Example" || held.TestID("held-signed").Text() == "" ||
			held.TestID("mandate-sign").Length() != 0 {
			t.Fatalf("the offered mandate: %d\n%s", held.Status, held.Body)
		}
		form := func(p handlertest.Page, testid string) (string, url.Values) {
			t.Helper()
			f := p.Doc.Find(`[data-testid="` + testid + `"]`).Closest("form")
			return f.AttrOr("action", ""), url.Values{"mandate": {f.Find(`input[name="mandate"]`).AttrOr("value", "")}}
		}
		keepURL, keep := form(held, "mandate-keep")
		for range 2 {
			if r := env.Post(c, keepURL, keep); r.Status != http.StatusSeeOther {
				t.Fatalf("keep: %d\n%s", r.Status, r.Body)
			}
		}
		given := env.Get(c, "/pay/NEXTSEASON1")
		if given.TestID("mandate-reference").Text() != m.Reference || given.TestID("mandate-due").Text() == "" || given.TestID("mandate-held").Length() != 0 {
			t.Fatalf("after keeping:\n%s", given.Body)
		}
		if err := db.NewSelect().Model(&next).WherePK().Scan(ctx); err != nil || next.DebitMandateID == nil || *next.DebitMandateID != m.ID || next.DebitDueOn == nil {
			t.Fatalf("kept order %+v %v", next, err)
		}

		// A third order: a bad IBAN, then the account changed.
		anotherOrder(t, db, first, "NEXTSEASON2")
		held = env.Post(c, "/pay/NEXTSEASON2", url.Values{"paymentMethod": {"direct_debit"}})
		changeURL, change := form(held, "mandate-change")
		change.Set("holder", "Robin Example")
		change.Set("iban", "DE00 1203 0000 0000 2020 51")
		change.Set("consent", "1")
		bad := env.Post(c, changeURL, change)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-mandate-iban").Length() != 1 || bad.Doc.Find("#mandate-holder").AttrOr("value", "") != "Robin Example" {
			t.Fatalf("a bad IBAN: %d\n%s", bad.Status, bad.Body)
		}
		var after directdebit.DebitMandate
		if err := db.NewSelect().Model(&after).Where("id = ?", m.ID).Scan(ctx); err != nil || after.IBAN != m.IBAN || after.PreviousIBAN != "" {
			t.Fatalf("a refused change changed the mandate: %+v %v", after, err)
		}
		change.Set("iban", "DE02 1203 0000 0000 2020 51")
		if r := env.Post(c, changeURL, change); r.Status != http.StatusSeeOther {
			t.Fatalf("change: %d\n%s", r.Status, r.Body)
		}
		if err := db.NewSelect().Model(&after).Where("id = ?", m.ID).Scan(ctx); err != nil || after.IBAN != "DE02120300000000202051" ||
			after.PreviousIBAN != m.IBAN || after.Holder != "Robin Example" {
			t.Fatalf("changed mandate: %+v %v", after, err)
		}
		if p := env.Get(c, "/pay/NEXTSEASON2"); p.TestID("mandate-account").Text() != "DE02 … 2051" {
			t.Fatalf("after the change:\n%s", p.Body)
		}

		// Revoked from the first order's page (its debit came back, say).
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_due_on = NULL").Where("id = ?", first.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		held = env.Post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}})
		revokeURL, revoke := form(held, "mandate-revoke")
		for range 2 {
			if r := env.Post(c, revokeURL, revoke); r.Status != http.StatusSeeOther {
				t.Fatalf("revoke: %d\n%s", r.Status, r.Body)
			}
		}
		if p := env.Get(c, "/pay/NEXTSEASON2"); p.TestID("pay-choose").Length() != 1 {
			t.Fatalf("after the revocation the methods are offered again:\n%s", p.Body)
		}
		fresh := env.Post(c, "/pay/NEXTSEASON2", url.Values{"paymentMethod": {"direct_debit"}})
		if fresh.TestID("mandate-sign").Length() != 1 || fresh.TestID("mandate-held").Length() != 0 {
			t.Fatalf("after the revocation a new mandate is asked for:\n%s", fresh.Body)
		}
		action = fresh.Doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		if r := env.Post(c, action, url.Values{"holder": {"Robin Example"}, "iban": {"DE02120300000000202051"}, "consent": {"1"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("a new mandate: %d\n%s", r.Status, r.Body)
		}
		var m2 directdebit.DebitMandate
		if err := db.NewSelect().Model(&m2).Where("revoked_at IS NULL").Scan(ctx); err != nil || m2.ID == m.ID {
			t.Fatalf("the new mandate %+v %v", m2, err)
		}

		// Staff: the first registration shows the ended mandate, the
		// third's the new one with its revocation.
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		treasurer := env.MustStaffSignIn("treasurer@example.org", "/staff")
		if d := env.Get(treasurer, "/staff/registrations/"+f.ProcessID); !strings.Contains(d.TestID("detail-mandate-ended").Text(), "revoked by the member") ||
			d.TestID("detail-mandate-revoke").Length() != 0 {
			t.Fatalf("the ended mandate for staff:\n%s", d.TestID("detail-mandate").Text())
		}
		var third engine.Order
		if err := db.NewSelect().Model(&third).Where("pay_reference = ?", "NEXTSEASON2").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		regPath := "/staff/registrations/" + strconv.FormatInt(third.ProcessInstanceID, 10)
		if d := env.Get(viewer, regPath); d.TestID("detail-mandate").Length() != 1 || d.TestID("detail-mandate-revoke").Length() != 0 {
			t.Fatalf("a viewer may not revoke:\n%s", d.Body)
		}
		d := env.Get(treasurer, regPath)
		btn := d.TestID("detail-mandate-revoke").Closest("form")
		revokeAction := btn.AttrOr("action", "")
		fields := url.Values{"registration": {btn.Find(`input[name="registration"]`).AttrOr("value", "")}}
		if r := env.Post(viewer, revokeAction, fields, "Origin", env.Server.URL); r.Status != http.StatusForbidden {
			t.Fatalf("a viewer revoking: %d", r.Status)
		}
		ask := env.Post(treasurer, revokeAction, fields, "Origin", env.Server.URL)
		if ask.Status != http.StatusOK || !strings.Contains(string(ask.Body), m2.Reference) || !strings.Contains(string(ask.Body), "Yes, revoke the mandate") {
			t.Fatalf("the question: %d\n%s", ask.Status, ask.Body)
		}
		fields.Set("confirmed", "1")
		done := env.Post(treasurer, revokeAction, fields, "Origin", env.Server.URL)
		if done.Status != http.StatusSeeOther || !strings.HasSuffix(done.Header.Get("Location"), regPath+"?done=mandate-revoked") {
			t.Fatalf("revoked: %d %s", done.Status, done.Header.Get("Location"))
		}
		if err := db.NewSelect().Model(&m2).WherePK().Scan(ctx); err != nil || m2.RevokedAt == nil || m2.EndReason != directdebit.MandateEndRevokedByStaff {
			t.Fatalf("revoked by staff: %+v %v", m2, err)
		}
		if r := env.Post(treasurer, "/staff/mandates/999999/revoke", url.Values{"confirmed": {"1"}}, "Origin", env.Server.URL); r.Status != http.StatusNotFound {
			t.Fatalf("an unknown mandate: %d", r.Status)
		}
	})
}

// TestDirectDebitOnlyMethodGoesToMandateForm: a club whose only method is
// direct debit (API 3.0.0) asks its members for nothing to choose: the pay
// link of the committed registration is the mandate form, and the mandate
// given makes the order due for the next collection run.
func TestDirectDebitOnlyMethodGoesToMandateForm(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		if _, err := settings.Of(env.Engine).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
			BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &[]string{"direct_debit"}, DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.NewClient()
		f := env.CompleteDemo(c)
		if f.PaymentURL == nil {
			t.Fatal("no pay link after the commit")
		}
		u, _ := url.Parse(*f.PaymentURL)
		pay := env.Get(c, u.Path)
		action := pay.Doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		if pay.Status != http.StatusOK || pay.TestID("pay-choose").Length() != 0 || action == "" {
			t.Fatalf("the pay link of a direct-debit-only club: %d\n%s", pay.Status, pay.Body)
		}
		if r := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}, "consent": {"1"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("mandate: %d\n%s", r.Status, r.Body)
		}
		var o engine.Order
		if err := db.NewSelect().Model(&o).Where("pay_reference = ?", strings.TrimPrefix(u.Path, "/pay/")).Scan(ctx); err != nil ||
			o.PaymentMethod != "direct_debit" || o.DebitMandateID == nil || o.DebitDueOn == nil {
			t.Fatalf("order after the mandate: %+v %v", o, err)
		}
	})
}
