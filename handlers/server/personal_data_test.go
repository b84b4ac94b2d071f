package server_test

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
	"portal/handlers/handlertest"
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
		env := handlertest.NewEnv(t, db)
		addOtherHousehold(t, db)
		c := env.NewClient()
		env.Login(c, engine.DemoUserKey)

		if o := env.Get(c, "/membership/register/1"); o.TestID("your-data").AttrOr("href", "") != "/membership/data" {
			t.Fatalf("the overview does not link to the data page: %s", o.Body)
		}
		p := env.Get(c, "/membership/data")
		if p.Status != http.StatusOK || p.TestID("data-persons").Find(`[data-testid="data-row"]`).Length() != 4 {
			t.Fatalf("data page: %d %s", p.Status, p.Body)
		}
		if w := p.TestID("request-writer").Find("option"); w.Length() != 5 || w.First().AttrOr("value", "x") != "" {
			t.Fatalf("the request form asks who writes among the household's persons (or no one): %d options", w.Length())
		}
		if body := string(p.Body); !strings.Contains(body, "Alex Morgan") || strings.Contains(body, "Otherfamily") || strings.Contains(body, "bertha@other.example") {
			t.Fatalf("the page shows the wrong household:\n%s", body)
		}
		if de := env.Get(c, "/membership/data", "Accept-Language", "de"); !strings.Contains(de.Doc.Find("h1").Text(), "Ihre Daten") {
			t.Fatalf("German page heading %q", de.Doc.Find("h1").Text())
		}
		if fr := env.Get(c, "/membership/data", "Accept-Language", "fr"); !strings.Contains(fr.Doc.Find("h1").Text(), "Vos données") {
			t.Fatalf("French page heading %q", fr.Doc.Find("h1").Text())
		}

		dl := env.Do(c, http.MethodGet, "/membership/data.json", nil)
		var x privacy.PersonalData
		dl.JSON(t, &x)
		if dl.Status != http.StatusOK || !strings.HasPrefix(dl.Header.Get("Content-Disposition"), "attachment") || x.Format != privacy.PersonalDataFormat ||
			len(x.Persons) != 4 || len(x.Sessions) == 0 || strings.Contains(string(dl.Body), "Otherfamily") {
			t.Fatalf("download: %d %s", dl.Status, dl.Body)
		}

		// A request: stored, the page thanks the member.
		res := env.Post(c, "/membership/data/request", url.Values{"kind": {"correction"}, "person": {"1"}, "writer": {"2"}, "message": {"My birthday is the 13th."}}, "Origin", env.Server.URL)
		if res.Status != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "/membership/data?sent=1") {
			t.Fatalf("request: %d %s", res.Status, res.Header.Get("Location"))
		}
		if sent := env.Get(c, res.Header.Get("Location")); sent.TestID("request-sent").Length() != 1 || sent.TestID("data-requests").Find(`[data-testid="data-row"]`).Length() != 1 {
			t.Fatalf("after the request: %s", sent.Body)
		}
		// Refused: a correction saying nothing, a person of another household.
		var other int64
		if err := db.NewSelect().Model((*engine.Person)(nil)).Column("id").Where("last_name = 'Otherfamily'").Scan(context.Background(), &other); err != nil {
			t.Fatal(err)
		}
		for _, form := range []url.Values{{"kind": {"correction"}}, {"kind": {"erasure"}, "person": {strconv.FormatInt(other, 10)}}, {"kind": {"everything"}}} {
			res := env.Post(c, "/membership/data/request", form, "Origin", env.Server.URL)
			if res.Status != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "error=request") {
				t.Fatalf("refused request %v: %d %s", form, res.Status, res.Header.Get("Location"))
			}
		}
		list, err := privacy.Of(engine.NewService(db, nil)).DataRequests(context.Background(), 1, "")
		if err != nil || len(list) != 1 || list[0].UserKey != engine.DemoUserKey || list[0].WriterID == nil || *list[0].WriterID != 2 {
			t.Fatalf("stored requests (the writer is who the form names): %+v %v", list, err)
		}
		if p := env.Get(c, "/membership/data?error=request"); p.Status != http.StatusUnprocessableEntity || p.TestID("request-problem").Length() != 1 {
			t.Fatalf("the refused request's page: %d", p.Status)
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
			if res := env.Post(c, "/membership/data/request", url.Values{"kind": {"erasure"}}, "Origin", env.Server.URL); !strings.HasSuffix(res.Header.Get("Location"), "sent=1") {
				t.Fatalf("request %d: %d %s", i+1, res.Status, res.Header.Get("Location"))
			}
		}
		before := mailed()
		res = env.Post(c, "/membership/data/request", url.Values{"kind": {"erasure"}}, "Origin", env.Server.URL)
		if res.Status != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "error=limit") {
			t.Fatalf("a request over the bound: %d %s", res.Status, res.Header.Get("Location"))
		}
		if limited := env.Get(c, res.Header.Get("Location")); limited.Status != http.StatusTooManyRequests ||
			!strings.Contains(limited.TestID("request-problem").Text(), "tomorrow") {
			t.Fatalf("the page over the bound: %d %s", limited.Status, limited.Body)
		}
		if n := mailed(); n != before {
			t.Fatalf("a refused request was mailed: %d e-mails, %d before", n, before)
		}

		// A member's session cannot erase, on the staff page or the API.
		if res := env.Post(c, "/staff/persons/1/erase", url.Values{"confirmed": {"1"}, "force": {"1"}}, "Origin", env.Server.URL); res.Status != http.StatusUnauthorized {
			t.Fatalf("member erasing on the staff page: %d", res.Status)
		}
		if res := env.Do(c, http.MethodPost, "/api/admin/persons/1/erase", map[string]bool{"force": true}); res.Status != http.StatusUnauthorized {
			t.Fatalf("member erasing through the API: %d %s", res.Status, res.Body)
		}
		if res := env.Do(c, http.MethodGet, "/api/admin/persons/5/export", nil); res.Status != http.StatusUnauthorized {
			t.Fatalf("member exporting another person through the API: %d", res.Status)
		}

		// No session: access denied, no data.
		anon := env.NewClient()
		if p := env.Get(anon, "/membership/data"); p.Status != http.StatusForbidden || strings.Contains(string(p.Body), "Morgan") {
			t.Fatalf("without a session: %d", p.Status)
		}
		if r := env.Do(anon, http.MethodGet, "/membership/data.json", nil); r.Status != http.StatusForbidden || strings.Contains(string(r.Body), "Morgan") {
			t.Fatalf("download without a session: %d", r.Status)
		}
		// The other household sees its own person only.
		oc := env.NewClient()
		env.Login(oc, "other")
		r := env.Do(oc, http.MethodGet, "/membership/data.json", nil)
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "Morgan") || !strings.Contains(string(r.Body), "Otherfamily") {
			t.Fatalf("the other household's download: %d %s", r.Status, r.Body)
		}
	})
}

// Staff: the person page and its export (registrar and up), the erasure
// (admins; refused with the reason unless forced; audited), the requests
// list with "mark done"; the admin API's export and erasure.
func TestStaffPersonDataAndErasure(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := context.Background()
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		admin := env.MustStaffSignIn("admin@example.org", "/staff")

		p := env.Get(reg, "/staff/persons/1")
		if p.Status != http.StatusOK || !strings.Contains(p.Doc.Find("h1").Text(), "Alex Morgan") || p.TestID("erase").Length() != 0 {
			t.Fatalf("registrar's person page: %d %s", p.Status, p.Body)
		}
		if r := env.Do(reg, http.MethodGet, "/staff/persons/1/export.json", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"portal-personal-data/1"`) {
			t.Fatalf("registrar's export: %d", r.Status)
		}
		if r := env.Post(reg, "/staff/persons/1/erase", url.Values{"confirmed": {"1"}}, "Origin", env.Server.URL); r.Status != http.StatusForbidden {
			t.Fatalf("registrar erasing: %d", r.Status)
		}
		if p := env.Get(admin, "/staff/persons/4"); p.TestID("erase").Length() != 1 {
			t.Fatalf("admin's person page has no erasure: %s", p.Body)
		}
		// Jamie holds an active membership: refused with the reason, then forced.
		r := env.Post(admin, "/staff/persons/4/erase", url.Values{"confirmed": {"1"}}, "Origin", env.Server.URL)
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "active membership") {
			t.Fatalf("erasure of an active member: %d %s", r.Status, r.Body)
		}
		if r = env.Post(admin, "/staff/persons/4/erase", url.Values{"force": {"1"}}, "Origin", env.Server.URL); r.Status != http.StatusOK || r.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("the erasure did not ask first: %d %s", r.Status, r.Body)
		}
		r = env.Post(admin, "/staff/persons/4/erase", url.Values{"confirmed": {"1"}, "force": {"1"}}, "Origin", env.Server.URL)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("forced erasure: %d %s", r.Status, r.Body)
		}
		if p := env.Get(admin, r.Header.Get("Location")); strings.Contains(string(p.Body), "Jamie") || p.TestID("erase").Length() != 0 {
			t.Fatalf("after the erasure: %s", p.Body)
		}
		log, err := env.Engine.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil || log[0].Action != "person.erase" || log[0].Actor != "admin@example.org" || !strings.Contains(log[0].AfterJSON, `"forced":true`) {
			t.Fatalf("audit: %+v %v", log[0], err)
		}

		// The requests list: a member's request, marked done.
		if _, err := privacy.Of(env.Engine).RequestDataChange(ctx, 1, engine.DemoUserKey, privacy.NewDataRequest{Kind: privacy.DataRequestErasure}); err != nil {
			t.Fatal(err)
		}
		list := env.Get(reg, "/staff/data-requests")
		row := list.TestID("data-request-row")
		if list.Status != http.StatusOK || row.Length() != 1 || row.AttrOr("data-status", "") != "open" {
			t.Fatalf("requests page: %d %s", list.Status, list.Body)
		}
		done := row.Find("form").AttrOr("action", "")
		if r := env.Post(reg, done, url.Values{"note": {"Erased as asked."}}, "Origin", env.Server.URL); r.Status != http.StatusSeeOther {
			t.Fatalf("mark done: %d %s", r.Status, r.Body)
		}
		if row := env.Get(reg, "/staff/data-requests").TestID("data-request-row"); row.AttrOr("data-status", "") != "done" || row.Find("form").Length() != 0 {
			t.Fatalf("after mark done: %s", row.Text())
		}

		// The admin API: export, erasure refused with the spec's error body, forced.
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		readKey, _ := env.ApiKey(1, organisation.ScopeRead)
		res := env.Admin(readKey, http.MethodGet, "/api/admin/persons/1/export", nil)
		var x privacy.PersonalData
		res.JSON(t, &x)
		if res.Status != http.StatusOK || x.Subject.Kind != "person" || len(x.Persons) != 1 || x.Persons[0].FirstName != "Alex" {
			t.Fatalf("API export: %d %s", res.Status, res.Body)
		}
		if res := env.Admin(readKey, http.MethodPost, "/api/admin/persons/1/erase", nil); res.Status != http.StatusForbidden {
			t.Fatalf("erasure with a read key: %d", res.Status)
		}
		other, err := organisation.Of(env.Engine).CreateOrganisation(ctx, organisation.OrganisationChange{Name: handlertest.Ptr("Other club"), Slug: handlertest.Ptr("other")})
		if err != nil {
			t.Fatal(err)
		}
		otherKey, _ := env.ApiKey(other.ID, organisation.ScopeWrite)
		if res := env.Admin(otherKey, http.MethodGet, "/o/other/api/admin/persons/1/export", nil); res.Status != http.StatusNotFound {
			t.Fatalf("another club's key exported the person: %d %s", res.Status, res.Body)
		}
		if err := privacy.Of(env.Engine).CompleteDataRequest(ctx, engine.CommandLine, 1, 999, ""); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("unknown request: %v", err)
		}
		// Sam (person 2) has an unpaid-free past: nothing blocks; Alex's
		// membership of last season is over, so Alex is erasable too.
		res = env.Admin(key, http.MethodPost, "/api/admin/persons/2/erase", nil)
		var rep privacy.ErasureReport
		res.JSON(t, &rep)
		if res.Status != http.StatusOK || rep.PersonID != 2 || rep.Forced {
			t.Fatalf("API erasure: %d %s", res.Status, res.Body)
		}
		res = env.Admin(key, http.MethodPost, "/api/admin/persons/2/erase", map[string]bool{"force": true})
		e := handlertest.ExpectHTTPError(t, res, http.StatusConflict, "/api/admin/persons/2/erase")
		if !strings.Contains(e.Message, "already erased") {
			t.Fatalf("second erasure: %+v", e)
		}
	})
}

// checkPersonalDataResponses produces every documented response of the
// personal-data routes, each checked against the description.
func checkPersonalDataResponses(t *testing.T, ck *handlertest.APIChecker, anon *http.Client, write, read string) {
	t.Helper()
	export, erase := "/api/admin/persons/1/export", "/api/admin/persons/4/erase"
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, export, nil, handlertest.Bearer(read)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, "/api/admin/persons/999/export", nil, handlertest.Bearer(read)...), http.StatusNotFound)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodGet, export, nil), http.StatusUnauthorized)
	// Jamie holds an active membership: refused, then forced, then already erased.
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, erase, nil, handlertest.Bearer(write)...), http.StatusConflict)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, erase, `{"force":`, handlertest.Bearer(write)...), http.StatusBadRequest)
	handlertest.WantStatus(t, ck.Do(anon, http.MethodPost, erase, "force", handlertest.Bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, handlertest.Bearer(read)...), http.StatusForbidden)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}), http.StatusUnauthorized)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, "/api/admin/persons/999/erase", map[string]bool{"force": true}, handlertest.Bearer(write)...), http.StatusNotFound)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, handlertest.Bearer(write)...), http.StatusOK)
	handlertest.WantStatus(t, ck.Conforming(anon, http.MethodPost, erase, map[string]bool{"force": true}, handlertest.Bearer(write)...), http.StatusConflict)
}
