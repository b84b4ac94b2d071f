package staff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// The portal's shared account (the environment's bank details) takes the
// transfers of every club without its own: no club's staff import it.
func TestStaffStatementImportNeedsOwnAccount(t *testing.T) {
	env := handlertest.NewStaffBankEnv(t, dbtest.SQLite(t), false)
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
	if p := env.Get(tr, "/staff/payments"); p.TestID("statement-no-bank").Length() != 1 || p.TestID("statement-form").Length() != 0 {
		t.Fatalf("shared account offered for import: %d", p.Status)
	}
	if p := env.PostFile(tr, "/staff/payments/statement", nil, "statement.xml", []byte("<Document/>")); p.Status != http.StatusConflict {
		t.Fatalf("import of the shared account: %d", p.Status)
	}
}

// TestStaffPaymentsStatementImport: a treasurer uploads a camt.054, sees
// the proposed matches without anything captured, confirms, and the
// registration completes; confirming the same file again captures nothing
// more. Bad files are refused by their field and change nothing.
func TestStaffPaymentsStatementImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, rf := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")

		// The page: nothing needs attention yet; viewers read without the upload.
		p := env.Get(tr, "/staff/payments")
		if p.Status != http.StatusOK || p.TestID("attention-empty").Length() != 1 || p.TestID("statement-form").Length() != 1 {
			t.Fatalf("payments page: %d %s", p.Status, p.Body)
		}
		if p.Doc.Find(`[data-testid=staff-nav] a[aria-current="page"]`).Text() != staffview.OpsText.NavPayments {
			t.Errorf("current nav item %q", p.Doc.Find(`[data-testid=staff-nav] a[aria-current="page"]`).Text())
		}
		if v := env.Get(viewer, "/staff/payments"); v.Status != http.StatusOK || v.TestID("statement-form").Length() != 0 {
			t.Fatalf("viewer's payments page: %d, upload form %d", v.Status, v.TestID("statement-form").Length())
		}

		// Attention: an attempt pending for weeks, then one with a problem.
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("created_at = ?", clock.Now().Add(-20*24*time.Hour).UTC()).
			Where("order_id = ?", order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		p = env.Get(tr, "/staff/payments")
		if p.TestID("attention-row").Length() != 1 || p.TestID("attention-reason").Text() != staffview.OpsText.AttentionPending {
			t.Fatalf("pending too long not listed: %s", p.TestID("staff-main").Text())
		}
		if !strings.Contains(p.TestID("attention-table").Text(), rf.String()) {
			t.Errorf("attention row without its reference %s", rf)
		}

		// Bad uploads: no file, not a statement.
		if res := env.PostFile(tr, "/staff/payments/statement", nil, "", nil); res.Status != http.StatusUnprocessableEntity ||
			res.TestID("statement-error").Text() != staffview.OpsText.StatementMissing {
			t.Fatalf("no file: %d %s", res.Status, res.TestID("statement-error").Text())
		}
		res := env.PostFile(tr, "/staff/payments/statement", nil, "statement.xml", []byte("<html>not camt</html>"))
		if res.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(res.TestID("statement-error").Text(), staffview.OpsText.StatementInvalid) {
			t.Fatalf("not a statement: %d %s", res.Status, res.TestID("statement-error").Text())
		}
		big := bytes.Repeat([]byte("x"), 5<<20)
		if res := env.PostFile(tr, "/staff/payments/statement", nil, "big.xml", big); res.Status != http.StatusRequestEntityTooLarge {
			t.Fatalf("a file over the limit: %d", res.Status)
		}

		// A part of the amount is previewed as an ordinary part payment,
		// not as a problem.
		part := env.PostFile(tr, "/staff/payments/statement", nil, "camt054.xml", handlertest.Camt054(string(handlertest.StaffCreditor.IBAN),
			handlertest.CamtCredit{Id: "C-0", Amount: "1.00", Ref: string(rf), Debtor: "Demo Household"}))
		if row := part.TestID("matched-table").Find(`[data-testid="credit-row"]`); row.Length() != 1 || row.AttrOr("data-kind", "") == "problem" ||
			row.Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineWillPart {
			t.Fatalf("a part payment's preview: %s (%s)", row.Text(), row.AttrOr("data-kind", ""))
		}

		// The preview proposes the match and captures nothing.
		amount := engine.FormatAmount(order.TotalMinor)
		file := handlertest.Camt054(string(handlertest.StaffCreditor.IBAN),
			handlertest.CamtCredit{Id: "C-1", Amount: amount, Ref: string(rf), Debtor: "Demo Household"},
			handlertest.CamtCredit{Id: "C-2", Amount: "12.34", Ref: "RF18539007547034", Debtor: "Someone Else"})
		prev := env.PostFile(tr, "/staff/payments/statement", nil, "camt054.xml", file)
		if prev.Status != http.StatusOK || prev.TestID("statement-preview").Length() != 1 {
			t.Fatalf("preview: %d %s", prev.Status, prev.Body)
		}
		matched := prev.TestID("matched-table").Find(`[data-testid="credit-row"]`)
		if matched.Length() != 1 || matched.Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineWillComplete ||
			matched.Find(`[data-testid="credit-reference"]`).Text() != rf.String() {
			t.Fatalf("proposed matches: %s", prev.TestID("matched-table").Text())
		}
		if u := prev.TestID("unmatched-table").Find(`[data-testid="credit-row"]`); u.Length() != 1 || !strings.Contains(u.Text(), "EUR 12.34") {
			t.Fatalf("unmatched credits: %s", prev.TestID("unmatched-table").Text())
		}
		if got := env.OrderStatus(order.ID); got != engine.OrderUnpaid {
			t.Fatalf("the preview changed the order: %s", got)
		}
		if env.AuditActions("payment.capture") != 0 {
			t.Fatal("the preview was audited as a capture")
		}

		// Confirming captures, completes the registration and audits it.
		copyOf := prev.Doc.Find(`input[name="statement"]`).AttrOr("value", "")
		confirm := map[string]string{"statement": copyOf, "capture": "1"}
		done := env.PostFile(tr, "/staff/payments/statement", confirm, "", nil)
		if done.Status != http.StatusOK || done.TestID("statement-result").Length() != 1 ||
			done.TestID("matched-table").Find(`[data-testid="credit-result"]`).Text() != staffview.OpsText.LineCompleted {
			t.Fatalf("capture: %d %s", done.Status, done.TestID("staff-main").Text())
		}
		if got := env.OrderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("order after the capture: %s", got)
		}
		if env.AuditActions("payment.capture") != 1 {
			t.Fatal("the capture was not audited")
		}
		if p := env.Get(tr, "/staff/payments"); p.TestID("attention-empty").Length() != 1 {
			t.Fatalf("a paid attempt still needs attention: %s", p.TestID("staff-main").Text())
		}

		// Confirming twice captures nothing more.
		again := env.PostFile(tr, "/staff/payments/statement", confirm, "", nil)
		if again.Status != http.StatusOK || again.TestID("statement-nothing").Length() != 1 ||
			!strings.HasPrefix(again.TestID("statement-note").Text(), "2 ") {
			t.Fatalf("second confirmation: %d %s", again.Status, again.TestID("staff-main").Text())
		}
		n, err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Where("event_id LIKE ?", "bank:%").Count(ctx)
		if err != nil || n != 1 || env.AuditActions("payment.capture") != 1 {
			t.Fatalf("credit recorded %d times (%v), %d audit entries", n, err, env.AuditActions("payment.capture"))
		}
	})
}

// A payment with a problem is listed first, with the problem; an
// organisation without bank transfer has no statement upload.
func TestStaffPaymentsAttention(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	ctx := context.Background()
	f := env.CompleteDemo(env.NewClient())
	if f.ProcessState != "DONE" {
		t.Fatalf("commit: %s", f.ProcessState)
	}
	const problem = "amount mismatch: the provider reports EUR 10.00, the attempt is for EUR 184.50"
	if _, err := env.DB.NewUpdate().Model((*engine.Payment)(nil)).Set("problem = ?", problem).Where("1 = 1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
	p := env.Get(tr, "/staff/payments")
	if p.TestID("attention-reason").First().Text() != staffview.OpsText.AttentionProblem || !strings.Contains(p.TestID("attention-table").Text(), problem) {
		t.Fatalf("problem not listed: %s", p.TestID("staff-main").Text())
	}
	if p.TestID("statement-no-bank").Length() != 1 || p.TestID("statement-form").Length() != 0 {
		t.Fatalf("upload offered without bank transfer: %s", p.Body)
	}
	if res := env.PostFile(tr, "/staff/payments/statement", nil, "x.xml", handlertest.Camt054(string(handlertest.StaffCreditor.IBAN))); res.Status != http.StatusConflict {
		t.Fatalf("import without bank transfer: %d", res.Status)
	}
}

// TestStaffPaymentsAttentionSaysWhoAndWhat: each attempt needing
// attention names the household, links to its registration and says what
// to do, in words: a transfer pending too long, then the same with a
// problem.
func TestStaffPaymentsAttentionSaysWhoAndWhat(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, _ := env.UnpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
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
			row := env.Get(tr, "/staff/payments").TestID("attention-row")
			if row.Length() != 1 {
				t.Fatalf("%s: %d rows", c.name, row.Length())
			}
			who := row.Find(`a[data-testid="attention-household"]`)
			if who.AttrOr("href", "") != "/staff/registrations/"+reg || !strings.Contains(who.Text(), "Alex Morgan") ||
				handlertest.Squash(who.Find(`[data-testid="attention-registration"]`).Text()) != "(Registration "+reg+")" {
				t.Errorf("%s: household %q → %q", c.name, handlertest.Squash(who.Text()), who.AttrOr("href", ""))
			}
			if got := row.Find(`[data-testid="attention-action"]`).Text(); got != c.action || got == "" {
				t.Errorf("%s: action %q", c.name, got)
			}
		}
		// In German too.
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff/payments?lang=de"), "/staff/payments")
		if got := env.Get(tr, "/staff/payments").TestID("attention-action").Text(); !strings.HasPrefix(got, "Zu tun:") {
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := context.Background()
		other, err := organisation.Of(env.Engine).CreateOrganisation(ctx, organisation.OrganisationChange{Name: handlertest.Ptr("Other club"), Slug: handlertest.Ptr("other")})
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
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		viewer := env.MustStaffSignIn("viewer@example.org", "/o/riverside/staff")
		reg := env.MustStaffSignIn("registrar@example.org", "/o/riverside/staff")
		admin := env.MustStaffSignIn("admin@example.org", "/o/riverside/staff")

		p := env.Get(viewer, "/o/riverside/staff/jobs")
		if p.Status != http.StatusOK || p.TestID("job-row").Length() != 1 || p.TestID("job-error").Text() != "550 mailbox unavailable" ||
			p.TestID("job-retry").Length() != 0 {
			t.Fatalf("viewer's jobs: %d %s", p.Status, p.TestID("staff-main").Text())
		}
		if strings.Contains(string(p.Body), "bert") || strings.Contains(string(p.Body), "disk full") {
			t.Fatal("another organisation's or the portal's job shown to a club's viewer")
		}
		if a := env.Get(admin, "/o/riverside/staff/jobs"); a.TestID("job-row").Length() != 2 || !strings.Contains(a.TestID("jobs-table").Text(), "disk full") ||
			strings.Contains(string(a.Body), "carla") {
			t.Fatalf("admin's jobs: %s", a.TestID("staff-main").Text())
		}
		// The season overview counts what the jobs page lists, and links to it.
		for _, who := range []struct {
			c    *http.Client
			want string
		}{{viewer, "1"}, {admin, "2"}} {
			ov := env.Get(who.c, "/o/riverside/staff")
			if jobsLine := ov.TestID("overview-jobs"); jobsLine.Find("span").Text() != who.want || jobsLine.Find("a").AttrOr("href", "") != "/o/riverside/staff/jobs" {
				t.Fatalf("overview jobs: %d %q", ov.Status, jobsLine.Text())
			}
		}

		// Another organisation's job cannot be retried by id.
		if res := env.Post(reg, fmt.Sprintf("/o/riverside/staff/jobs/%d/retry", theirs), url.Values{}, "Origin", env.Server.URL); res.Status != http.StatusNotFound {
			t.Fatalf("retry of another organisation's job: %d", res.Status)
		}
		r := env.Get(reg, "/o/riverside/staff/jobs")
		retry := r.TestID("job-retry").Closest("form").AttrOr("action", "")
		if retry != fmt.Sprintf("/o/riverside/staff/jobs/%d/retry", mine) {
			t.Fatalf("retry form posts to %q", retry)
		}
		res := env.Post(reg, retry, url.Values{}, "Origin", env.Server.URL)
		handlertest.ExpectRedirect(t, res, "/o/riverside/staff/jobs?done=job-retried")
		after := env.Get(reg, res.Header.Get("Location"))
		if after.TestID("staff-flash").Text() != staffview.OpsText.JobRetried || after.TestID("jobs-empty").Length() != 1 {
			t.Fatalf("after the retry: %s", after.TestID("staff-main").Text())
		}
		var j jobs.Job
		if err := db.NewSelect().Model(&j).Where("id = ?", mine).Scan(ctx); err != nil || j.State != jobs.StateQueued || j.Attempts != 0 {
			t.Fatalf("job after retry: %+v %v", j, err)
		}
		if env.AuditActions("job.retry") != 1 {
			t.Fatal("the retry was not audited")
		}
		// Retried already: nothing to retry.
		if res := env.Post(reg, retry, url.Values{}, "Origin", env.Server.URL); res.Status != http.StatusNotFound {
			t.Fatalf("second retry: %d", res.Status)
		}
	})
}

// TestStaffInvitationsImport: a registrar previews a person CSV (nothing
// written), applies it (audited), and sees the persons with their user
// keys; a file with bad rows lists them and cannot be applied.
func TestStaffInvitationsImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		countPersons := func() int {
			n, err := db.NewSelect().Model((*engine.Person)(nil)).Where("organisation_id = 1 AND external_id IS NOT NULL").Count(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		p := env.Get(reg, "/staff/invitations")
		if p.Status != http.StatusOK || p.TestID("import-form").Length() != 1 {
			t.Fatalf("invitations page: %d %s", p.Status, p.Body)
		}

		bad := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nX-1,Zoe,Zander,1990-13-45,zoe@example.org,zkey\n"
		res := env.PostFile(reg, "/staff/invitations/import", nil, "persons.csv", []byte(bad))
		if res.Status != http.StatusUnprocessableEntity || res.TestID("import-errors").Length() != 1 ||
			!strings.Contains(res.TestID("import-problems").Text(), "dateOfBirth") || res.TestID("import-apply").Length() != 0 {
			t.Fatalf("bad rows: %d %s", res.Status, res.TestID("staff-main").Text())
		}
		if res := env.PostFile(reg, "/staff/invitations/import", nil, "", nil); res.Status != http.StatusUnprocessableEntity ||
			res.TestID("import-error").Text() != staffview.OpsText.ImportMissing {
			t.Fatalf("no file: %d", res.Status)
		}

		good := "externalId,firstName,lastName,dateOfBirth,email,userKeys\nX-1,Zoe,Zander,1990-03-04,zoe@example.org,zkey\nX-2,Yann,Young,2012-05-06,,zkey;ykey\n"
		prev := env.PostFile(reg, "/staff/invitations/import", nil, "persons.csv", []byte(good))
		if prev.Status != http.StatusOK || prev.TestID("count-created").Text() != "2" || prev.TestID("import-row").Length() != 2 {
			t.Fatalf("preview: %d %s", prev.Status, prev.TestID("staff-main").Text())
		}
		if countPersons() != 0 || env.AuditActions("persons.import") != 0 {
			t.Fatal("the preview wrote")
		}
		apply := map[string]string{"csv": prev.Doc.Find(`input[name="csv"]`).AttrOr("value", ""), "apply": "1"}
		done := env.PostFile(reg, "/staff/invitations/import", apply, "", nil)
		if done.Status != http.StatusOK || done.TestID("count-created").Text() != "2" || done.TestID("import-apply").Length() != 0 {
			t.Fatalf("apply: %d %s", done.Status, done.TestID("staff-main").Text())
		}
		if countPersons() != 2 || env.AuditActions("persons.import") != 1 {
			t.Fatalf("after apply: %d persons, %d audit entries", countPersons(), env.AuditActions("persons.import"))
		}
		again := env.PostFile(reg, "/staff/invitations/import", apply, "", nil)
		if again.TestID("count-unchanged").Text() != "2" || again.TestID("count-created").Text() != "0" || countPersons() != 2 {
			t.Fatalf("applied twice: %s", again.TestID("import-counts").Text())
		}
		list := env.Get(reg, "/staff/invitations")
		var found bool
		list.TestID("person-row").Each(func(_ int, s *goquery.Selection) {
			if s.Find(`[data-testid="person-name"]`).Text() == "Yann Young" && s.Find(`[data-testid="person-keys"]`).Text() == "ykey, zkey" {
				found = true
			}
		})
		if !found {
			t.Fatalf("persons list: %s", list.TestID("persons-table").Text())
		}
	})
}

// TestStaffInvitationsSend: a registrar invites chosen persons to the
// period (errors per field change nothing), sees who was left out, the
// list with its state and counts, and revokes one after confirming; each
// change is audited.
func TestStaffInvitationsSend(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
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
		p := env.Get(reg, "/staff/invitations?period="+period)
		if p.Status != http.StatusOK || p.TestID("invite-form").Length() != 1 || p.TestID("invitations-empty").Length() != 1 {
			t.Fatalf("invitations page: %d %s", p.Status, p.TestID("staff-main").Text())
		}
		if p := env.Get(reg, "/staff/invitations?period=999"); p.Status != http.StatusNotFound {
			t.Fatalf("another period: %d", p.Status)
		}

		bad := env.Post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"chosen"}, "externalIds": {" "}, "days": {"0"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-externalIds").Text() != staffview.OpsText.InvWhomMissing ||
			bad.TestID("error-days").Text() != staffview.OpsText.InvDaysInvalid || bad.TestID("invite-error").Length() != 1 || invitations() != 0 {
			t.Fatalf("bad form: %d %s", bad.Status, bad.TestID("invite-section").Text())
		}
		if bad.Doc.Find(`#invite-days`).AttrOr("aria-invalid", "") != "true" || bad.Doc.Find(`#invite-days`).AttrOr("value", "") != "0" {
			t.Fatal("the days field is not marked, or lost its value")
		}

		sent := env.Post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"chosen"}, "externalIds": {"P-1\nP-999"}, "days": {"10"}}, origin...)
		if sent.Status != http.StatusOK || sent.TestID("invite-invited").Text() != "1" || sent.TestID("invite-skipped").Text() != "1" ||
			!strings.Contains(sent.TestID("invite-skip").Text(), "P-999") {
			t.Fatalf("sent: %d %s", sent.Status, sent.TestID("staff-main").Text())
		}
		if sent.TestID("invitation-row").Length() != 1 || sent.TestID("invitation-key").Text() != engine.DemoUserKey ||
			sent.TestID("invitation-state").AttrOr("data-state", "") != string(invitation.InvitationInvited) {
			t.Fatalf("list: %s", sent.TestID("invitations-table").Text())
		}
		counts := map[string]string{}
		sent.TestID("invitation-count").Each(func(_ int, s *goquery.Selection) {
			counts[s.AttrOr("data-state", "")] = s.Find("span").Text()
		})
		if len(counts) != 7 || counts["invited"] != "1" || counts["paid"] != "0" || counts["revoked"] != "0" {
			t.Fatalf("counts %v", counts)
		}
		if invitations() != 1 || env.AuditActions("invitation.create") != 1 {
			t.Fatalf("%d invitations, %d audit entries", invitations(), env.AuditActions("invitation.create"))
		}
		// Again, everyone: the household holding a valid link is left out,
		// the other linked households are invited.
		again := env.Post(reg, "/staff/invitations/send", url.Values{"period": {period}, "whom": {"all"}, "days": {"10"}}, origin...)
		if again.Status != http.StatusOK || !strings.Contains(again.TestID("invite-result").Text(), invitation.SkipAlreadyInvited) {
			t.Fatalf("again: %s", again.TestID("invite-result").Text())
		}

		revoke := sent.TestID("invitation-revoke").Closest("form").AttrOr("action", "")
		if ask := env.Post(reg, revoke, url.Values{}, origin...); ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("revoke without asking: %d", ask.Status)
		}
		var inv invitation.Invitation
		if err := db.NewSelect().Model(&inv).Where("user_key = ?", engine.DemoUserKey).Scan(t.Context()); err != nil || inv.RevokedAt != nil {
			t.Fatalf("revoked before confirming: %+v %v", inv, err)
		}
		handlertest.ExpectRedirect(t, env.Post(reg, revoke, url.Values{"confirmed": {"1"}}, origin...), "/staff/invitations?period="+period+"&done=invitation-revoked")
		after := env.Get(reg, "/staff/invitations?period="+period+"&done=invitation-revoked")
		demo := after.TestID("invitation-row").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`[data-testid="invitation-key"]`).Text() == engine.DemoUserKey
		})
		if demo.Find(`[data-testid="invitation-state"]`).AttrOr("data-state", "") != string(invitation.InvitationRevoked) ||
			demo.Find(`[data-testid="invitation-revoke"]`).Length() != 0 || after.TestID("invitation-revoke").Length() != after.TestID("invitation-row").Length()-1 ||
			env.AuditActions("invitation.revoke") != 1 || after.TestID("staff-flash").Length() != 1 {
			t.Fatalf("after revoking: %s", after.TestID("invitations-table").Text())
		}
		// Another organisation's invitation is not found.
		if res := env.Post(reg, "/staff/invitations/99999/revoke", url.Values{"confirmed": {"1"}}, origin...); res.Status != http.StatusNotFound {
			t.Fatalf("unknown invitation: %d", res.Status)
		}
	})
}

// An administrator runs a scheduled job now from the jobs page, once;
// no one below may.
func TestStaffRunScheduledJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := context.Background()
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		admin := env.MustStaffSignIn("admin@example.org", "/staff")

		if p := env.Get(reg, "/staff/jobs"); p.Status != http.StatusOK || p.TestID("job-run").Length() != 0 {
			t.Fatalf("registrar's jobs page offers a run: %d", p.Status)
		}
		if res := env.Post(reg, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.Server.URL); res.Status != http.StatusForbidden {
			t.Fatalf("registrar's run: %d", res.Status)
		}
		p := env.Get(admin, "/staff/jobs")
		form := p.TestID("job-run").Find("form")
		if form.AttrOr("action", "") != "/staff/jobs/run" || p.TestID("job-run-kind").Find("option[value='"+engine.KindQueueReminders+"']").Length() != 1 {
			t.Fatalf("admin's run form: %s", p.TestID("staff-main").Text())
		}
		res := env.Post(admin, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.Server.URL)
		handlertest.ExpectRedirect(t, res, "/staff/jobs?done=job-run")
		if after := env.Get(admin, res.Header.Get("Location")); after.TestID("staff-flash").Text() != staffview.OpsText.JobRunQueued {
			t.Fatalf("after the run: %s", after.TestID("staff-main").Text())
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
		if again := env.Post(admin, "/staff/jobs/run", url.Values{"kind": {engine.KindQueueReminders}}, "Origin", env.Server.URL); again.Status != http.StatusConflict {
			t.Fatalf("second run: %d", again.Status)
		}
		if bad := env.Post(admin, "/staff/jobs/run", url.Values{"kind": {"webhook_delivery"}}, "Origin", env.Server.URL); bad.Status/100 != 4 {
			t.Fatalf("run of a kind that is not scheduled: %d", bad.Status)
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
