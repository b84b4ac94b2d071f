package handlers_test

import (
	"bytes"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/views/staffview"
)

// debitRegistration completes the demo registration, chooses direct
// debit on its pay link and gives the mandate, as the member does; it
// returns the registration's id and its order.
func (env *staffEnv) debitRegistration(t *testing.T) (string, engine.Order) {
	t.Helper()
	if _, err := settings.Of(env.svc).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: str("TV Demo 1848 e.V."),
		BankIBAN: str("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
		t.Fatal(err)
	}
	c := env.newClient()
	f := env.completeDemo(c)
	if f.PaymentURL == nil {
		t.Fatal("no pay link")
	}
	u, _ := url.Parse(*f.PaymentURL)
	if p := env.post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}}); p.status != http.StatusOK {
		t.Fatalf("choosing direct debit: %d\n%s", p.status, p.body)
	}
	if _, err := directdebit.Of(env.testEnv.svc).GiveMandate(t.Context(), path.Base(u.Path), directdebit.MandateInput{Holder: "Alex Example",
		IBAN: "DE02 1203 0000 0000 2020 51", Consent: true, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	var o engine.Order
	if err := env.db.NewSelect().Model(&o).Where("pay_reference = ?", path.Base(u.Path)).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if o.DebitDueOn == nil || o.PaymentMethod != payment.DirectDebitProvider {
		t.Fatalf("the order is not collected by direct debit: %+v", o)
	}
	return f.ProcessID, o
}

// TestStaffDebitRuns: a treasurer prepares a collection run on the staff
// pages (nothing due by an early date is said as such); the list and the
// run's page show it with its debit; its file downloads unchanged, twice;
// a viewer looks but cannot download, prepare, cancel or mark sent;
// another club's run is not found; a cancelled run frees its debit for
// the next run; marking that one sent (after the question) completes
// the registration and says so, a sent run still downloads, and the
// audit log links the run.
func TestStaffDebitRuns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		registration, order := env.debitRegistration(t)
		origin := []string{"Origin", env.srv.URL}
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		env.addStaff("viewer@example.org", staff.RoleViewer)
		treasurer := env.mustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")

		payments := env.get(treasurer, "/staff/payments")
		if payments.testid("payments-debits-link").AttrOr("href", "") != "/staff/debits" {
			t.Fatalf("the payments page does not link the runs:\n%s", payments.body)
		}
		list := env.get(treasurer, "/staff/debits")
		if list.status != http.StatusOK || list.testid("debits-prepare-form").Length() != 1 || list.testid("debits-empty").Length() != 1 ||
			list.testid("debits-until").AttrOr("value", "") != directdebit.DefaultCollectionUntil(clock.Now()).Format(time.DateOnly) {
			t.Fatalf("runs page: %d\n%s", list.status, list.body)
		}
		if p := env.get(viewer, "/staff/debits"); p.status != http.StatusOK || p.testid("debits-prepare-form").Length() != 0 {
			t.Fatalf("a viewer's runs page: %d\n%s", p.status, p.body)
		}
		until := url.Values{"until": {clock.Now().UTC().AddDate(0, 0, 40).Format(time.DateOnly)}}
		if p := env.post(viewer, "/staff/debits", until, origin...); p.status != http.StatusForbidden {
			t.Fatalf("a viewer prepares a run: %d", p.status)
		}

		// Nothing is due yesterday: said on the list, nothing written.
		yesterday := clock.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		nothing := env.post(treasurer, "/staff/debits", url.Values{"until": {yesterday}}, origin...)
		expectRedirect(t, nothing, "/staff/debits?nothing="+yesterday)
		if p := env.get(treasurer, nothing.header.Get("Location")); p.status != http.StatusOK || !strings.Contains(p.testid("debits-notice").Text(), "No direct debit is due") {
			t.Fatalf("nothing due: %d\n%s", p.status, p.body)
		}
		if p := env.post(treasurer, "/staff/debits", url.Values{"until": {"soon"}}, origin...); p.status != http.StatusUnprocessableEntity {
			t.Fatalf("a date that is none: %d", p.status)
		}
		if env.auditActions("debit_run.create") != 0 {
			t.Fatal("a run was written")
		}

		prepared := env.post(treasurer, "/staff/debits", until, origin...)
		runs, err := directdebit.Of(env.testEnv.svc).DebitRuns(ctx, 1)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %+v %v", runs, err)
		}
		first := runs[0]
		runPath := "/staff/debits/" + strconv.FormatInt(first.ID, 10)
		expectRedirect(t, prepared, runPath+"?done=debit-run-prepared")
		list = env.get(treasurer, "/staff/debits")
		row := list.testid("debit-run-row")
		if row.Length() != 1 || row.AttrOr("data-status", "") != "prepared" || row.Find(`[data-testid="debit-run-link"]`).AttrOr("href", "") != runPath ||
			row.Find(`[data-testid="debit-run-count"]`).Text() != "1" || !strings.Contains(row.Find(`[data-testid="debit-run-by"]`).Text(), "treasurer@example.org") {
			t.Fatalf("the list:\n%s", list.testid("debit-runs-table").Text())
		}
		runPage := env.get(treasurer, prepared.header.Get("Location"))
		line := runPage.testid("debit-line")
		if runPage.status != http.StatusOK || !strings.Contains(runPage.testid("staff-flash").Text(), "prepared") || line.Length() != 1 ||
			line.Find(`[data-testid="debit-registration"]`).AttrOr("href", "") != "/staff/registrations/"+registration ||
			line.Find(`[data-testid="debit-iban"]`).Text() != directdebit.MaskedIBAN("DE02120300000000202051") ||
			line.Find(`[data-testid="debit-holder"]`).Text() != "Alex Example" || !strings.Contains(line.Find(`[data-testid="debit-sequence"]`).Text(), "FRST") ||
			runPage.testid("debit-run-sent").Length() != 1 || runPage.testid("debit-run-cancel").Length() != 1 || runPage.testid("debit-run-download").Length() != 1 {
			t.Fatalf("run page: %d\n%s", runPage.status, runPage.body)
		}
		if p := env.get(viewer, runPath); p.status != http.StatusOK || p.testid("debit-line").Length() != 1 || p.testid("debit-run-actions").Length() != 0 {
			t.Fatalf("a viewer's run page: %d\n%s", p.status, p.body)
		}

		// The file, twice, as stored.
		stored, err := directdebit.Of(env.testEnv.svc).DebitRunByID(ctx, 1, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			f := env.do(treasurer, http.MethodGet, runPath+"/file", nil)
			if f.status != http.StatusOK || !bytes.Equal(f.body, stored.Run.File) || f.header.Get("Content-Type") != "application/xml" ||
				f.header.Get("Content-Disposition") != `attachment; filename="`+directdebit.DebitRunFileName(stored.Run)+`"` {
				t.Fatalf("download: %d %v", f.status, f.header)
			}
		}
		// Each download of every debtor's account is in the access log.
		if rows := bulkReads(t, db, 1, "debit-runs/"); len(rows) != 2 || rows[0].RecordID != "debit-runs/"+strconv.FormatInt(first.ID, 10)+"/file" ||
			rows[1].Actor != "treasurer@example.org" {
			t.Fatalf("access log of the downloads: %+v", rows)
		}

		// A viewer looks, but does not act.
		for _, p := range []string{"/file"} {
			if res := env.get(viewer, runPath+p); res.status != http.StatusForbidden {
				t.Fatalf("a viewer downloads: %d", res.status)
			}
		}
		for _, action := range []string{"/sent", "/cancel"} {
			if res := env.post(viewer, runPath+action, url.Values{"confirmed": {"1"}}, origin...); res.status != http.StatusForbidden {
				t.Fatalf("a viewer posts %s: %d", action, res.status)
			}
		}

		// Another club's run is not found.
		if _, err := db.NewInsert().Model(&engine.Organisation{ID: 2, Name: "Hillside Hockey Club", Slug: "hillside", DefaultLanguage: "en"}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		other := &payment.DebitRun{OrganisationID: 2, MessageID: "DD-2-X", FileVersion: "pain.008.001.08", UntilOn: clock.Now().UTC(),
			Status: payment.DebitRunPrepared, Currency: "EUR", File: []byte("<Document/>"), CreatedBy: "someone", CreatedAt: clock.Now().UTC()}
		if _, err := db.NewInsert().Model(other).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		otherPath := "/staff/debits/" + strconv.FormatInt(other.ID, 10)
		for _, res := range []page{env.get(treasurer, otherPath), env.get(treasurer, otherPath+"/file"),
			env.post(treasurer, otherPath+"/sent", url.Values{"confirmed": {"1"}}, origin...),
			env.post(treasurer, otherPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...)} {
			if res.status != http.StatusNotFound {
				t.Fatalf("another club's run: %d", res.status)
			}
		}

		// Its debit is in the prepared run: nothing more is due, and the list says why.
		if p := env.post(treasurer, "/staff/debits", until, origin...); p.status != http.StatusSeeOther ||
			!strings.Contains(env.get(treasurer, p.header.Get("Location")).testid("debits-notice").Text(), "send or cancel that run first") {
			t.Fatalf("nothing due with a prepared run: %d", p.status)
		}

		// Cancelled after the question: the debit is due again.
		ask := env.post(treasurer, runPath+"/cancel", nil, origin...)
		if ask.status != http.StatusOK || !strings.Contains(ask.testid("staff-confirm").Text(), "due again for the next run") {
			t.Fatalf("cancel question: %d\n%s", ask.status, ask.body)
		}
		expectRedirect(t, env.post(treasurer, runPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...), runPath+"?done=debit-run-cancelled")
		expectRedirect(t, env.post(treasurer, runPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...), runPath+"?done=debit-run-already-cancelled")
		if p := env.post(treasurer, runPath+"/sent", url.Values{"confirmed": {"1"}}, origin...); p.status != http.StatusConflict ||
			!strings.Contains(p.testid("staff-main").Text(), "was cancelled") {
			t.Fatalf("a cancelled run marked sent: %d\n%s", p.status, p.body)
		}
		// Its file is not handed out any more.
		if p := env.get(treasurer, runPath+"/file"); p.status != http.StatusConflict || !strings.Contains(p.testid("staff-main").Text(), staffview.DebitText.IsCancelled) {
			t.Fatalf("a cancelled run's file: %d\n%s", p.status, p.body)
		}
		// In German, the refusal is German too.
		env.addStaff("kasse@example.org", staff.RoleTreasurer)
		german := env.mustStaffSignIn("kasse@example.org", "/staff")
		expectRedirect(t, env.get(german, "/staff?lang=de"), "/staff")
		if p := env.post(german, runPath+"/sent", url.Values{"confirmed": {"1"}}, origin...); p.status != http.StatusConflict ||
			!strings.Contains(p.testid("staff-main").Text(), "wurde storniert") {
			t.Fatalf("a cancelled run marked sent, in German: %d\n%s", p.status, p.body)
		}
		if p := env.get(german, runPath); !strings.Contains(p.testid("debit-run-status").Text(), "Storniert") ||
			!strings.Contains(p.testid("debit-line").Text(), "Mit dem Einzug zurückgezogen") {
			t.Fatalf("the cancelled run in German:\n%s", p.body)
		}
		if p := env.get(treasurer, runPath); p.testid("debit-run-status").AttrOr("data-status", "") != "cancelled" || p.testid("debit-run-actions").Length() != 0 {
			t.Fatalf("the cancelled run:\n%s", p.body)
		}
		again := env.post(treasurer, "/staff/debits", until, origin...)
		if again.status != http.StatusSeeOther {
			t.Fatalf("the next run: %d\n%s", again.status, again.body)
		}
		runs, _ = directdebit.Of(env.testEnv.svc).DebitRuns(ctx, 1)
		if len(runs) != 2 || runs[0].ID == first.ID || runs[0].DebitCount != 1 {
			t.Fatalf("runs after the cancel %+v", runs)
		}
		secondPath := "/staff/debits/" + strconv.FormatInt(runs[0].ID, 10)

		// Marked sent after the question: the registration completes.
		ask = env.post(treasurer, secondPath+"/sent", nil, origin...)
		if ask.status != http.StatusOK || !strings.Contains(ask.testid("staff-confirm").Text(), "settles the run's payments as paid (1)") {
			t.Fatalf("sent question: %d\n%s", ask.status, ask.body)
		}
		sent := env.post(treasurer, secondPath+"/sent", url.Values{"confirmed": {"1"}}, origin...)
		expectRedirect(t, sent, secondPath+"?done=debit-run-sent&settled=1")
		if p := env.get(treasurer, sent.header.Get("Location")); !strings.Contains(p.testid("staff-flash").Text(), "Registrations completed: 1.") ||
			p.testid("debit-run-status").AttrOr("data-status", "") != "sent" || p.testid("debit-run-sent").Length() != 0 ||
			p.testid("debit-run-download").Length() != 1 || p.testid("debit-line").AttrOr("data-status", "") != "collected" {
			t.Fatalf("the sent run:\n%s", p.body)
		}
		if st := env.orderStatus(order.ID); st != engine.OrderPaid {
			t.Fatalf("order %s after the run was sent", st)
		}
		expectRedirect(t, env.post(treasurer, secondPath+"/sent", url.Values{"confirmed": {"1"}}, origin...), secondPath+"?done=debit-run-already-sent")
		if p := env.post(treasurer, secondPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...); p.status != http.StatusConflict {
			t.Fatalf("a sent run cancelled: %d", p.status)
		}
		if f := env.do(treasurer, http.MethodGet, secondPath+"/file", nil); f.status != http.StatusOK || len(f.body) == 0 {
			t.Fatalf("a sent run's file: %d", f.status)
		}
		if env.auditActions("debit_run.create") != 2 || env.auditActions("debit_run.cancel") != 1 || env.auditActions("debit_run.send") != 1 {
			t.Fatal("the run actions are not audited")
		}
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		audit := env.get(admin, "/staff/audit")
		if audit.doc.Find(`a[href="`+secondPath+`"]`).Length() == 0 || !strings.Contains(string(audit.body), "marked a direct debit collection run as sent") ||
			!strings.Contains(spacedText(audit.testid("audit-table")), "Sent to the bank") {
			t.Fatalf("the audit log does not name and link the run:\n%s", audit.testid("audit-table").Text())
		}
	})
}

// layoutDebitRun stores a prepared collection run with one debit of the
// demo order, written as the engine writes them, for the layout walk:
// the run's page then shows a debit with the longest identifiers a run
// has, its actions, and a debit left out with the longest reason.
func layoutDebitRun(t *testing.T, db *bun.DB, order engine.Order) int64 {
	t.Helper()
	ctx := t.Context()
	now := clock.Now().UTC()
	// The club collects by direct debit: the runs' page has its form.
	if _, err := settings.Of(engine.NewService(db, nil)).SetPaymentSettings(ctx, order.OrganisationID, settings.PaymentSettingsChange{
		DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
		t.Fatal(err)
	}
	var pay engine.Payment
	if err := db.NewSelect().Model(&pay).Where("order_id = ?", order.ID).Order("id").Limit(1).Scan(ctx); err != nil {
		t.Fatalf("the demo order's payment: %v", err)
	}
	m := &directdebit.DebitMandate{OrganisationID: order.OrganisationID, UserKey: order.UserKey, CreditorID: "DE98ZZZ09999999999",
		Reference: "TVDEMO-MANDATE-000000000000000000001", Holder: "Alexandra Example-Longname", IBAN: "DE02120300000000202051",
		Language: "en", Text: "I authorise the club to collect.", TextVersion: "1", SignedAt: now}
	if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	run := &payment.DebitRun{OrganisationID: order.OrganisationID, MessageID: "DD-1-1", FileVersion: "pain.008.001.08", UntilOn: now.AddDate(0, 0, 14),
		Status: payment.DebitRunPrepared, DebitCount: 1, TotalMinor: order.TotalMinor, Currency: "EUR", File: []byte("<Document/>"),
		CreatedBy: "treasurer@example.org", CreatedAt: now}
	if _, err := db.NewInsert().Model(run).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	d := &payment.Debit{RunID: run.ID, OrganisationID: order.OrganisationID, OrderID: order.ID, PaymentID: pay.ID, MandateID: m.ID,
		EndToEndID: pay.Reference + "-" + strconv.FormatInt(run.ID, 10), AmountMinor: order.TotalMinor, Currency: "EUR",
		DueOn: now.AddDate(0, 0, 14), Sequence: "FRST", Amended: true, Status: payment.DebitInRun}
	if _, err := db.NewInsert().Model(d).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	problem := "it cannot go into a collection file: debtor BIC is required for an account in CH (outside the EEA): " +
		"the member gives the bank's BIC by changing the account on the pay link, or staff revoke the mandate"
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_mandate_id = ?", m.ID).Set("debit_problem = ?", problem).
		Set("debit_problem_run_id = ?", run.ID).Where("id = ?", order.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestStaffDebitRunWarnsOfEndedMandate: a mandate revoked while its debit
// waits in a prepared run is flagged on the run's page, so the treasurer
// does not send a debit the member no longer allows.
func TestStaffDebitRunWarnsOfEndedMandate(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	_, order := env.debitRegistration(t)
	env.addStaff("treasurer@example.org", staff.RoleTreasurer)
	treasurer := env.mustStaffSignIn("treasurer@example.org", "/staff")
	run, err := directdebit.Of(env.testEnv.svc).CollectDebits(t.Context(), directdebit.CollectRequest{OrganisationID: 1, Until: clock.Now().AddDate(0, 2, 0), Actor: engine.CommandLine})
	if err != nil {
		t.Fatal(err)
	}
	runPath := "/staff/debits/" + strconv.FormatInt(run.ID, 10)
	if p := env.get(treasurer, runPath); p.testid("debit-mandate-ended").Length() != 0 {
		t.Fatal("a mandate that holds is flagged")
	}
	if _, err := directdebit.Of(env.testEnv.svc).StaffRevokeMandate(t.Context(), engine.CommandLine, 1, *order.DebitMandateID); err != nil {
		t.Fatal(err)
	}
	if p := env.get(treasurer, runPath); p.testid("debit-mandate-ended").Length() != 1 {
		t.Fatalf("the revoked mandate is not flagged:\n%s", p.testid("debit-run-debits").Text())
	}
}

// TestStaffDebitRunLeavesOutBadDebit: a mandate for a Swiss account without
// its bank's BIC (given before the form asked for it) does not block the
// club's collection: the treasurer's run is prepared with the other debit,
// and its page names the one left out with why; the payments page lists it
// as needing attention, in words; a run in which no debit can go into a
// file is refused, and the list says so and links the payments page.
func TestStaffDebitRunLeavesOutBadDebit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.debitRegistration(t)
		svc := engine.NewService(env.db, env.gw, orgPayments(env.db, envOptions{}, env.gw)...)
		(&enginetest.Demo{T: t, DB: env.db, Svc: svc}).CommitPayingBy(payment.DirectDebitProvider, "demo-1", 5)
		var swissOrder engine.Order
		if err := env.db.NewSelect().Model(&swissOrder).Where("user_key = ? AND payment_method = ?", "demo-1", payment.DirectDebitProvider).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		swiss, err := directdebit.Of(svc).GiveMandate(ctx, swissOrder.PayReference, directdebit.MandateInput{Holder: "Kim Keller",
			IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("bic = ''").Where("id = ?", swiss.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		origin := []string{"Origin", env.srv.URL}
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		treasurer := env.mustStaffSignIn("treasurer@example.org", "/staff")
		until := url.Values{"until": {clock.Now().UTC().AddDate(0, 0, 40).Format(time.DateOnly)}}

		prepared := env.post(treasurer, "/staff/debits", until, origin...)
		if prepared.status != http.StatusSeeOther || !strings.Contains(prepared.header.Get("Location"), "done=debit-run-prepared") {
			t.Fatalf("one mandate without its BIC blocked the run: %d\n%s", prepared.status, prepared.body)
		}
		runPage := env.get(treasurer, prepared.header.Get("Location"))
		left := runPage.testid("debit-left-out")
		if runPage.testid("debit-line").Length() != 1 || left.Length() != 1 ||
			left.Find(`[data-testid="debit-left-out-order"]`).Text() != swissOrder.PayReference ||
			left.Find(`[data-testid="debit-left-out-registration"]`).AttrOr("href", "") != "/staff/registrations/"+strconv.FormatInt(swissOrder.ProcessInstanceID, 10) ||
			!strings.Contains(left.Find(`[data-testid="debit-left-out-reason"]`).Text(), "BIC") ||
			!strings.Contains(runPage.testid("debit-run-left-out").Text(), "Left out of this file") || strings.Contains(string(runPage.body), "CH9300762011623852957") {
			t.Fatalf("the run page does not name the debit left out:\n%s", runPage.body)
		}
		payments := env.get(treasurer, "/staff/payments")
		if row := payments.testid("attention-row"); row.Length() != 1 || row.Find(`[data-testid="attention-reason"]`).Text() != "Direct debit left out of the collection file" ||
			!strings.Contains(row.Text(), "the member gives the bank's BIC") {
			t.Fatalf("the payments page does not list the debit left out:\n%s", payments.testid("attention-table").Text())
		}

		// Only the Swiss debit is due now: no run, and the list says why.
		none := env.post(treasurer, "/staff/debits", until, origin...)
		expectRedirect(t, none, "/staff/debits?leftout="+until.Get("until"))
		list := env.get(treasurer, none.header.Get("Location"))
		if !strings.Contains(list.testid("debits-notice").Text(), "none of them can go into a file") ||
			list.testid("debits-attention-link").AttrOr("href", "") != "/staff/payments" {
			t.Fatalf("no debit could go into a file: %d\n%s", list.status, list.body)
		}
		if runs, err := directdebit.Of(svc).DebitRuns(ctx, 1); err != nil || len(runs) != 1 {
			t.Fatalf("runs %d %v, want the first alone", len(runs), err)
		}
	})
}
