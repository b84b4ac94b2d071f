package staff_test

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
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffRegistrationConsentsAndAccessLog: opening a registration as
// staff shows its consents with their texts and writes one access log
// entry, which the access log page shows an administrator, filtered by
// staff member and record; a viewer and a member cannot read it.
func TestStaffRegistrationConsentsAndAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		id := strconv.FormatInt(order.ProcessInstanceID, 10)

		before := env.Count((*privacy.AccessEntry)(nil))
		p := env.Get(viewer, "/staff/registrations/"+id)
		if p.Status != http.StatusOK {
			t.Fatalf("registration page: %d", p.Status)
		}
		if n := env.Count((*privacy.AccessEntry)(nil)); n != before+1 {
			t.Fatalf("opening the registration wrote %d access log entries, want 1", n-before)
		}
		var e privacy.AccessEntry
		if err := db.NewSelect().Model(&e).OrderExpr("id DESC").Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if e.Actor != "viewer@example.org" || e.Kind != privacy.AccessRegistration || e.RecordID != id || e.UserKey == nil || *e.UserKey != engine.DemoUserKey {
			t.Fatalf("access entry %+v", e)
		}
		if p.TestID("consent-row").Length() == 0 || !strings.Contains(p.TestID("detail-consents").Text(), "I accept the club rules and the privacy notice") {
			t.Fatalf("consents on the page: %s", p.TestID("detail-consents").Text())
		}

		// The access log page: administrators only.
		if res := env.Get(viewer, "/staff/access-log"); res.Status != http.StatusForbidden {
			t.Fatalf("a viewer on the access log: %d", res.Status)
		}
		member := env.NewClient()
		env.Login(member, engine.DemoUserKey)
		handlertest.ExpectRedirect(t, env.Get(member, "/staff/access-log"), "/staff/login?rd=%2Fstaff%2Faccess-log")
		env.Get(admin, "/staff/registrations/"+id)
		all := env.Get(admin, "/staff/access-log")
		if all.Status != http.StatusOK || all.TestID("access-row").Length() != 2 {
			t.Fatalf("access log: %d, %d rows", all.Status, all.TestID("access-row").Length())
		}
		mine := env.Get(admin, "/staff/access-log?"+url.Values{"actor": {"viewer@example.org"}}.Encode())
		if mine.TestID("access-row").Length() != 1 || !strings.Contains(mine.TestID("access-table").Text(), "viewer@example.org") {
			t.Fatalf("filtered by staff member: %s", mine.TestID("access-table").Text())
		}
		none := env.Get(admin, "/staff/access-log?"+url.Values{"kind": {"registration"}, "record": {"999999"}}.Encode())
		if none.TestID("access-empty").Length() != 1 {
			t.Fatalf("filtered by another record: %d rows", none.TestID("access-row").Length())
		}
		if all.TestID("access-row").First().Find("a").AttrOr("href", "") != "/staff/registrations/"+id {
			t.Fatalf("the entry does not link its registration")
		}
		if !strings.Contains(all.TestID("access-row").First().Text(), staffview.PrivacyText.AccessRegistration) {
			t.Fatalf("the entry does not name its kind: %s", all.TestID("access-row").First().Text())
		}
	})
}

// TestStaffSetupRetention: the retention form shows the defaults; a bad
// value is refused by its field and changes nothing; a saved one is
// audited; the admin API reads and changes the same settings.
func TestStaffSetupRetention(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
		p := env.Get(admin, "/staff/setup/data-protection")
		if p.Doc.Find(`#ret-persons`).AttrOr("value", "") != "3" || p.Doc.Find(`#ret-messages`).AttrOr("value", "") != "90" {
			t.Fatalf("retention form: %s", p.TestID("retention-form").Text())
		}
		form := url.Values{"personSeasons": {"two"}, "answerMonths": {"12"}, "messageDays": {"90"}, "accessLogDays": {"730"}}
		res := env.Post(admin, "/staff/setup/retention", form, origin...)
		if res.Status != http.StatusUnprocessableEntity || res.TestID("error-ret-persons").Text() != staffview.PrivacyText.NotANumber {
			t.Fatalf("not a number: %d %s", res.Status, res.TestID("retention-form").Text())
		}
		form.Set("personSeasons", "2")
		form.Set("accessLogDays", "5")
		res = env.Post(admin, "/staff/setup/retention", form, origin...)
		if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.TestID("error-ret-access-log").Text(), "30 to 3650") {
			t.Fatalf("out of bounds: %d %s", res.Status, res.TestID("retention-form").Text())
		}
		if r, _ := env.Engine.RetentionSettings(ctx, 1); r != engine.DefaultRetentionSettings() || env.AuditActions("retention_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", r)
		}
		form.Set("accessLogDays", "")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/retention", form, origin...), "/staff/setup/data-protection?done=retention-saved")
		if r, _ := env.Engine.RetentionSettings(ctx, 1); r.PersonSeasons != 2 || r.AccessLogDays != engine.DefaultAccessLogDays {
			t.Fatalf("after saving: %+v", r)
		}
		if env.AuditActions("retention_settings.update") != 1 {
			t.Fatal("the change was not audited")
		}

		// The admin API: the same settings on the organisation.
		got := env.Call(handlertest.AdminCaller{C: admin}, http.MethodGet, "/api/admin/organisation", nil)
		if got.Status != http.StatusOK || !strings.Contains(string(got.Body), `"retention":{"personSeasons":2,"answerMonths":12,"messageDays":90,"accessLogDays":730}`) {
			t.Fatalf("GET organisation: %d %s", got.Status, got.Body)
		}
		bad := env.Call(handlertest.AdminCaller{C: admin}, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Renamed", "retention": map[string]any{"messageDays": -3}})
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(string(bad.Body), "retention.messageDays") {
			t.Fatalf("PATCH with a bad value: %d %s", bad.Status, bad.Body)
		}
		if o, _ := env.Engine.Organisation(ctx, 1); o.Name == "Renamed" {
			t.Fatal("a refused PATCH changed the organisation")
		}
		ok := env.Call(handlertest.AdminCaller{C: admin}, http.MethodPatch, "/api/admin/organisation", map[string]any{"retention": map[string]any{"messageDays": 30, "personSeasons": 0}})
		if ok.Status != http.StatusOK || !strings.Contains(string(ok.Body), `"personSeasons":3,"answerMonths":12,"messageDays":30`) {
			t.Fatalf("PATCH: %d %s", ok.Status, ok.Body)
		}
	})
}

// TestMemberExportHoldsConsentsAndAccessLog: staff opening a person's
// data and taking its export each write an access log entry; the
// member's own export lists those entries and the consents given, with
// their texts.
func TestMemberExportHoldsConsentsAndAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		for _, path := range []string{"/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10), "/staff/persons/1", "/staff/persons/1/export.json", "/staff/registrations.csv"} {
			if p := env.Get(admin, path); p.Status != http.StatusOK {
				t.Fatalf("%s: %d", path, p.Status)
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
		member := env.NewClient()
		env.Login(member, engine.DemoUserKey)
		res := env.Get(member, "/membership/data.json")
		if res.Status != http.StatusOK {
			t.Fatalf("member export: %d", res.Status)
		}
		var x privacy.PersonalData
		if err := json.Unmarshal(res.Body, &x); err != nil {
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
