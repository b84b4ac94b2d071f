package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/views/staffview"
)

// staffCreditor is the account of the staff payments tests.
var staffCreditor = banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX"}

// newStaffBankEnv is a staffEnv whose payments are bank transfers to
// staffCreditor: the environment's account, and with ownAccount also the
// organisation's own (which its staff may import statements of).
func newStaffBankEnv(t *testing.T, db *bun.DB, ownAccount bool) *staffEnv {
	t.Helper()
	var base string // known once the server runs, before any registration
	bt, err := banktransfer.New(staffCreditor, func(ref string, amount int64) string { return server.PaymentLinks(base).PayLink("", ref, amount) })
	if err != nil {
		t.Fatal(err)
	}
	env := newStaffEnv(t, db, envOptions{provider: bt})
	base = env.srv.URL
	if ownAccount {
		prov, name, iban, bic := payment.BankTransferProvider, staffCreditor.Name, string(staffCreditor.IBAN), staffCreditor.BIC
		if _, err := settings.Of(env.svc).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{Provider: &prov,
			BankCreditorName: &name, BankIBAN: &iban, BankBIC: &bic}); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// The portal's shared account (the environment's bank details) takes the
// transfers of every club without its own: no club's staff import it.
func TestStaffStatementImportNeedsOwnAccount(t *testing.T) {
	env := newStaffBankEnv(t, dbtest.SQLite(t), false)
	env.addStaff("treasurer@example.org", staff.RoleTreasurer)
	tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
	if p := env.get(tr, "/staff/payments"); p.testid("statement-no-bank").Length() != 1 || p.testid("statement-form").Length() != 0 {
		t.Fatalf("shared account offered for import: %d", p.status)
	}
	if p := env.postFile(tr, "/staff/payments/statement", nil, "statement.xml", []byte("<Document/>")); p.status != http.StatusConflict {
		t.Fatalf("import of the shared account: %d", p.status)
	}
}

// postFile posts a multipart form with fields and, when name is not "",
// a file of that name, as a browser's upload form does.
func (env *staffEnv) postFile(c *http.Client, path string, fields map[string]string, name string, content []byte) page {
	env.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			env.t.Fatal(err)
		}
	}
	if name != "" {
		fw, err := w.CreateFormFile("file", name)
		if err != nil {
			env.t.Fatal(err)
		}
		fw.Write(content)
	}
	w.Close()
	req, err := http.NewRequest(http.MethodPost, env.srv.URL+path, &body)
	if err != nil {
		env.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	return env.parse(roundTrip(env.t, c, req, "Origin", env.srv.URL))
}

// camtCredit is one incoming transfer of a test notification.
type camtCredit struct {
	id, amount, ref, debtor string
}

// camt054 is a credit notification (camt.054.001.04) of account with the
// credits, as a bank sends it.
func camt054(account string, credits ...camtCredit) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.04"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>NTF-TEST</MsgId><CreDtTm>2026-11-22T07:00:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>NTF-1</Id><Acct><Id><IBAN>` + account + `</IBAN></Id></Acct>`)
	for _, c := range credits {
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-11-22</Dt></BookgDt><ValDt><Dt>2026-11-22</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef>
<NtryDtls><TxDtls><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><RltdPties><Dbtr><Nm>%s</Nm></Dbtr></RltdPties>
<RmtInf><Strd><CdtrRefInf><Ref>%s</Ref></CdtrRefInf></Strd></RmtInf></TxDtls></NtryDtls></Ntry>`, c.amount, c.id, c.amount, c.debtor, c.ref)
	}
	b.WriteString(`</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`)
	return []byte(b.String())
}

// unpaidDemoOrder registers the demo household with bank transfer and
// returns its order and the RF reference members transfer with.
func (env *staffEnv) unpaidDemoOrder() (engine.Order, banking.Reference) {
	env.t.Helper()
	f := env.completeDemo(env.newClient())
	if f.ProcessState != "DONE" {
		env.t.Fatalf("commit: %s", f.ProcessState)
	}
	var order engine.Order
	if err := env.db.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Scan(env.t.Context()); err != nil {
		env.t.Fatal(err)
	}
	rf, err := banking.CreditorReference(order.PayReference)
	if err != nil {
		env.t.Fatal(err)
	}
	return order, rf
}

// auditActions are the organisation's audit actions, newest first.
func (env *staffEnv) auditActions(action string) int {
	env.t.Helper()
	n, err := env.db.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = ?", action).Count(env.t.Context())
	if err != nil {
		env.t.Fatal(err)
	}
	return int(n)
}

// TestStaffPaymentsStatementImport: a treasurer uploads a camt.054, sees
// the proposed matches without anything captured, confirms, and the
// registration completes; confirming the same file again captures nothing
// more. Bad files are refused by their field and change nothing.
func TestStaffPaymentsStatementImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, rf := env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		env.addStaff("viewer@example.org", staff.RoleViewer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")

		// The page: nothing needs attention yet; viewers read without the upload.
		p := env.get(tr, "/staff/payments")
		if p.status != http.StatusOK || p.testid("attention-empty").Length() != 1 || p.testid("statement-form").Length() != 1 {
			t.Fatalf("payments page: %d %s", p.status, p.body)
		}
		if p.doc.Find(`[data-testid=staff-nav] a[aria-current="page"]`).Text() != staffview.OpsText.NavPayments {
			t.Errorf("current nav item %q", p.doc.Find(`[data-testid=staff-nav] a[aria-current="page"]`).Text())
		}
		if v := env.get(viewer, "/staff/payments"); v.status != http.StatusOK || v.testid("statement-form").Length() != 0 {
			t.Fatalf("viewer's payments page: %d, upload form %d", v.status, v.testid("statement-form").Length())
		}

		// Attention: an attempt pending for weeks, then one with a problem.
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("created_at = ?", clock.Now().Add(-20*24*time.Hour).UTC()).
			Where("order_id = ?", order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		p = env.get(tr, "/staff/payments")
		if p.testid("attention-row").Length() != 1 || p.testid("attention-reason").Text() != staffview.OpsText.AttentionPending {
			t.Fatalf("pending too long not listed: %s", p.testid("staff-main").Text())
		}
		if !strings.Contains(p.testid("attention-table").Text(), rf.String()) {
			t.Errorf("attention row without its reference %s", rf)
		}

		// Bad uploads: no file, not a statement.
		if res := env.postFile(tr, "/staff/payments/statement", nil, "", nil); res.status != http.StatusUnprocessableEntity ||
			res.testid("statement-error").Text() != staffview.OpsText.StatementMissing {
			t.Fatalf("no file: %d %s", res.status, res.testid("statement-error").Text())
		}
		res := env.postFile(tr, "/staff/payments/statement", nil, "statement.xml", []byte("<html>not camt</html>"))
		if res.status != http.StatusUnprocessableEntity || !strings.HasPrefix(res.testid("statement-error").Text(), staffview.OpsText.StatementInvalid) {
			t.Fatalf("not a statement: %d %s", res.status, res.testid("statement-error").Text())
		}
		big := bytes.Repeat([]byte("x"), 5<<20)
		if res := env.postFile(tr, "/staff/payments/statement", nil, "big.xml", big); res.status != http.StatusRequestEntityTooLarge {
			t.Fatalf("a file over the limit: %d", res.status)
		}

		// A part of the amount is previewed as an ordinary part payment,
		// not as a problem.
		part := env.postFile(tr, "/staff/payments/statement", nil, "camt054.xml", camt054(string(staffCreditor.IBAN),
			camtCredit{id: "C-0", amount: "1.00", ref: string(rf), debtor: "Demo Household"}))
		if row := part.testid("matched-table").Find(`[data-testid="credit-row"]`); row.Length() != 1 || row.AttrOr("data-kind", "") == "problem" ||
			row.Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineWillPart {
			t.Fatalf("a part payment's preview: %s (%s)", row.Text(), row.AttrOr("data-kind", ""))
		}

		// The preview proposes the match and captures nothing.
		amount := engine.FormatAmount(order.TotalMinor)
		file := camt054(string(staffCreditor.IBAN),
			camtCredit{id: "C-1", amount: amount, ref: string(rf), debtor: "Demo Household"},
			camtCredit{id: "C-2", amount: "12.34", ref: "RF18539007547034", debtor: "Someone Else"})
		prev := env.postFile(tr, "/staff/payments/statement", nil, "camt054.xml", file)
		if prev.status != http.StatusOK || prev.testid("statement-preview").Length() != 1 {
			t.Fatalf("preview: %d %s", prev.status, prev.body)
		}
		matched := prev.testid("matched-table").Find(`[data-testid="credit-row"]`)
		if matched.Length() != 1 || matched.Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineWillComplete ||
			matched.Find(`[data-testid="credit-reference"]`).Text() != rf.String() {
			t.Fatalf("proposed matches: %s", prev.testid("matched-table").Text())
		}
		if u := prev.testid("unmatched-table").Find(`[data-testid="credit-row"]`); u.Length() != 1 || !strings.Contains(u.Text(), "EUR 12.34") {
			t.Fatalf("unmatched credits: %s", prev.testid("unmatched-table").Text())
		}
		if got := env.orderStatus(order.ID); got != engine.OrderUnpaid {
			t.Fatalf("the preview changed the order: %s", got)
		}
		if env.auditActions("payment.capture") != 0 {
			t.Fatal("the preview was audited as a capture")
		}

		// Confirming captures, completes the registration and audits it.
		copyOf := prev.doc.Find(`input[name="statement"]`).AttrOr("value", "")
		confirm := map[string]string{"statement": copyOf, "capture": "1"}
		done := env.postFile(tr, "/staff/payments/statement", confirm, "", nil)
		if done.status != http.StatusOK || done.testid("statement-result").Length() != 1 ||
			done.testid("matched-table").Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineCompleted {
			t.Fatalf("capture: %d %s", done.status, done.testid("staff-main").Text())
		}
		if got := env.orderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("order after the capture: %s", got)
		}
		if env.auditActions("payment.capture") != 1 {
			t.Fatal("the capture was not audited")
		}
		if p := env.get(tr, "/staff/payments"); p.testid("attention-empty").Length() != 1 {
			t.Fatalf("a paid attempt still needs attention: %s", p.testid("staff-main").Text())
		}

		// Confirming twice captures nothing more.
		again := env.postFile(tr, "/staff/payments/statement", confirm, "", nil)
		if again.status != http.StatusOK || again.testid("statement-nothing").Length() != 1 ||
			!strings.HasPrefix(again.testid("statement-note").Text(), "2 ") {
			t.Fatalf("second confirmation: %d %s", again.status, again.testid("staff-main").Text())
		}
		n, err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Where("event_id LIKE ?", "bank:%").Count(ctx)
		if err != nil || n != 1 || env.auditActions("payment.capture") != 1 {
			t.Fatalf("credit recorded %d times (%v), %d audit entries", n, err, env.auditActions("payment.capture"))
		}
	})
}

// orderStatus reads an order's status.
func (env *staffEnv) orderStatus(id int64) engine.OrderStatus {
	env.t.Helper()
	var o engine.Order
	if err := env.db.NewSelect().Model(&o).Where("id = ?", id).Scan(env.t.Context()); err != nil {
		env.t.Fatal(err)
	}
	return o.Status
}

// A payment with a problem is listed first, with the problem; an
// organisation without bank transfer has no statement upload.
func TestStaffPaymentsAttention(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	ctx := context.Background()
	f := env.completeDemo(env.newClient())
	if f.ProcessState != "DONE" {
		t.Fatalf("commit: %s", f.ProcessState)
	}
	const problem = "amount mismatch: the provider reports EUR 10.00, the attempt is for EUR 184.50"
	if _, err := env.db.NewUpdate().Model((*engine.Payment)(nil)).Set("problem = ?", problem).Where("1 = 1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	env.addStaff("treasurer@example.org", staff.RoleTreasurer)
	tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
	p := env.get(tr, "/staff/payments")
	if p.testid("attention-reason").First().Text() != staffview.OpsText.AttentionProblem || !strings.Contains(p.testid("attention-table").Text(), problem) {
		t.Fatalf("problem not listed: %s", p.testid("staff-main").Text())
	}
	if p.testid("statement-no-bank").Length() != 1 || p.testid("statement-form").Length() != 0 {
		t.Fatalf("upload offered without bank transfer: %s", p.body)
	}
	if res := env.postFile(tr, "/staff/payments/statement", nil, "x.xml", camt054(string(staffCreditor.IBAN))); res.status != http.StatusConflict {
		t.Fatalf("import without bank transfer: %d", res.status)
	}
}

// TestStaffPaymentsAttentionSaysWhoAndWhat: each attempt needing
// attention names the household, links to its registration and says what
// to do, in words: a transfer pending too long, then the same with a
// problem.
func TestStaffPaymentsAttentionSaysWhoAndWhat(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, _ := env.unpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("created_at = ?", clock.Now().Add(-20*24*time.Hour).UTC()).
			Where("order_id = ?", order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name, problem, action string
		}{
			{"pending too long", "", staffview.OpsText.ActionPending},
			{"problem", "amount mismatch: the provider reports EUR 10.00, the attempt is for EUR 184.50", staffview.OpsText.ActionProblem},
		} {
			if c.problem != "" {
				if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("problem = ?", c.problem).Where("order_id = ?", order.ID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			row := env.get(tr, "/staff/payments").testid("attention-row")
			if row.Length() != 1 {
				t.Fatalf("%s: %d rows", c.name, row.Length())
			}
			who := row.Find(`a[data-testid="attention-household"]`)
			if who.AttrOr("href", "") != "/staff/registrations/"+reg || !strings.Contains(who.Text(), "Alex Morgan") ||
				squash(who.Find(`[data-testid="attention-registration"]`).Text()) != "(Registration "+reg+")" {
				t.Errorf("%s: household %q → %q", c.name, squash(who.Text()), who.AttrOr("href", ""))
			}
			if got := row.Find(`[data-testid="attention-action"]`).Text(); got != c.action || got == "" {
				t.Errorf("%s: action %q", c.name, got)
			}
		}
		// In German too.
		expectRedirect(t, env.get(tr, "/staff/payments?lang=de"), "/staff/payments")
		if got := env.get(tr, "/staff/payments").testid("attention-action").Text(); !strings.HasPrefix(got, "Zu tun:") {
			t.Errorf("German action: %q", got)
		}
	})
}

// TestStaffJobs: staff see their organisation's failed jobs with the
// error, registrars retry them (audited), administrators also see the
// portal's own; another organisation's jobs are neither shown nor
// retried.
func TestStaffJobs(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := context.Background()
		other, err := organisation.Of(env.svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: ptr("Other club"), Slug: ptr("other")})
		if err != nil {
			t.Fatal(err)
		}
		deadJob := func(key, recipient, payload, lastError string) int64 {
			t.Helper()
			kind := "archive"
			var jobPayload any
			if key != "" {
				kind = string(message.KindWelcome)
				msg := &engine.OutboxMessage{Kind: message.KindWelcome, DedupKey: key, Recipient: recipient, Payload: payload, CreatedAt: clock.Now().UTC()}
				if _, err := db.NewInsert().Model(msg).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				jobPayload = engine.OutboxJob{Message: key}
			}
			if _, err := jobs.Enqueue(ctx, db, clock.Now(), jobs.Spec{Kind: kind, DedupKey: "test:" + key + lastError, Payload: jobPayload}); err != nil {
				t.Fatal(err)
			}
			var j jobs.Job
			if err := db.NewSelect().Model(&j).Where("dedup_key = ?", "test:"+key+lastError).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := db.NewUpdate().Model((*jobs.Job)(nil)).Set("state = ?, attempts = 10, last_error = ?", jobs.StateDead, lastError).
				Where("id = ?", j.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			return j.ID
		}
		mine := deadJob("welcome:mine", "anna@example.org", `{"organisationId":1,"personId":1}`, "550 mailbox unavailable")
		theirs := deadJob("welcome:theirs", "bert@other.example", fmt.Sprintf(`{"organisationId":%d,"personId":9}`, other.ID), "550 no such user bert")
		deadJob("", "", "", "archive failed: disk full")
		// A member's message whose organisation cannot be told is no club's
		// and not the portal's either: no one sees it.
		deadJob("welcome:nobody", "carla@example.net", `{"personId":5}`, "550 carla unknown")

		// With two clubs and no hostnames, each is addressed as /o/{slug}.
		env.addStaff("viewer@example.org", staff.RoleViewer)
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		env.addStaff("admin@example.org", staff.RoleAdmin)
		viewer := env.mustStaffSignIn("viewer@example.org", "/o/riverside/staff")
		reg := env.mustStaffSignIn("registrar@example.org", "/o/riverside/staff")
		admin := env.mustStaffSignIn("admin@example.org", "/o/riverside/staff")

		p := env.get(viewer, "/o/riverside/staff/jobs")
		if p.status != http.StatusOK || p.testid("job-row").Length() != 1 || p.testid("job-error").Text() != "550 mailbox unavailable" ||
			p.testid("job-retry").Length() != 0 {
			t.Fatalf("viewer's jobs: %d %s", p.status, p.testid("staff-main").Text())
		}
		if strings.Contains(string(p.body), "bert") || strings.Contains(string(p.body), "disk full") {
			t.Fatal("another organisation's or the portal's job shown to a club's viewer")
		}
		if a := env.get(admin, "/o/riverside/staff/jobs"); a.testid("job-row").Length() != 2 || !strings.Contains(a.testid("jobs-table").Text(), "disk full") ||
			strings.Contains(string(a.body), "carla") {
			t.Fatalf("admin's jobs: %s", a.testid("staff-main").Text())
		}
		// The season overview counts what the jobs page lists, and links to it.
		for _, who := range []struct {
			c    *http.Client
			want string
		}{{viewer, "1"}, {admin, "2"}} {
			ov := env.get(who.c, "/o/riverside/staff")
			if jobsLine := ov.testid("overview-jobs"); jobsLine.Find("span").Text() != who.want || jobsLine.Find("a").AttrOr("href", "") != "/o/riverside/staff/jobs" {
				t.Fatalf("overview jobs: %d %q", ov.status, jobsLine.Text())
			}
		}

		// Another organisation's job cannot be retried by id.
		if res := env.post(reg, fmt.Sprintf("/o/riverside/staff/jobs/%d/retry", theirs), url.Values{}, "Origin", env.srv.URL); res.status != http.StatusNotFound {
			t.Fatalf("retry of another organisation's job: %d", res.status)
		}
		r := env.get(reg, "/o/riverside/staff/jobs")
		retry := r.testid("job-retry").Closest("form").AttrOr("action", "")
		if retry != fmt.Sprintf("/o/riverside/staff/jobs/%d/retry", mine) {
			t.Fatalf("retry form posts to %q", retry)
		}
		res := env.post(reg, retry, url.Values{}, "Origin", env.srv.URL)
		expectRedirect(t, res, "/o/riverside/staff/jobs?done=job-retried")
		after := env.get(reg, res.header.Get("Location"))
		if after.testid("staff-flash").Text() != staffview.OpsText.JobRetried || after.testid("jobs-empty").Length() != 1 {
			t.Fatalf("after the retry: %s", after.testid("staff-main").Text())
		}
		var j jobs.Job
		if err := db.NewSelect().Model(&j).Where("id = ?", mine).Scan(ctx); err != nil || j.State != jobs.StateQueued || j.Attempts != 0 {
			t.Fatalf("job after retry: %+v %v", j, err)
		}
		if env.auditActions("job.retry") != 1 {
			t.Fatal("the retry was not audited")
		}
		// Retried already: nothing to retry.
		if res := env.post(reg, retry, url.Values{}, "Origin", env.srv.URL); res.status != http.StatusNotFound {
			t.Fatalf("second retry: %d", res.status)
		}
	})
}

// TestStaffInvitationsImport: a registrar previews a person CSV (nothing
// written), applies it (audited), and sees the persons with their user
// keys; a file with bad rows lists them and cannot be applied.
func TestStaffInvitationsImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.mustStaffSignIn("registrar@example.org", "/staff")
		countPersons := func() int {
			n, err := db.NewSelect().Model((*engine.Person)(nil)).Where("organisation_id = 1 AND external_id IS NOT NULL").Count(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		p := env.get(reg, "/staff/invitations")
		if p.status != http.StatusOK || p.testid("import-form").Length() != 1 {
			t.Fatalf("invitations page: %d %s", p.status, p.body)
		}

		bad := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nX-1,Zoe,Zander,1990-13-45,zoe@example.org,zkey\n"
		res := env.postFile(reg, "/staff/invitations/import", nil, "persons.csv", []byte(bad))
		if res.status != http.StatusUnprocessableEntity || res.testid("import-errors").Length() != 1 ||
			!strings.Contains(res.testid("import-problems").Text(), "dateOfBirth") || res.testid("import-apply").Length() != 0 {
			t.Fatalf("bad rows: %d %s", res.status, res.testid("staff-main").Text())
		}
		if res := env.postFile(reg, "/staff/invitations/import", nil, "", nil); res.status != http.StatusUnprocessableEntity ||
			res.testid("import-error").Text() != staffview.OpsText.ImportMissing {
			t.Fatalf("no file: %d", res.status)
		}

		good := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nX-1,Zoe,Zander,1990-03-04,zoe@example.org,zkey\nX-2,Yann,Young,2012-05-06,,zkey;ykey\n"
		prev := env.postFile(reg, "/staff/invitations/import", nil, "persons.csv", []byte(good))
		if prev.status != http.StatusOK || prev.testid("count-created").Text() != "2" || prev.testid("import-row").Length() != 2 {
			t.Fatalf("preview: %d %s", prev.status, prev.testid("staff-main").Text())
		}
		if countPersons() != 0 || env.auditActions("persons.import") != 0 {
			t.Fatal("the preview wrote")
		}
		apply := map[string]string{"csv": prev.doc.Find(`input[name="csv"]`).AttrOr("value", ""), "apply": "1"}
		done := env.postFile(reg, "/staff/invitations/import", apply, "", nil)
		if done.status != http.StatusOK || done.testid("count-created").Text() != "2" || done.testid("import-apply").Length() != 0 {
			t.Fatalf("apply: %d %s", done.status, done.testid("staff-main").Text())
		}
		if countPersons() != 2 || env.auditActions("persons.import") != 1 {
			t.Fatalf("after apply: %d persons, %d audit entries", countPersons(), env.auditActions("persons.import"))
		}
		again := env.postFile(reg, "/staff/invitations/import", apply, "", nil)
		if again.testid("count-unchanged").Text() != "2" || again.testid("count-created").Text() != "0" || countPersons() != 2 {
			t.Fatalf("applied twice: %s", again.testid("import-counts").Text())
		}
		list := env.get(reg, "/staff/invitations")
		var found bool
		list.testid("person-row").Each(func(_ int, s *goquery.Selection) {
			if s.Find(`[data-testid="person-name"]`).Text() == "Yann Young" && s.Find(`[data-testid="person-keys"]`).Text() == "ykey, zkey" {
				found = true
			}
		})
		if !found {
			t.Fatalf("persons list: %s", list.testid("persons-table").Text())
		}
	})
}

// TestStaffInvitationsSend: a registrar invites chosen persons to the
// period (errors per field change nothing), sees who was left out, the
// list with its state and counts, and revokes one after confirming; each
// change is audited.
func TestStaffInvitationsSend(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.mustStaffSignIn("registrar@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}
		period := strconv.FormatInt(engine.DemoPeriodID, 10)
		invitations := func() int {
			n, err := db.NewSelect().Model((*invitation.Invitation)(nil)).Where("organisation_id = 1").Count(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		// Alex of the demo household came from the club's own system.
		if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("external_id = 'P-1'").Where("organisation_id = 1 AND first_name = 'Alex'").Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		p := env.get(reg, "/staff/invitations?period="+period)
		if p.status != http.StatusOK || p.testid("invite-form").Length() != 1 || p.testid("invitations-empty").Length() != 1 {
			t.Fatalf("invitations page: %d %s", p.status, p.testid("staff-main").Text())
		}
		if p := env.get(reg, "/staff/invitations?period=999"); p.status != http.StatusNotFound {
			t.Fatalf("another period: %d", p.status)
		}

		bad := env.post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"chosen"}, "externalIds": {" "}, "days": {"0"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-externalIds").Text() != staffview.OpsText.InvWhomMissing ||
			bad.testid("error-days").Text() != staffview.OpsText.InvDaysInvalid || bad.testid("invite-error").Length() != 1 || invitations() != 0 {
			t.Fatalf("bad form: %d %s", bad.status, bad.testid("invite-section").Text())
		}
		if bad.doc.Find(`#invite-days`).AttrOr("aria-invalid", "") != "true" || bad.doc.Find(`#invite-days`).AttrOr("value", "") != "0" {
			t.Fatal("the days field is not marked, or lost its value")
		}

		sent := env.post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"chosen"}, "externalIds": {"P-1\nP-999"}, "days": {"10"}}, origin...)
		if sent.status != http.StatusOK || sent.testid("invite-invited").Text() != "1" || sent.testid("invite-skipped").Text() != "1" ||
			!strings.Contains(sent.testid("invite-skip").Text(), "P-999") {
			t.Fatalf("sent: %d %s", sent.status, sent.testid("staff-main").Text())
		}
		if sent.testid("invitation-row").Length() != 1 || sent.testid("invitation-key").Text() != engine.DemoUserKey ||
			sent.testid("invitation-state").AttrOr("data-state", "") != string(invitation.InvitationInvited) {
			t.Fatalf("list: %s", sent.testid("invitations-table").Text())
		}
		counts := map[string]string{}
		sent.testid("invitation-count").Each(func(_ int, s *goquery.Selection) {
			counts[s.AttrOr("data-state", "")] = s.Find("span").Text()
		})
		if len(counts) != 7 || counts["invited"] != "1" || counts["paid"] != "0" || counts["revoked"] != "0" {
			t.Fatalf("counts %v", counts)
		}
		if invitations() != 1 || env.auditActions("invitation.create") != 1 {
			t.Fatalf("%d invitations, %d audit entries", invitations(), env.auditActions("invitation.create"))
		}
		// Again, everyone: the household holding a valid link is left out,
		// the other linked households are invited.
		again := env.post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"all"}, "days": {"10"}}, origin...)
		if again.status != http.StatusOK || !strings.Contains(again.testid("invite-result").Text(), invitation.SkipAlreadyInvited) {
			t.Fatalf("again: %s", again.testid("invite-result").Text())
		}

		revoke := sent.testid("invitation-revoke").Closest("form").AttrOr("action", "")
		if ask := env.post(reg, revoke, url.Values{}, origin...); ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("revoke without asking: %d", ask.status)
		}
		var inv invitation.Invitation
		if err := db.NewSelect().Model(&inv).Where("user_key = ?", engine.DemoUserKey).Scan(t.Context()); err != nil || inv.RevokedAt != nil {
			t.Fatalf("revoked before confirming: %+v %v", inv, err)
		}
		expectRedirect(t, env.post(reg, revoke, url.Values{"confirmed": {"1"}}, origin...), "/staff/invitations?period="+period+"&done=invitation-revoked")
		after := env.get(reg, "/staff/invitations?period="+period+"&done=invitation-revoked")
		demo := after.testid("invitation-row").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`[data-testid="invitation-key"]`).Text() == engine.DemoUserKey
		})
		if demo.Find(`[data-testid="invitation-state"]`).AttrOr("data-state", "") != string(invitation.InvitationRevoked) ||
			demo.Find(`[data-testid="invitation-revoke"]`).Length() != 0 || after.testid("invitation-revoke").Length() != after.testid("invitation-row").Length()-1 ||
			env.auditActions("invitation.revoke") != 1 || after.testid("staff-flash").Length() != 1 {
			t.Fatalf("after revoking: %s", after.testid("invitations-table").Text())
		}
		// Another organisation's invitation is not found.
		if res := env.post(reg, "/staff/invitations/99999/revoke", url.Values{"confirmed": {"1"}}, origin...); res.status != http.StatusNotFound {
			t.Fatalf("unknown invitation: %d", res.status)
		}
	})
}

// An administrator runs a scheduled job now from the jobs page, once;
// no one below may.
func TestStaffRunScheduledJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := context.Background()
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		env.addStaff("admin@example.org", staff.RoleAdmin)
		reg := env.mustStaffSignIn("registrar@example.org", "/staff")
		admin := env.mustStaffSignIn("admin@example.org", "/staff")

		if p := env.get(reg, "/staff/jobs"); p.status != http.StatusOK || p.testid("job-run").Length() != 0 {
			t.Fatalf("registrar's jobs page offers a run: %d", p.status)
		}
		if res := env.post(reg, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.srv.URL); res.status != http.StatusForbidden {
			t.Fatalf("registrar's run: %d", res.status)
		}
		p := env.get(admin, "/staff/jobs")
		form := p.testid("job-run").Find("form")
		if form.AttrOr("action", "") != "/staff/jobs/run" || p.testid("job-run-kind").Find("option[value='"+engine.KindQueueReminders+"']").Length() != 1 {
			t.Fatalf("admin's run form: %s", p.testid("staff-main").Text())
		}
		res := env.post(admin, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.srv.URL)
		expectRedirect(t, res, "/staff/jobs?done=job-run")
		if after := env.get(admin, res.header.Get("Location")); after.testid("staff-flash").Text() != staffview.OpsText.JobRunQueued {
			t.Fatalf("after the run: %s", after.testid("staff-main").Text())
		}
		queued, err := jobs.List(ctx, db, 10, jobs.StateQueued)
		if err != nil || len(queued) != 1 || queued[0].Kind != engine.KindQueueReminders {
			t.Fatalf("queued: %+v %v", queued, err)
		}
		// The administrator's run is their organisation's work only.
		var payload jobs.SchedulePayload
		if err := json.Unmarshal([]byte(queued[0].Payload), &payload); err != nil || payload.Organisation != 1 {
			t.Fatalf("the run's payload %s: not organisation 1's", queued[0].Payload)
		}
		// Asked again while it waits: refused, nothing added.
		if again := env.post(admin, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.srv.URL); again.status != http.StatusConflict {
			t.Fatalf("second run: %d", again.status)
		}
		if bad := env.post(admin, "/staff/jobs/run", url.Values{"kind": {"webhook_delivery"}}, "Origin", env.srv.URL); bad.status/100 != 4 {
			t.Fatalf("run of a kind that is not scheduled: %d", bad.status)
		}
		if queued, _ := jobs.List(ctx, db, 10, jobs.StateQueued); len(queued) != 1 {
			t.Fatalf("after the refusals: %+v", queued)
		}
		var audit []engine.AuditRecord
		if err := db.NewSelect().Model(&audit).Where("action = 'job.run'").Scan(ctx); err != nil || len(audit) != 1 || audit[0].OrganisationID != 1 {
			t.Fatalf("audit: %+v %v", audit, err)
		}
	})
}
