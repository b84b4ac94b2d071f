package payments_test

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
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// debitRegistration completes the demo registration, chooses direct
// debit on its pay link and gives the mandate, as the member does; it
// returns the registration's id and its order.
func debitRegistration(env *handlertest.StaffEnv, t *testing.T) (string, engine.Order) {
	t.Helper()
	if _, err := settings.Of(env.Engine).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
		BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
		t.Fatal(err)
	}
	c := env.NewClient()
	f := env.CompleteDemo(c)
	if f.PaymentURL == nil {
		t.Fatal("no pay link")
	}
	u, _ := url.Parse(*f.PaymentURL)
	if p := env.Post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}}); p.Status != http.StatusOK {
		t.Fatalf("choosing direct debit: %d\n%s", p.Status, p.Body)
	}
	if _, err := directdebit.Of(env.Env.Engine).GiveMandate(t.Context(), path.Base(u.Path), directdebit.MandateInput{Holder: "Alex Example",
		IBAN: "DE02 1203 0000 0000 2020 51", Consent: true, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	var o engine.Order
	if err := env.DB.NewSelect().Model(&o).Where("pay_reference = ?", path.Base(u.Path)).Scan(t.Context()); err != nil {
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		registration, order := debitRegistration(env, t)
		origin := []string{"Origin", env.Server.URL}
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		treasurer := env.MustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")

		payments := env.Get(treasurer, "/staff/payments")
		if payments.TestID("payments-debits-link").AttrOr("href", "") != "/staff/debits" {
			t.Fatalf("the payments page does not link the runs:\n%s", payments.Body)
		}
		list := env.Get(treasurer, "/staff/debits")
		if list.Status != http.StatusOK || list.TestID("debits-prepare-form").Length() != 1 || list.TestID("debits-empty").Length() != 1 ||
			list.TestID("debits-until").AttrOr("value", "") != directdebit.DefaultCollectionUntil(clock.Now()).Format(time.DateOnly) {
			t.Fatalf("runs page: %d\n%s", list.Status, list.Body)
		}
		if p := env.Get(viewer, "/staff/debits"); p.Status != http.StatusOK || p.TestID("debits-prepare-form").Length() != 0 {
			t.Fatalf("a viewer's runs page: %d\n%s", p.Status, p.Body)
		}
		until := url.Values{"until": {clock.Now().UTC().AddDate(0, 0, 40).Format(time.DateOnly)}}
		if p := env.Post(viewer, "/staff/debits", until, origin...); p.Status != http.StatusForbidden {
			t.Fatalf("a viewer prepares a run: %d", p.Status)
		}

		// Nothing is due yesterday: said on the list, nothing written.
		yesterday := clock.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		nothing := env.Post(treasurer, "/staff/debits", url.Values{"until": {yesterday}}, origin...)
		handlertest.ExpectRedirect(t, nothing, "/staff/debits?nothing="+yesterday)
		if p := env.Get(treasurer, nothing.Header.Get("Location")); p.Status != http.StatusOK || !strings.Contains(p.TestID("debits-notice").Text(), "No direct debit is due") {
			t.Fatalf("nothing due: %d\n%s", p.Status, p.Body)
		}
		if p := env.Post(treasurer, "/staff/debits", url.Values{"until": {"soon"}}, origin...); p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("a date that is none: %d", p.Status)
		}
		if env.AuditActions("debit_run.create") != 0 {
			t.Fatal("a run was written")
		}

		prepared := env.Post(treasurer, "/staff/debits", until, origin...)
		runs, err := directdebit.Of(env.Env.Engine).DebitRuns(ctx, 1)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %+v %v", runs, err)
		}
		first := runs[0]
		runPath := "/staff/debits/" + strconv.FormatInt(first.ID, 10)
		handlertest.ExpectRedirect(t, prepared, runPath+"?done=debit-run-prepared")
		list = env.Get(treasurer, "/staff/debits")
		row := list.TestID("debit-run-row")
		if row.Length() != 1 || row.AttrOr("data-status", "") != "prepared" || row.Find(`[data-testid="debit-run-link"]`).AttrOr("href", "") != runPath ||
			row.Find(`[data-testid="debit-run-count"]`).Text() != "1" || !strings.Contains(row.Find(`[data-testid="debit-run-by"]`).Text(), "treasurer@example.org") {
			t.Fatalf("the list:\n%s", list.TestID("debit-runs-table").Text())
		}
		runPage := env.Get(treasurer, prepared.Header.Get("Location"))
		line := runPage.TestID("debit-line")
		if runPage.Status != http.StatusOK || !strings.Contains(runPage.TestID("staff-flash").Text(), "prepared") || line.Length() != 1 ||
			line.Find(`[data-testid="debit-registration"]`).AttrOr("href", "") != "/staff/registrations/"+registration ||
			line.Find(`[data-testid="debit-iban"]`).Text() != directdebit.MaskedIBAN("DE02120300000000202051") ||
			line.Find(`[data-testid="debit-holder"]`).Text() != "Alex Example" || !strings.Contains(line.Find(`[data-testid="debit-sequence"]`).Text(), "FRST") ||
			runPage.TestID("debit-run-sent").Length() != 1 || runPage.TestID("debit-run-cancel").Length() != 1 || runPage.TestID("debit-run-download").Length() != 1 {
			t.Fatalf("run page: %d\n%s", runPage.Status, runPage.Body)
		}
		if p := env.Get(viewer, runPath); p.Status != http.StatusOK || p.TestID("debit-line").Length() != 1 || p.TestID("debit-run-actions").Length() != 0 {
			t.Fatalf("a viewer's run page: %d\n%s", p.Status, p.Body)
		}

		// The file, twice, as stored.
		stored, err := directdebit.Of(env.Env.Engine).DebitRunByID(ctx, 1, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			f := env.Do(treasurer, http.MethodGet, runPath+"/file", nil)
			if f.Status != http.StatusOK || !bytes.Equal(f.Body, stored.Run.File) || f.Header.Get("Content-Type") != "application/xml" ||
				f.Header.Get("Content-Disposition") != `attachment; filename="`+directdebit.DebitRunFileName(stored.Run)+`"` {
				t.Fatalf("download: %d %v", f.Status, f.Header)
			}
		}
		// Each download of every debtor's account is in the access log.
		if rows := handlertest.BulkReads(t, db, 1, "debit-runs/"); len(rows) != 2 || rows[0].RecordID != "debit-runs/"+strconv.FormatInt(first.ID, 10)+"/file" ||
			rows[1].Actor != "treasurer@example.org" {
			t.Fatalf("access log of the downloads: %+v", rows)
		}

		// A viewer looks, but does not act.
		for _, p := range []string{"/file"} {
			if res := env.Get(viewer, runPath+p); res.Status != http.StatusForbidden {
				t.Fatalf("a viewer downloads: %d", res.Status)
			}
		}
		for _, action := range []string{"/sent", "/cancel"} {
			if res := env.Post(viewer, runPath+action, url.Values{"confirmed": {"1"}}, origin...); res.Status != http.StatusForbidden {
				t.Fatalf("a viewer posts %s: %d", action, res.Status)
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
		for _, res := range []handlertest.Page{env.Get(treasurer, otherPath), env.Get(treasurer, otherPath+"/file"),
			env.Post(treasurer, otherPath+"/sent", url.Values{"confirmed": {"1"}}, origin...),
			env.Post(treasurer, otherPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...)} {
			if res.Status != http.StatusNotFound {
				t.Fatalf("another club's run: %d", res.Status)
			}
		}

		// Its debit is in the prepared run: nothing more is due, and the list says why.
		if p := env.Post(treasurer, "/staff/debits", until, origin...); p.Status != http.StatusSeeOther ||
			!strings.Contains(env.Get(treasurer, p.Header.Get("Location")).TestID("debits-notice").Text(), "send or cancel that run first") {
			t.Fatalf("nothing due with a prepared run: %d", p.Status)
		}

		// Cancelled after the question: the debit is due again.
		ask := env.Post(treasurer, runPath+"/cancel", nil, origin...)
		if ask.Status != http.StatusOK || !strings.Contains(ask.TestID("staff-confirm").Text(), "due again for the next run") {
			t.Fatalf("cancel question: %d\n%s", ask.Status, ask.Body)
		}
		handlertest.ExpectRedirect(t, env.Post(treasurer, runPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...), runPath+"?done=debit-run-cancelled")
		handlertest.ExpectRedirect(t, env.Post(treasurer, runPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...), runPath+"?done=debit-run-already-cancelled")
		if p := env.Post(treasurer, runPath+"/sent", url.Values{"confirmed": {"1"}}, origin...); p.Status != http.StatusConflict ||
			!strings.Contains(p.TestID("staff-main").Text(), "was cancelled") {
			t.Fatalf("a cancelled run marked sent: %d\n%s", p.Status, p.Body)
		}
		// Its file is not handed out any more.
		if p := env.Get(treasurer, runPath+"/file"); p.Status != http.StatusConflict || !strings.Contains(p.TestID("staff-main").Text(), staffview.DebitText.IsCancelled) {
			t.Fatalf("a cancelled run's file: %d\n%s", p.Status, p.Body)
		}
		// In German, the refusal is German too.
		env.AddStaff("kasse@example.org", staff.RoleTreasurer)
		german := env.MustStaffSignIn("kasse@example.org", "/staff")
		handlertest.ExpectRedirect(t, env.Get(german, "/staff?lang=de"), "/staff")
		if p := env.Post(german, runPath+"/sent", url.Values{"confirmed": {"1"}}, origin...); p.Status != http.StatusConflict ||
			!strings.Contains(p.TestID("staff-main").Text(), "wurde storniert") {
			t.Fatalf("a cancelled run marked sent, in German: %d\n%s", p.Status, p.Body)
		}
		if p := env.Get(german, runPath); !strings.Contains(p.TestID("debit-run-status").Text(), "Storniert") ||
			!strings.Contains(p.TestID("debit-line").Text(), "Mit dem Einzug zurückgezogen") {
			t.Fatalf("the cancelled run in German:\n%s", p.Body)
		}
		if p := env.Get(treasurer, runPath); p.TestID("debit-run-status").AttrOr("data-status", "") != "cancelled" || p.TestID("debit-run-actions").Length() != 0 {
			t.Fatalf("the cancelled run:\n%s", p.Body)
		}
		again := env.Post(treasurer, "/staff/debits", until, origin...)
		if again.Status != http.StatusSeeOther {
			t.Fatalf("the next run: %d\n%s", again.Status, again.Body)
		}
		runs, _ = directdebit.Of(env.Env.Engine).DebitRuns(ctx, 1)
		if len(runs) != 2 || runs[0].ID == first.ID || runs[0].DebitCount != 1 {
			t.Fatalf("runs after the cancel %+v", runs)
		}
		secondPath := "/staff/debits/" + strconv.FormatInt(runs[0].ID, 10)

		// Marked sent after the question: the registration completes.
		ask = env.Post(treasurer, secondPath+"/sent", nil, origin...)
		if ask.Status != http.StatusOK || !strings.Contains(ask.TestID("staff-confirm").Text(), "settles the run's payments as paid (1)") {
			t.Fatalf("sent question: %d\n%s", ask.Status, ask.Body)
		}
		sent := env.Post(treasurer, secondPath+"/sent", url.Values{"confirmed": {"1"}}, origin...)
		handlertest.ExpectRedirect(t, sent, secondPath+"?done=debit-run-sent&settled=1")
		if p := env.Get(treasurer, sent.Header.Get("Location")); !strings.Contains(p.TestID("staff-flash").Text(), "Registrations completed: 1.") ||
			p.TestID("debit-run-status").AttrOr("data-status", "") != "sent" || p.TestID("debit-run-sent").Length() != 0 ||
			p.TestID("debit-run-download").Length() != 1 || p.TestID("debit-line").AttrOr("data-status", "") != "collected" {
			t.Fatalf("the sent run:\n%s", p.Body)
		}
		if st := env.OrderStatus(order.ID); st != engine.OrderPaid {
			t.Fatalf("order %s after the run was sent", st)
		}
		handlertest.ExpectRedirect(t, env.Post(treasurer, secondPath+"/sent", url.Values{"confirmed": {"1"}}, origin...), secondPath+"?done=debit-run-already-sent")
		if p := env.Post(treasurer, secondPath+"/cancel", url.Values{"confirmed": {"1"}}, origin...); p.Status != http.StatusConflict {
			t.Fatalf("a sent run cancelled: %d", p.Status)
		}
		if f := env.Do(treasurer, http.MethodGet, secondPath+"/file", nil); f.Status != http.StatusOK || len(f.Body) == 0 {
			t.Fatalf("a sent run's file: %d", f.Status)
		}
		if env.AuditActions("debit_run.create") != 2 || env.AuditActions("debit_run.cancel") != 1 || env.AuditActions("debit_run.send") != 1 {
			t.Fatal("the run actions are not audited")
		}
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		audit := env.Get(admin, "/staff/audit")
		if audit.Doc.Find(`a[href="`+secondPath+`"]`).Length() == 0 || !strings.Contains(string(audit.Body), "marked a direct debit collection run as sent") ||
			!strings.Contains(handlertest.SpacedText(audit.TestID("audit-table")), "Sent to the bank") {
			t.Fatalf("the audit log does not name and link the run:\n%s", audit.TestID("audit-table").Text())
		}
	})
}

// TestStaffDebitRunWarnsOfEndedMandate: a mandate revoked while its debit
// waits in a prepared run is flagged on the run's page, so the treasurer
// does not send a debit the member no longer allows.
func TestStaffDebitRunWarnsOfEndedMandate(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	_, order := debitRegistration(env, t)
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	treasurer := env.MustStaffSignIn("treasurer@example.org", "/staff")
	run, err := directdebit.Of(env.Env.Engine).CollectDebits(t.Context(), directdebit.CollectRequest{OrganisationID: 1, Until: clock.Now().AddDate(0, 2, 0), Actor: engine.CommandLine})
	if err != nil {
		t.Fatal(err)
	}
	runPath := "/staff/debits/" + strconv.FormatInt(run.ID, 10)
	if p := env.Get(treasurer, runPath); p.TestID("debit-mandate-ended").Length() != 0 {
		t.Fatal("a mandate that holds is flagged")
	}
	if _, err := directdebit.Of(env.Env.Engine).StaffRevokeMandate(t.Context(), engine.CommandLine, 1, *order.DebitMandateID); err != nil {
		t.Fatal(err)
	}
	if p := env.Get(treasurer, runPath); p.TestID("debit-mandate-ended").Length() != 1 {
		t.Fatalf("the revoked mandate is not flagged:\n%s", p.TestID("debit-run-debits").Text())
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		debitRegistration(env, t)
		svc := engine.NewService(env.DB, env.Gateway, handlertest.OrganisationPayments(env.DB, handlertest.Options{}, env.Gateway)...)
		(&enginetest.Demo{T: t, DB: env.DB, Svc: svc}).CommitPayingBy(payment.DirectDebitProvider, "demo-1", 5)
		var swissOrder engine.Order
		if err := env.DB.NewSelect().Model(&swissOrder).Where("user_key = ? AND payment_method = ?", "demo-1", payment.DirectDebitProvider).Scan(ctx); err != nil {
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
		origin := []string{"Origin", env.Server.URL}
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		treasurer := env.MustStaffSignIn("treasurer@example.org", "/staff")
		until := url.Values{"until": {clock.Now().UTC().AddDate(0, 0, 40).Format(time.DateOnly)}}

		prepared := env.Post(treasurer, "/staff/debits", until, origin...)
		if prepared.Status != http.StatusSeeOther || !strings.Contains(prepared.Header.Get("Location"), "done=debit-run-prepared") {
			t.Fatalf("one mandate without its BIC blocked the run: %d\n%s", prepared.Status, prepared.Body)
		}
		runPage := env.Get(treasurer, prepared.Header.Get("Location"))
		left := runPage.TestID("debit-left-out")
		if runPage.TestID("debit-line").Length() != 1 || left.Length() != 1 ||
			left.Find(`[data-testid="debit-left-out-order"]`).Text() != swissOrder.PayReference ||
			left.Find(`[data-testid="debit-left-out-registration"]`).AttrOr("href", "") != "/staff/registrations/"+strconv.FormatInt(swissOrder.ProcessInstanceID, 10) ||
			!strings.Contains(left.Find(`[data-testid="debit-left-out-reason"]`).Text(), "BIC") ||
			!strings.Contains(runPage.TestID("debit-run-left-out").Text(), "Left out of this file") || strings.Contains(string(runPage.Body), "CH9300762011623852957") {
			t.Fatalf("the run page does not name the debit left out:\n%s", runPage.Body)
		}
		payments := env.Get(treasurer, "/staff/payments")
		if row := payments.TestID("attention-row"); row.Length() != 1 || row.Find(`[data-testid="attention-reason"]`).Text() != "Direct debit left out of the collection file" ||
			!strings.Contains(row.Text(), "the member gives the bank's BIC") {
			t.Fatalf("the payments page does not list the debit left out:\n%s", payments.TestID("attention-table").Text())
		}

		// Only the Swiss debit is due now: no run, and the list says why.
		none := env.Post(treasurer, "/staff/debits", until, origin...)
		handlertest.ExpectRedirect(t, none, "/staff/debits?leftout="+until.Get("until"))
		list := env.Get(treasurer, none.Header.Get("Location"))
		if !strings.Contains(list.TestID("debits-notice").Text(), "none of them can go into a file") ||
			list.TestID("debits-attention-link").AttrOr("href", "") != "/staff/payments" {
			t.Fatalf("no debit could go into a file: %d\n%s", list.Status, list.Body)
		}
		if runs, err := directdebit.Of(svc).DebitRuns(ctx, 1); err != nil || len(runs) != 1 {
			t.Fatalf("runs %d %v, want the first alone", len(runs), err)
		}
	})
}
