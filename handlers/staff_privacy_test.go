package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/privacy"
	"portal/engine/staff"
	"portal/views/staffview"
)

// TestStaffRegistrationConsentsAndAccessLog: opening a registration as
// staff shows its consents with their texts and writes one access log
// entry, which the access log page shows an administrator, filtered by
// staff member and record; a viewer and a member cannot read it.
func TestStaffRegistrationConsentsAndAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		order, _ := env.unpaidDemoOrder()
		env.addStaff("viewer@example.org", staff.RoleViewer)
		env.addStaff("admin@example.org", staff.RoleAdmin)
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		id := strconv.FormatInt(order.ProcessInstanceID, 10)

		before := env.count((*privacy.AccessEntry)(nil))
		p := env.get(viewer, "/staff/registrations/"+id)
		if p.status != http.StatusOK {
			t.Fatalf("registration page: %d", p.status)
		}
		if n := env.count((*privacy.AccessEntry)(nil)); n != before+1 {
			t.Fatalf("opening the registration wrote %d access log entries, want 1", n-before)
		}
		var e privacy.AccessEntry
		if err := db.NewSelect().Model(&e).OrderExpr("id DESC").Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if e.Actor != "viewer@example.org" || e.Kind != privacy.AccessRegistration || e.RecordID != id || e.UserKey == nil || *e.UserKey != engine.DemoUserKey {
			t.Fatalf("access entry %+v", e)
		}
		if p.testid("consent-row").Length() == 0 || !strings.Contains(p.testid("detail-consents").Text(), "I accept the club rules and the privacy notice") {
			t.Fatalf("consents on the page: %s", p.testid("detail-consents").Text())
		}

		// The access log page: administrators only.
		if res := env.get(viewer, "/staff/access-log"); res.status != http.StatusForbidden {
			t.Fatalf("a viewer on the access log: %d", res.status)
		}
		member := env.newClient()
		env.login(member, engine.DemoUserKey)
		expectRedirect(t, env.get(member, "/staff/access-log"), "/staff/login?rd=%2Fstaff%2Faccess-log")
		env.get(admin, "/staff/registrations/"+id)
		all := env.get(admin, "/staff/access-log")
		if all.status != http.StatusOK || all.testid("access-row").Length() != 2 {
			t.Fatalf("access log: %d, %d rows", all.status, all.testid("access-row").Length())
		}
		mine := env.get(admin, "/staff/access-log?"+url.Values{"actor": {"viewer@example.org"}}.Encode())
		if mine.testid("access-row").Length() != 1 || !strings.Contains(mine.testid("access-table").Text(), "viewer@example.org") {
			t.Fatalf("filtered by staff member: %s", mine.testid("access-table").Text())
		}
		none := env.get(admin, "/staff/access-log?"+url.Values{"kind": {"registration"}, "record": {"999999"}}.Encode())
		if none.testid("access-empty").Length() != 1 {
			t.Fatalf("filtered by another record: %d rows", none.testid("access-row").Length())
		}
		if all.testid("access-row").First().Find("a").AttrOr("href", "") != "/staff/registrations/"+id {
			t.Fatalf("the entry does not link its registration")
		}
		if !strings.Contains(all.testid("access-row").First().Text(), staffview.PrivacyText.AccessRegistration) {
			t.Fatalf("the entry does not name its kind: %s", all.testid("access-row").First().Text())
		}
	})
}

// TestStaffSetupRetention: the retention form shows the defaults; a bad
// value is refused by its field and changes nothing; a saved one is
// audited; the admin API reads and changes the same settings.
func TestStaffSetupRetention(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}
		p := env.get(admin, "/staff/setup/data-protection")
		if p.doc.Find(`#ret-persons`).AttrOr("value", "") != "3" || p.doc.Find(`#ret-messages`).AttrOr("value", "") != "90" {
			t.Fatalf("retention form: %s", p.testid("retention-form").Text())
		}
		form := url.Values{"personSeasons": {"two"}, "answerMonths": {"12"}, "messageDays": {"90"}, "accessLogDays": {"730"}}
		res := env.post(admin, "/staff/setup/retention", form, origin...)
		if res.status != http.StatusUnprocessableEntity || res.testid("error-ret-persons").Text() != staffview.PrivacyText.NotANumber {
			t.Fatalf("not a number: %d %s", res.status, res.testid("retention-form").Text())
		}
		form.Set("personSeasons", "2")
		form.Set("accessLogDays", "5")
		res = env.post(admin, "/staff/setup/retention", form, origin...)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.testid("error-ret-access-log").Text(), "30 to 3650") {
			t.Fatalf("out of bounds: %d %s", res.status, res.testid("retention-form").Text())
		}
		if r, _ := env.svc.RetentionSettings(ctx, 1); r != engine.DefaultRetentionSettings() || env.auditActions("retention_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", r)
		}
		form.Set("accessLogDays", "")
		expectRedirect(t, env.post(admin, "/staff/setup/retention", form, origin...), "/staff/setup/data-protection?done=retention-saved")
		if r, _ := env.svc.RetentionSettings(ctx, 1); r.PersonSeasons != 2 || r.AccessLogDays != engine.DefaultAccessLogDays {
			t.Fatalf("after saving: %+v", r)
		}
		if env.auditActions("retention_settings.update") != 1 {
			t.Fatal("the change was not audited")
		}

		// The admin API: the same settings on the organisation.
		got := env.call(adminCaller{c: admin}, http.MethodGet, "/api/admin/organisation", nil)
		if got.status != http.StatusOK || !strings.Contains(string(got.body), `"retention":{"personSeasons":2,"answerMonths":12,"messageDays":90,"accessLogDays":730}`) {
			t.Fatalf("GET organisation: %d %s", got.status, got.body)
		}
		bad := env.call(adminCaller{c: admin}, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Renamed", "retention": map[string]any{"messageDays": -3}})
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(string(bad.body), "retention.messageDays") {
			t.Fatalf("PATCH with a bad value: %d %s", bad.status, bad.body)
		}
		if o, _ := env.svc.Organisation(ctx, 1); o.Name == "Renamed" {
			t.Fatal("a refused PATCH changed the organisation")
		}
		ok := env.call(adminCaller{c: admin}, http.MethodPatch, "/api/admin/organisation", map[string]any{"retention": map[string]any{"messageDays": 30, "personSeasons": 0}})
		if ok.status != http.StatusOK || !strings.Contains(string(ok.body), `"personSeasons":3,"answerMonths":12,"messageDays":30`) {
			t.Fatalf("PATCH: %d %s", ok.status, ok.body)
		}
	})
}

// TestMemberExportHoldsConsentsAndAccessLog: staff opening a person's
// data and taking its export each write an access log entry; the
// member's own export lists those entries and the consents given, with
// their texts.
func TestMemberExportHoldsConsentsAndAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		order, _ := env.unpaidDemoOrder()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		for _, path := range []string{"/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10), "/staff/persons/1", "/staff/persons/1/export.json", "/staff/registrations.csv"} {
			if p := env.get(admin, path); p.status != http.StatusOK {
				t.Fatalf("%s: %d", path, p.status)
			}
		}
		kinds := map[privacy.AccessKind]int{}
		var rows []privacy.AccessEntry
		if err := db.NewSelect().Model(&rows).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			kinds[r.Kind]++
		}
		// The registrations CSV is an export of many households: on the log, in no member's export.
		if kinds[privacy.AccessRegistration] != 1 || kinds[privacy.AccessPerson] != 1 || kinds[privacy.AccessExport] != 2 {
			t.Fatalf("access log by kind: %v", kinds)
		}
		member := env.newClient()
		env.login(member, engine.DemoUserKey)
		res := env.get(member, "/membership/data.json")
		if res.status != http.StatusOK {
			t.Fatalf("member export: %d", res.status)
		}
		var x privacy.PersonalData
		if err := json.Unmarshal(res.body, &x); err != nil {
			t.Fatal(err)
		}
		if len(x.AccessLog) != 3 || x.AccessLog[0].Actor != "admin@example.org" {
			t.Fatalf("the export's access log: %+v", x.AccessLog)
		}
		terms := 0
		for _, c := range x.Consents {
			if c.Kind == engine.ConsentClubRules && c.Text == "I accept the club rules and the privacy notice" && c.TextVersion != "" {
				terms++
			}
		}
		if terms == 0 {
			t.Fatalf("the export's consents: %+v", x.Consents)
		}
	})
}
