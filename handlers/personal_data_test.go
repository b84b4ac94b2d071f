package handlers_test

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
	"portal/engine/organisation"
	"portal/engine/privacy"
	"portal/engine/staff"
)

// addOtherHousehold links a person of the demo club to another user key:
// their data must never show to the demo household.
func addOtherHousehold(t *testing.T, db *bun.DB) {
	t.Helper()
	if _, err := organisation.Of(engine.NewService(db, nil)).ImportPersons(context.Background(), 1, []organisation.PersonRow{{ExternalID: "other-1", FirstName: "Bertha",
		LastName: "Otherfamily", DateOfBirth: "1970-01-02", Email: "bertha@other.example", UserKeys: []string{"other"}}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
}

// The "Your data" page from a member's session: the household's data in
// the member's language, the JSON download, the request form; nothing of
// another household; no session, no data.
func TestMemberDataPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnv(t, db)
		addOtherHousehold(t, db)
		c := env.newClient()
		env.login(c, engine.DemoUserKey)

		if o := env.get(c, "/membership/register/1"); o.testid("your-data").AttrOr("href", "") != "/membership/data" {
			t.Fatalf("the overview does not link to the data page: %s", o.body)
		}
		p := env.get(c, "/membership/data")
		if p.status != http.StatusOK || p.testid("data-persons").Find(`[data-testid="data-row"]`).Length() != 4 {
			t.Fatalf("data page: %d %s", p.status, p.body)
		}
		if w := p.testid("request-writer").Find("option"); w.Length() != 5 || w.First().AttrOr("value", "x") != "" {
			t.Fatalf("the request form asks who writes among the household's persons (or no one): %d options", w.Length())
		}
		if body := string(p.body); !strings.Contains(body, "Alex Morgan") || strings.Contains(body, "Otherfamily") || strings.Contains(body, "bertha@other.example") {
			t.Fatalf("the page shows the wrong household:\n%s", body)
		}
		if de := env.get(c, "/membership/data", "Accept-Language", "de"); !strings.Contains(de.doc.Find("h1").Text(), "Ihre Daten") {
			t.Fatalf("German page heading %q", de.doc.Find("h1").Text())
		}
		if fr := env.get(c, "/membership/data", "Accept-Language", "fr"); !strings.Contains(fr.doc.Find("h1").Text(), "Vos données") {
			t.Fatalf("French page heading %q", fr.doc.Find("h1").Text())
		}

		dl := env.do(c, http.MethodGet, "/membership/data.json", nil)
		var x privacy.PersonalData
		dl.json(t, &x)
		if dl.status != http.StatusOK || !strings.HasPrefix(dl.header.Get("Content-Disposition"), "attachment") || x.Format != privacy.PersonalDataFormat ||
			len(x.Persons) != 4 || len(x.Sessions) == 0 || strings.Contains(string(dl.body), "Otherfamily") {
			t.Fatalf("download: %d %s", dl.status, dl.body)
		}

		// A request: stored, the page thanks the member.
		res := env.post(c, "/membership/data/request", url.Values{"kind": {"correction"}, "person": {"1"}, "writer": {"2"}, "message": {"My birthday is the 13th."}}, "Origin", env.srv.URL)
		if res.status != http.StatusSeeOther || !strings.HasSuffix(res.header.Get("Location"), "/membership/data?sent=1") {
			t.Fatalf("request: %d %s", res.status, res.header.Get("Location"))
		}
		if sent := env.get(c, res.header.Get("Location")); sent.testid("request-sent").Length() != 1 || sent.testid("data-requests").Find(`[data-testid="data-row"]`).Length() != 1 {
			t.Fatalf("after the request: %s", sent.body)
		}
		// Refused: a correction saying nothing, a person of another household.
		var other int64
		if err := db.NewSelect().Model((*engine.Person)(nil)).Column("id").Where("last_name = 'Otherfamily'").Scan(context.Background(), &other); err != nil {
			t.Fatal(err)
		}
		for _, form := range []url.Values{{"kind": {"correction"}}, {"kind": {"erasure"}, "person": {strconv.FormatInt(other, 10)}}, {"kind": {"everything"}}} {
			res := env.post(c, "/membership/data/request", form, "Origin", env.srv.URL)
			if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "error=request") {
				t.Fatalf("refused request %v: %d %s", form, res.status, res.header.Get("Location"))
			}
		}
		list, err := privacy.Of(engine.NewService(db, nil)).DataRequests(context.Background(), 1, "")
		if err != nil || len(list) != 1 || list[0].UserKey != engine.DemoUserKey || list[0].WriterID == nil || *list[0].WriterID != 2 {
			t.Fatalf("stored requests (the writer is who the form names): %+v %v", list, err)
		}
		if p := env.get(c, "/membership/data?error=request"); p.status != http.StatusUnprocessableEntity || p.testid("request-problem").Length() != 1 {
			t.Fatalf("the refused request's page: %d", p.status)
		}
		// Over the household's requests a day: not sent, and the page says so (429).
		mailed := func() int64 {
			n, err := db.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", string(privacy.KindDataRequest)).Count(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for i := 1; i < privacy.MaxDataRequestsPerDay; i++ {
			if res := env.post(c, "/membership/data/request", url.Values{"kind": {"erasure"}}, "Origin", env.srv.URL); !strings.HasSuffix(res.header.Get("Location"), "sent=1") {
				t.Fatalf("request %d: %d %s", i+1, res.status, res.header.Get("Location"))
			}
		}
		before := mailed()
		res = env.post(c, "/membership/data/request", url.Values{"kind": {"erasure"}}, "Origin", env.srv.URL)
		if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "error=limit") {
			t.Fatalf("a request over the bound: %d %s", res.status, res.header.Get("Location"))
		}
		if limited := env.get(c, res.header.Get("Location")); limited.status != http.StatusTooManyRequests ||
			!strings.Contains(limited.testid("request-problem").Text(), "tomorrow") {
			t.Fatalf("the page over the bound: %d %s", limited.status, limited.body)
		}
		if n := mailed(); n != before {
			t.Fatalf("a refused request was mailed: %d e-mails, %d before", n, before)
		}

		// A member's session cannot erase, on the staff page or the API.
		if res := env.post(c, "/staff/persons/1/erase", url.Values{"confirmed": {"1"}, "force": {"1"}}, "Origin", env.srv.URL); res.status != http.StatusUnauthorized {
			t.Fatalf("member erasing on the staff page: %d", res.status)
		}
		if res := env.do(c, http.MethodPost, "/api/admin/persons/1/erase", map[string]bool{"force": true}); res.status != http.StatusUnauthorized {
			t.Fatalf("member erasing through the API: %d %s", res.status, res.body)
		}
		if res := env.do(c, http.MethodGet, "/api/admin/persons/5/export", nil); res.status != http.StatusUnauthorized {
			t.Fatalf("member exporting another person through the API: %d", res.status)
		}

		// No session: access denied, no data.
		anon := env.newClient()
		if p := env.get(anon, "/membership/data"); p.status != http.StatusForbidden || strings.Contains(string(p.body), "Morgan") {
			t.Fatalf("without a session: %d", p.status)
		}
		if r := env.do(anon, http.MethodGet, "/membership/data.json", nil); r.status != http.StatusForbidden || strings.Contains(string(r.body), "Morgan") {
			t.Fatalf("download without a session: %d", r.status)
		}
		// The other household sees its own person only.
		oc := env.newClient()
		env.login(oc, "other")
		r := env.do(oc, http.MethodGet, "/membership/data.json", nil)
		if r.status != http.StatusOK || strings.Contains(string(r.body), "Morgan") || !strings.Contains(string(r.body), "Otherfamily") {
			t.Fatalf("the other household's download: %d %s", r.status, r.body)
		}
	})
}

// Staff: the person page and its export (registrar and up), the erasure
// (admins; refused with the reason unless forced; audited), the requests
// list with "mark done"; the admin API's export and erasure.
func TestStaffPersonDataAndErasure(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := context.Background()
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		env.addStaff("admin@example.org", staff.RoleAdmin)
		reg := env.mustStaffSignIn("registrar@example.org", "/staff")
		admin := env.mustStaffSignIn("admin@example.org", "/staff")

		p := env.get(reg, "/staff/persons/1")
		if p.status != http.StatusOK || !strings.Contains(p.doc.Find("h1").Text(), "Alex Morgan") || p.testid("erase").Length() != 0 {
			t.Fatalf("registrar's person page: %d %s", p.status, p.body)
		}
		if r := env.do(reg, http.MethodGet, "/staff/persons/1/export.json", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"portal-personal-data/1"`) {
			t.Fatalf("registrar's export: %d", r.status)
		}
		if r := env.post(reg, "/staff/persons/1/erase", url.Values{"confirmed": {"1"}}, "Origin", env.srv.URL); r.status != http.StatusForbidden {
			t.Fatalf("registrar erasing: %d", r.status)
		}
		if p := env.get(admin, "/staff/persons/4"); p.testid("erase").Length() != 1 {
			t.Fatalf("admin's person page has no erasure: %s", p.body)
		}
		// Jamie holds an active membership: refused with the reason, then forced.
		r := env.post(admin, "/staff/persons/4/erase", url.Values{"confirmed": {"1"}}, "Origin", env.srv.URL)
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), "active membership") {
			t.Fatalf("erasure of an active member: %d %s", r.status, r.body)
		}
		if r = env.post(admin, "/staff/persons/4/erase", url.Values{"force": {"1"}}, "Origin", env.srv.URL); r.status != http.StatusOK || r.testid("staff-confirm").Length() != 1 {
			t.Fatalf("the erasure did not ask first: %d %s", r.status, r.body)
		}
		r = env.post(admin, "/staff/persons/4/erase", url.Values{"confirmed": {"1"}, "force": {"1"}}, "Origin", env.srv.URL)
		if r.status != http.StatusSeeOther {
			t.Fatalf("forced erasure: %d %s", r.status, r.body)
		}
		if p := env.get(admin, r.header.Get("Location")); strings.Contains(string(p.body), "Jamie") || p.testid("erase").Length() != 0 {
			t.Fatalf("after the erasure: %s", p.body)
		}
		log, err := env.svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil || log[0].Action != "person.erase" || log[0].Actor != "admin@example.org" || !strings.Contains(log[0].AfterJSON, `"forced":true`) {
			t.Fatalf("audit: %+v %v", log[0], err)
		}

		// The requests list: a member's request, marked done.
		if _, err := privacy.Of(env.svc).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestErasure}); err != nil {
			t.Fatal(err)
		}
		list := env.get(reg, "/staff/data-requests")
		row := list.testid("data-request-row")
		if list.status != http.StatusOK || row.Length() != 1 || row.AttrOr("data-status", "") != "open" {
			t.Fatalf("requests page: %d %s", list.status, list.body)
		}
		done := row.Find("form").AttrOr("action", "")
		if r := env.post(reg, done, url.Values{"note": {"Erased as asked."}}, "Origin", env.srv.URL); r.status != http.StatusSeeOther {
			t.Fatalf("mark done: %d %s", r.status, r.body)
		}
		if row := env.get(reg, "/staff/data-requests").testid("data-request-row"); row.AttrOr("data-status", "") != "done" || row.Find("form").Length() != 0 {
			t.Fatalf("after mark done: %s", row.Text())
		}

		// The admin API: export, erasure refused with the spec's error body, forced.
		key, _ := env.apiKey(1, organisation.ScopeWrite)
		readKey, _ := env.apiKey(1, organisation.ScopeRead)
		res := env.admin(readKey, http.MethodGet, "/api/admin/persons/1/export", nil)
		var x privacy.PersonalData
		res.json(t, &x)
		if res.status != http.StatusOK || x.Subject.Kind != "person" || len(x.Persons) != 1 || x.Persons[0].FirstName != "Alex" {
			t.Fatalf("API export: %d %s", res.status, res.body)
		}
		if res := env.admin(readKey, http.MethodPost, "/api/admin/persons/1/erase", nil); res.status != http.StatusForbidden {
			t.Fatalf("erasure with a read key: %d", res.status)
		}
		other, err := organisation.Of(env.svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: ptr("Other club"), Slug: ptr("other")})
		if err != nil {
			t.Fatal(err)
		}
		otherKey, _ := env.apiKey(other.ID, organisation.ScopeWrite)
		if res := env.admin(otherKey, http.MethodGet, "/o/other/api/admin/persons/1/export", nil); res.status != http.StatusNotFound {
			t.Fatalf("another club's key exported the person: %d %s", res.status, res.body)
		}
		if err := privacy.Of(env.svc).CompleteDataRequest(ctx, engine.CommandLine, 1, 999, ""); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("unknown request: %v", err)
		}
		// Sam (person 2) has an unpaid-free past: nothing blocks; Alex's
		// membership of last season is over, so Alex is erasable too.
		res = env.admin(key, http.MethodPost, "/api/admin/persons/2/erase", nil)
		var rep privacy.ErasureReport
		res.json(t, &rep)
		if res.status != http.StatusOK || rep.PersonID != 2 || rep.Forced {
			t.Fatalf("API erasure: %d %s", res.status, res.body)
		}
		res = env.admin(key, http.MethodPost, "/api/admin/persons/2/erase", map[string]bool{"force": true})
		e := expectHTTPError(t, res, http.StatusConflict, "/api/admin/persons/2/erase")
		if !strings.Contains(e.Message, "already erased") {
			t.Fatalf("second erasure: %+v", e)
		}
	})
}

// checkPersonalDataResponses produces every documented response of the
// personal-data routes, each checked against the description.
func checkPersonalDataResponses(t *testing.T, ck *apiChecker, anon *http.Client, write, read string) {
	t.Helper()
	export, erase := "/api/admin/persons/1/export", "/api/admin/persons/4/erase"
	wantStatus(t, ck.conforming(anon, http.MethodGet, export, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/persons/999/export", nil, bearer(read)...), http.StatusNotFound)
	wantStatus(t, ck.conforming(anon, http.MethodGet, export, nil), http.StatusUnauthorized)
	// Jamie holds an active membership: refused, then forced, then already erased.
	wantStatus(t, ck.conforming(anon, http.MethodPost, erase, nil, bearer(write)...), http.StatusConflict)
	wantStatus(t, ck.do(anon, http.MethodPost, erase, `{"force":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, erase, "force", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/persons/999/erase", map[string]bool{"force": true}, bearer(write)...), http.StatusNotFound)
	wantStatus(t, ck.conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, bearer(write)...), http.StatusConflict)
}
