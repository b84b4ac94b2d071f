package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banking/schematest"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/outbound/mail/mailtest"
)

// TestE2EDirectDebitSeason: a club's season collected by SEPA direct
// debit, in Chromium with axe on the new pages: two households choose
// direct debit, one in German and one in French; each gives the mandate on
// its pay link (the French one first forgets the consent, which stores
// nothing); both get the mandate e-mail with its PDF over SMTP; the
// treasurer prepares a run, downloads the pain.008 file (valid against
// the ISO 20022 schema, its sum the two orders'), marks it sent and both
// registrations complete; the bank's statement returns the French
// household's debit with MD06: the member is told in French with the pay
// link and the club's fee, and a second run collects nothing; the member
// changes the account on the pay link and the next run collects amount
// and fee with the amendment stated; next season the German household
// keeps its mandate and the run collects it as a recurring debit.
func TestE2EDirectDebitSeason(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffBankEnv(t, dbtest.SQLite(t), true)
	ctx := context.Background()
	methods, creditorID, fee := []string{payment.BankTransferProvider, payment.DirectDebitProvider}, "DE98ZZZ09999999999", int64(350)
	if _, err := settings.Of(env.Engine).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{Methods: &methods, DebitCreditorID: &creditorID,
		DebitReturnFeeMinor: &fee}); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	post := newStaffMail(t, env)
	german := &enginetest.Demo{T: t, DB: env.DB, Svc: env.Env.Engine, Language: "de"}
	french := &enginetest.Demo{T: t, DB: env.DB, Svc: env.Env.Engine, Language: "fr"}
	orderA := debitOrderOf(t, env, german, engine.DemoUserKey, 1)
	orderB := debitOrderOf(t, env, french, "demo-1", 5)
	sent := 0
	deliver := func(n int) []mailtest.Received {
		t.Helper()
		got := post.deliver(t, sent+n)
		out := got[sent:]
		sent += n
		return out
	}

	b := newE2EBrowser(t, env.Env, "direct-debit", true, true)
	// The German household signs the mandate on its pay link.
	openDebitPage(b, orderA, "de")
	b.waitVisible(`[data-testid=mandate]`)
	if text := b.text(`[data-testid=mandate-text]`); !strings.Contains(text, "SEPA-Lastschriftmandat") || !strings.Contains(text, creditorID) {
		t.Fatalf("mandate text in German: %q", text)
	}
	b.checkPage("pay-direct-debit-de")
	signMandate(b, "Alex Morgan", "DE89 3704 0044 0532 0130 00")
	b.checkPage("pay-direct-debit-given-de")

	// The French household forgets the consent first: nothing is stored.
	openDebitPage(b, orderB, "fr")
	b.waitVisible(`[data-testid=mandate]`)
	b.typeInto(`#mandate-holder`, "Camille Martin")
	b.typeInto(`#mandate-iban`, "DE02 1203 0000 0000 2020 51")
	b.clickTo(`[data-testid=mandate-sign]`, `[data-testid=error-summary]`)
	if n, err := env.DB.NewSelect().Model((*directdebit.DebitMandate)(nil)).Where("user_key = 'demo-1'").Count(ctx); err != nil || n != 0 {
		t.Fatalf("a mandate without consent was stored (%d, %v)", n, err)
	}
	b.checkPage("pay-direct-debit-error-fr")
	b.click(`#mandate-consent`)
	b.clickTo(`[data-testid=mandate-sign]`, `[data-testid=mandate-given]`)
	b.checkPage("pay-direct-debit-given-fr")
	mandateA, mandateB := mandateOf(t, env, engine.DemoUserKey), mandateOf(t, env, "demo-1")

	// Each household's mandate e-mail, in its language, with the PDF.
	words := map[string]string{mandateA.Reference: "Vorabankündigung", mandateB.Reference: "notification préalable"}
	for _, m := range deliver(2) {
		text := handlertest.PlainPart(t, m.Data)
		ref := mandateA.Reference
		if strings.Contains(text, mandateB.Reference) {
			ref = mandateB.Reference
		}
		if !strings.Contains(string(m.Data), "application/pdf") || !strings.Contains(text, creditorID) || !strings.Contains(strings.ToLower(text), strings.ToLower(words[ref])) {
			t.Errorf("mandate e-mail %s without the PDF, the creditor identifier or its language:\n%s", ref, text)
		}
	}

	// The treasurer prepares the run, downloads its file and marks it sent.
	staffBrowserSignIn(env, b, "treasurer@example.org", `[data-testid=overview-states]`)
	b.navigate("/staff/debits")
	b.waitVisible(`[data-testid=debits-prepare-form]`)
	b.checkPage("staff-debits")
	run := prepareRun(t, b, 2)
	file := downloadRun(t, b)
	checkRunFile(t, file, orderA.TotalMinor+orderB.TotalMinor, map[string]string{mandateA.Reference: "FRST", mandateB.Reference: "FRST"})
	markRunSent(b)
	for _, o := range []engine.Order{orderA, orderB} {
		if got := env.OrderStatus(o.ID); got != engine.OrderPaid {
			t.Fatalf("order %d after the run was sent: %s", o.ID, got)
		}
	}
	// The two confirmations say the club collects the total on the due
	// date, in each household's language, not that a payment arrived.
	collects := map[bool]string{true: "per SEPA-Lastschrift von Ihrem Konto ein", false: "par prélèvement SEPA le"}
	for _, m := range deliver(2) {
		text := handlertest.PlainPart(t, m.Data)
		german := strings.Contains(text, "Mitgliedschaften")
		if !strings.Contains(text, collects[german]) || strings.Contains(text, "ist eingegangen") || strings.Contains(text, "est arrivé") {
			t.Errorf("confirmation after the run was sent does not say the debit is collected on its due date:\n%s", text)
		}
	}

	// The bank returns the French household's debit (MD06, a refund the
	// debtor asked for).
	var debitB payment.Debit
	if err := env.DB.NewSelect().Model(&debitB).Where("run_id = ? AND order_id = ?", run, orderB.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	statement := filepath.Join(t.TempDir(), "camt053.xml")
	if err := os.WriteFile(statement, handlertest.Camt053Return(string(handlertest.StaffCreditor.IBAN), engine.FormatAmount(orderB.TotalMinor), "MD06", debitB.EndToEndID), 0o644); err != nil {
		t.Fatal(err)
	}
	b.navigate("/staff/payments")
	b.waitVisible(`#statement-file`)
	b.do("choose the statement", chromedp.SetUploadFiles(`#statement-file`, []string{statement}))
	b.click(`[data-testid=statement-upload]`)
	b.waitVisible(`[data-testid=statement-preview]`)
	b.click(`[data-testid=statement-capture]`)
	b.waitVisible(`[data-testid=statement-result]`)
	b.checkPage("staff-statement-return")
	if got := env.OrderStatus(orderB.ID); got != engine.OrderUnpaid {
		t.Fatalf("the returned order: %s", got)
	}
	told := handlertest.PlainPart(t, deliver(1)[0].Data)
	if !strings.Contains(told, "/pay/"+orderB.PayReference) || !strings.Contains(told, banking.ReturnReasonText("MD06", "fr")) {
		t.Fatalf("the return e-mail is not the French one with the pay link:\n%s", told)
	}

	// A second run collects nothing: the returned debit waits for the member.
	b.navigate("/staff/debits")
	b.waitVisible(`[data-testid=debits-prepare-form]`)
	b.clickTo(`[data-testid=debits-prepare-button]`, `[data-testid=debits-notice]`)

	// The member gives another account on the pay link.
	openDebitPage(b, orderB, "fr")
	b.waitVisible(`[data-testid=mandate-held]`)
	b.checkPage("pay-direct-debit-held-fr")
	b.typeInto(`[data-testid=mandate-change-form] #mandate-holder`, "Camille Martin")
	b.typeInto(`[data-testid=mandate-change-form] #mandate-iban`, "FR76 3000 6000 0112 3456 7890 189")
	b.click(`[data-testid=mandate-change-consent]`)
	b.clickTo(`[data-testid=mandate-change]`, `[data-testid=mandate-given]`)
	deliver(1) // the mandate e-mail with the new account

	b.navigate("/staff/debits")
	b.waitVisible(`[data-testid=debits-prepare-form]`)
	prepareRun(t, b, 1)
	file = downloadRun(t, b)
	checkRunFile(t, file, orderB.TotalMinor+fee, map[string]string{mandateB.Reference: "RCUR"})
	if !strings.Contains(string(file), "<AmdmntInd>true</AmdmntInd>") || !strings.Contains(string(file), "SMNDA") {
		t.Errorf("the changed account is not stated as an amendment:\n%s", file)
	}
	markRunSent(b)
	if got := env.OrderStatus(orderB.ID); got != engine.OrderPaid {
		t.Fatalf("the returned order after the next run: %s", got)
	}
	deliver(1) // its confirmation

	// Next season: the German household keeps its mandate.
	german.OpenNextPeriod()
	german.Period = enginetest.NextPeriodID
	orderA2 := debitOrderOf(t, env, german, engine.DemoUserKey, 1)
	openDebitPage(b, orderA2, "de")
	b.waitVisible(`[data-testid=mandate-held]`)
	if got := b.text(`[data-testid=held-reference]`); got != mandateA.Reference {
		t.Fatalf("the held mandate %q, want %q", got, mandateA.Reference)
	}
	b.checkPage("pay-direct-debit-held-de")
	b.clickTo(`[data-testid=mandate-keep]`, `[data-testid=mandate-given]`)
	b.navigate("/staff/debits")
	b.waitVisible(`[data-testid=debits-prepare-form]`)
	b.do("gather the next season's", chromedp.SetValue(`[data-testid=debits-until]`, orderDue(t, env, orderA2.ID)))
	prepareRun(t, b, 1)
	checkRunFile(t, downloadRun(t, b), orderA2.TotalMinor, map[string]string{mandateA.Reference: "RCUR"})
	markRunSent(b)
	if got := env.OrderStatus(orderA2.ID); got != engine.OrderPaid {
		t.Fatalf("next season's order: %s", got)
	}
}

// debitOrderOf commits a registration of the household choosing direct
// debit and returns its order.
func debitOrderOf(t *testing.T, env *handlertest.StaffEnv, d *enginetest.Demo, userKey string, persons ...int64) engine.Order {
	t.Helper()
	d.CommitPayingBy(payment.DirectDebitProvider, userKey, persons...)
	var o engine.Order
	if err := env.DB.NewSelect().Model(&o).Where("user_key = ? AND payment_method = ?", userKey, payment.DirectDebitProvider).
		Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

// mandateOf is the household's mandate.
func mandateOf(t *testing.T, env *handlertest.StaffEnv, userKey string) directdebit.DebitMandate {
	t.Helper()
	var m directdebit.DebitMandate
	if err := env.DB.NewSelect().Model(&m).Where("user_key = ?", userKey).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// orderDue is the date an order is due on, as the run form takes it.
func orderDue(t *testing.T, env *handlertest.StaffEnv, id int64) string {
	t.Helper()
	var o engine.Order
	if err := env.DB.NewSelect().Model(&o).Where("id = ?", id).Scan(context.Background()); err != nil || o.DebitDueOn == nil {
		t.Fatalf("order %d has no due date (%v)", id, err)
	}
	return o.DebitDueOn.Format("2006-01-02")
}

// openDebitPage follows an order's pay link in a language: the club's
// methods are offered with direct debit chosen (the member's choice at
// the review), and continuing leads to the mandate.
func openDebitPage(b *e2eBrowser, o engine.Order, lang string) {
	b.t.Helper()
	b.navigate("/pay/" + o.PayReference + "?lang=" + lang)
	b.waitVisible(`html[lang=` + lang + `] [data-testid=payment-methods]`)
	if !b.checked(`[data-testid=payment-method-direct_debit]`) {
		b.t.Errorf("the pay link of %s does not offer direct debit as chosen", o.PayReference)
	}
	b.clickTo(`[data-testid=pay-continue]`, `html[lang=`+lang+`] [data-testid=pay-by-debit]`)
}

// signMandate fills in and signs the mandate form of the pay link.
func signMandate(b *e2eBrowser, holder, iban string) {
	b.t.Helper()
	b.typeInto(`#mandate-holder`, holder)
	b.typeInto(`#mandate-iban`, iban)
	b.click(`#mandate-consent`)
	b.clickTo(`[data-testid=mandate-sign]`, `[data-testid=mandate-given]`)
	if b.text(`[data-testid=mandate-due]`) == "" {
		b.t.Error("the signed mandate shows no due date")
	}
}

// prepareRun prepares a run on the runs page and returns its id, on its
// page with n debits.
func prepareRun(t *testing.T, b *e2eBrowser, n int) int64 {
	t.Helper()
	b.clickTo(`[data-testid=debits-prepare-button]`, `[data-testid=debit-run-debits]`)
	if got := b.count(`[data-testid=debit-line]`); got != n {
		t.Fatalf("the run has %d debits, want %d", got, n)
	}
	b.checkPage(fmt.Sprintf("staff-debit-run-%d", n))
	var id int64
	if _, err := fmt.Sscanf(b.location()[strings.LastIndex(b.location(), "/debits/")+len("/debits/"):], "%d", &id); err != nil {
		t.Fatalf("run page %s: %v", b.location(), err)
	}
	return id
}

// downloadRun fetches the run's file as the treasurer's browser gets it.
func downloadRun(t *testing.T, b *e2eBrowser) []byte {
	t.Helper()
	encoded := e2eRun(b, "download the collection file", chromedp.Evaluate[string](
		`fetch(document.querySelector('[data-testid=debit-run-download]').href).then(r => r.arrayBuffer()).then(buf => {
			let s = ""; for (const c of new Uint8Array(buf)) s += String.fromCharCode(c); return btoa(s); })`, chromedp.EvalAwaitPromise))
	file, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// markRunSent marks the run on its page sent, after the question.
func markRunSent(b *e2eBrowser) {
	b.t.Helper()
	b.clickTo(`[data-testid=debit-run-sent]`, `[data-testid=staff-confirm]`)
	b.clickTo(`[data-testid=staff-confirm-yes]`, `[data-testid=staff-flash]`)
}

// checkRunFile holds a collection file to the schema, its sum and each
// mandate's sequence type.
func checkRunFile(t *testing.T, file []byte, totalMinor int64, sequences map[string]string) {
	t.Helper()
	if msg := schematest.Validate(t, "pain.008.001.08.xsd", file); msg != "" {
		t.Fatalf("the collection file is not valid pain.008.001.08: %s\n%s", msg, file)
	}
	var doc struct {
		CtrlSum string `xml:"CstmrDrctDbtInitn>GrpHdr>CtrlSum"`
		PmtInf  []struct {
			SeqTp string   `xml:"PmtTpInf>SeqTp"`
			Mndt  []string `xml:"DrctDbtTxInf>DrctDbtTx>MndtRltdInf>MndtId"`
		} `xml:"CstmrDrctDbtInitn>PmtInf"`
	}
	if err := xml.Unmarshal(file, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CtrlSum != engine.FormatAmount(totalMinor) {
		t.Errorf("the file's sum %s, want %s", doc.CtrlSum, engine.FormatAmount(totalMinor))
	}
	got := map[string]string{}
	for _, p := range doc.PmtInf {
		for _, m := range p.Mndt {
			got[m] = p.SeqTp
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(sequences) {
		t.Errorf("mandates and sequence types %v, want %v", got, sequences)
	}
}
