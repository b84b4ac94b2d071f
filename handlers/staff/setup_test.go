package staff_test

import (
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffSetupPriceCalculator: "a family of two adults and a junior,
// renewing, in the early-bird window" pays what the demo rules give,
// computed by the engine's pricing; an incomplete calculation says why.
func TestStaffSetupPriceCalculator(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	admin := env.MustStaffSignIn("admin@example.org", "/staff")
	q := url.Values{"calc_period": {"1"}, "calc_on": {clock.Now().Format(time.DateOnly)},
		"calc_type": {"1", "1", "2", ""}, "calc_member": {"RENEWAL", "RENEWAL", "RENEWAL", "NEW"}}
	p := env.Get(admin, "/staff/setup/memberships?"+q.Encode())
	// Adults: 120.00 - 10.00 loyalty - 12.00 early-bird - 18.00 family = 80.00 each;
	// junior: 60.00 - 10.00 - 6.00 - 9.00 = 35.00; administration fee 2.50.
	if p.Status != http.StatusOK || p.TestID("calc-total").Text() != "EUR 197.50" {
		t.Fatalf("calculator: %d %q %s", p.Status, p.TestID("calc-total").Text(), p.TestID("calc-result").Text())
	}
	if n := p.TestID("calc-line").Length(); n != 13 {
		t.Errorf("%d lines, want 13 (4 per person and the administration fee)", n)
	}
	// The choices stay selected.
	if p.Doc.Find(`#calc-member-1 option[selected]`).AttrOr("value", "") != "RENEWAL" || p.Doc.Find(`#calc-type-3 option[selected]`).AttrOr("value", "") != "2" {
		t.Error("the calculator's choices are not kept")
	}
	empty := env.Get(admin, "/staff/setup/memberships?calc_period=1&calc_type=&calc_type=")
	if empty.Status != http.StatusOK || !strings.Contains(empty.TestID("calc-error").Text(), "1 to 20 persons") {
		t.Fatalf("no persons: %s", empty.TestID("calc-result").Text())
	}
	if other := env.Get(admin, "/staff/setup/memberships?calc_period=999&calc_type=1"); !strings.Contains(other.TestID("calc-error").Text(), "not found") {
		t.Fatalf("unknown period: %s", other.TestID("calc-result").Text())
	}
}

// TestStaffSetupChanges: an administrator changes the organisation
// (errors by field, changing nothing), closes a period after confirming,
// adds a staff member, changes roles and disables, and cannot take away
// the last administrator. Every change is audited.
func TestStaffSetupChanges(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{OrganisationRefresh: -1})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		p := env.Get(admin, "/staff/setup/organisation")
		if p.Status != http.StatusOK || p.Doc.Find(`#org-name`).AttrOr("value", "") != "Riverside Rowing Club" ||
			p.TestID("org-secret-state").Text() != staffview.OpsText.SecretNotSet {
			t.Fatalf("organisation section: %d %s", p.Status, p.TestID("staff-main").Text())
		}
		if p := env.Get(admin, "/staff/setup/memberships"); p.Status != http.StatusOK || p.TestID("period-row").Length() != 2 {
			t.Fatalf("memberships section: %d %s", p.Status, p.TestID("staff-main").Text())
		}

		// Organisation: a bad colour is shown by its field and nothing changes.
		org := url.Values{"name": {"Riverside RC"}, "contactEmail": {"office@riverside.example"}, "logoUrl": {""},
			"accentColour": {"red"}, "defaultLanguage": {"en"}}
		bad := env.Post(admin, "/staff/setup/organisation", org, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-org-colour").Length() != 1 || bad.Doc.Find(`#org-name`).AttrOr("value", "") != "Riverside RC" {
			t.Fatalf("bad colour: %d %s", bad.Status, bad.TestID("org-form").Text())
		}
		if o, _ := env.Engine.Organisation(ctx, 1); o.Name != "Riverside Rowing Club" {
			t.Fatalf("a refused change was stored: %q", o.Name)
		}
		org.Set("accentColour", "#1f5570")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/organisation", org, origin...), "/staff/setup/organisation?done=org-saved")
		if o, _ := env.Engine.Organisation(ctx, 1); o.Name != "Riverside RC" || o.AccentColour != "#1f5570" || o.ContactEmail != "office@riverside.example" {
			t.Fatalf("organisation after save: %+v", o)
		}

		// Closing a period asks first; the confirmation closes it.
		closeIt := url.Values{"status": {"closed"}}
		ask := env.Post(admin, "/staff/setup/periods/1/status", closeIt, origin...)
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("closing without confirmation: %d", ask.Status)
		}
		closeIt.Set("confirmed", "1")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/periods/1/status", closeIt, origin...), "/staff/setup/memberships?done=period-closed")
		var period engine.MembershipPeriod
		if err := db.NewSelect().Model(&period).Where("id = 1").Scan(ctx); err != nil || period.Status != engine.PeriodClosed {
			t.Fatalf("period after closing: %s %v", period.Status, err)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/periods/1/status", url.Values{"status": {"open"}}, origin...), "/staff/setup/memberships?done=period-opened")
		if res := env.Post(admin, "/staff/setup/periods/999/status", url.Values{"status": {"open"}}, origin...); res.Status != http.StatusNotFound {
			t.Fatalf("another organisation's or no period: %d", res.Status)
		}

		// Staff: a bad address by its field; then added.
		add := url.Values{"email": {"not-an-address"}, "name": {"Tess"}, "role": {"treasurer"}}
		if res := env.Post(admin, "/staff/setup/staff", add, origin...); res.Status != http.StatusUnprocessableEntity || res.TestID("error-staff-email").Length() != 1 {
			t.Fatalf("bad staff address: %d", res.Status)
		}
		add.Set("email", "tess@example.org")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/staff", add, origin...), "/staff/setup/staff?done=staff-added")
		list, err := staff.Of(env.Engine).ListStaff(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]int64{}
		for _, m := range list {
			ids[m.Email] = m.ID
		}
		tess, me := ids["tess@example.org"], ids["admin@example.org"]
		if tess == 0 {
			t.Fatalf("staff not added: %+v", list)
		}
		path := func(id int64, what string) string {
			return "/staff/setup/staff/" + strconv.FormatInt(id, 10) + "/" + what
		}

		// The last administrator can neither step down nor be disabled.
		if res := env.Post(admin, path(me, "role"), url.Values{"role": {"viewer"}}, origin...); res.Status != http.StatusConflict ||
			!strings.Contains(res.TestID("setup-problem").Text(), "last active administrator") {
			t.Fatalf("last admin steps down: %d %s", res.Status, res.TestID("setup-problem").Text())
		}
		if res := env.Post(admin, path(me, "disable"), url.Values{"confirmed": {"1"}}, origin...); res.Status != http.StatusConflict {
			t.Fatalf("last admin disabled: %d", res.Status)
		}
		// With a second administrator, they can.
		handlertest.ExpectRedirect(t, env.Post(admin, path(tess, "role"), url.Values{"role": {"admin"}}, origin...), "/staff/setup/staff?done=staff-role")
		if res := env.Post(admin, path(tess, "role"), url.Values{"role": {"boss"}}, origin...); res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("unknown role: %d", res.Status)
		}
		ask = env.Post(admin, path(tess, "disable"), url.Values{}, origin...)
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("disabling without confirmation: %d", ask.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, path(tess, "disable"), url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/staff?done=staff-disabled")
		after := env.Get(admin, "/staff/setup/staff?done=staff-disabled")
		if after.TestID("staff-flash").Text() != staffview.OpsText.StaffDisabledDone ||
			after.Doc.Find(`[data-testid=staff-row][data-email="tess@example.org"] [data-testid=staff-disabled]`).Length() != 1 {
			t.Fatalf("after disabling: %s", after.TestID("staff-table").Text())
		}
		for action, want := range map[string]int{"organisation.update": 1, "period.update": 2, "staff.add": 2, "staff.role": 1, "staff.remove": 1} {
			if got := env.AuditActions(action); got != want {
				t.Errorf("%d %s audit entries, want %d", got, action, want)
			}
		}
	})
}

// TestStaffProcesses: an administrator sees the steps of the version in
// use, uploads a new version (used at once), goes back to the first
// version after confirming, and a broken file is refused by its field.
func TestStaffProcesses(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		inUse := func() int {
			t.Helper()
			var def engine.ProcessDefinition
			if err := db.NewSelect().Model(&def).Where("organisation_id = 1 AND key = 'membership' AND active").Order("version DESC").Limit(1).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			return def.Version
		}
		p := env.Get(admin, "/staff/processes")
		if p.Status != http.StatusOK || p.TestID("definition-in-use").Length() != 1 || p.TestID("step-question").Eq(1).Text() != "Club shirt size" {
			t.Fatalf("processes page: %d %s", p.Status, p.TestID("staff-main").Text())
		}
		if !strings.Contains(p.TestID("definition-steps").Text(), "Extra small") {
			t.Error("the choices of a step are not shown")
		}

		if res := env.PostFile(admin, "/staff/processes", nil, "broken.yaml", []byte("key: membership\nsteps: [")); res.Status != http.StatusUnprocessableEntity ||
			res.TestID("definition-error").Length() != 1 || inUse() != 1 {
			t.Fatalf("broken file: %d %s", res.Status, res.TestID("definition-error").Text())
		}
		raw, err := os.ReadFile("../../engine/demodata/demo_definition.yaml")
		if err != nil {
			t.Fatal(err)
		}
		v2 := strings.Replace(string(raw), "en: Club shirt size", "en: Club shirt size (new cut)", 1)
		res := env.PostFile(admin, "/staff/processes", nil, "membership.yaml", []byte(v2))
		handlertest.ExpectRedirect(t, res, "/staff/processes?done=definition-imported")
		p = env.Get(admin, res.Header.Get("Location"))
		if inUse() != 2 || p.TestID("step-question").Eq(1).Text() != "Club shirt size (new cut)" ||
			p.Doc.Find(`[data-testid=definition-row][data-version="2"] [data-testid=definition-in-use]`).Length() != 1 {
			t.Fatalf("after the upload: version %d in use; %s", inUse(), p.TestID("staff-main").Text())
		}
		activate := p.Doc.Find(`[data-testid=definition-row][data-version="1"] form`).AttrOr("action", "")
		if ask := env.Post(admin, activate, url.Values{}, "Origin", env.Server.URL); ask.TestID("staff-confirm").Length() != 1 || inUse() != 2 {
			t.Fatalf("activation without confirmation: %d", ask.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, activate, url.Values{"confirmed": {"1"}}, "Origin", env.Server.URL), "/staff/processes?done=definition-activated")
		if inUse() != 1 || env.AuditActions("definition.import") != 1 || env.AuditActions("definition.activate") != 1 {
			t.Fatalf("after activation: version %d in use, audit %d/%d", inUse(), env.AuditActions("definition.import"), env.AuditActions("definition.activate"))
		}
	})
}
