package handlers_test

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
	"portal/views/staffview"
)

// TestStaffSetupPriceCalculator: "a family of two adults and a junior,
// renewing, in the early-bird window" pays what the demo rules give,
// computed by the engine's pricing; an incomplete calculation says why.
func TestStaffSetupPriceCalculator(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	env.addStaff("admin@example.org", staff.RoleAdmin)
	admin := env.mustStaffSignIn("admin@example.org", "/staff")
	q := url.Values{"calc_period": {"1"}, "calc_on": {clock.Now().Format(time.DateOnly)},
		"calc_type": {"1", "1", "2", ""}, "calc_member": {"RENEWAL", "RENEWAL", "RENEWAL", "NEW"}}
	p := env.get(admin, "/staff/setup/memberships?"+q.Encode())
	// Adults: 120.00 - 10.00 loyalty - 12.00 early-bird - 18.00 family = 80.00 each;
	// junior: 60.00 - 10.00 - 6.00 - 9.00 = 35.00; administration fee 2.50.
	if p.status != http.StatusOK || p.testid("calc-total").Text() != "EUR 197.50" {
		t.Fatalf("calculator: %d %q %s", p.status, p.testid("calc-total").Text(), p.testid("calc-result").Text())
	}
	if n := p.testid("calc-line").Length(); n != 13 {
		t.Errorf("%d lines, want 13 (4 per person and the administration fee)", n)
	}
	// The choices stay selected.
	if p.doc.Find(`#calc-member-1 option[selected]`).AttrOr("value", "") != "RENEWAL" || p.doc.Find(`#calc-type-3 option[selected]`).AttrOr("value", "") != "2" {
		t.Error("the calculator's choices are not kept")
	}
	empty := env.get(admin, "/staff/setup/memberships?calc_period=1&calc_type=&calc_type=")
	if empty.status != http.StatusOK || !strings.Contains(empty.testid("calc-error").Text(), "1 to 20 persons") {
		t.Fatalf("no persons: %s", empty.testid("calc-result").Text())
	}
	if other := env.get(admin, "/staff/setup/memberships?calc_period=999&calc_type=1"); !strings.Contains(other.testid("calc-error").Text(), "not found") {
		t.Fatalf("unknown period: %s", other.testid("calc-result").Text())
	}
}

// TestStaffSetupChanges: an administrator changes the organisation
// (errors by field, changing nothing), closes a period after confirming,
// adds a staff member, changes roles and disables, and cannot take away
// the last administrator. Every change is audited.
func TestStaffSetupChanges(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{organisationRefresh: -1})
		ctx := t.Context()
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		p := env.get(admin, "/staff/setup/organisation")
		if p.status != http.StatusOK || p.doc.Find(`#org-name`).AttrOr("value", "") != "Riverside Rowing Club" ||
			p.testid("org-secret-state").Text() != staffview.OpsText.SecretNotSet {
			t.Fatalf("organisation section: %d %s", p.status, p.testid("staff-main").Text())
		}
		if p := env.get(admin, "/staff/setup/memberships"); p.status != http.StatusOK || p.testid("period-row").Length() != 2 {
			t.Fatalf("memberships section: %d %s", p.status, p.testid("staff-main").Text())
		}

		// Organisation: a bad colour is shown by its field and nothing changes.
		org := url.Values{"name": {"Riverside RC"}, "contactEmail": {"office@riverside.example"}, "logoUrl": {""},
			"accentColour": {"red"}, "defaultLanguage": {"en"}}
		bad := env.post(admin, "/staff/setup/organisation", org, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-org-colour").Length() != 1 || bad.doc.Find(`#org-name`).AttrOr("value", "") != "Riverside RC" {
			t.Fatalf("bad colour: %d %s", bad.status, bad.testid("org-form").Text())
		}
		if o, _ := env.svc.Organisation(ctx, 1); o.Name != "Riverside Rowing Club" {
			t.Fatalf("a refused change was stored: %q", o.Name)
		}
		org.Set("accentColour", "#1f5570")
		expectRedirect(t, env.post(admin, "/staff/setup/organisation", org, origin...), "/staff/setup/organisation?done=org-saved")
		if o, _ := env.svc.Organisation(ctx, 1); o.Name != "Riverside RC" || o.AccentColour != "#1f5570" || o.ContactEmail != "office@riverside.example" {
			t.Fatalf("organisation after save: %+v", o)
		}

		// Closing a period asks first; the confirmation closes it.
		closeIt := url.Values{"status": {"closed"}}
		ask := env.post(admin, "/staff/setup/periods/1/status", closeIt, origin...)
		if ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("closing without confirmation: %d", ask.status)
		}
		closeIt.Set("confirmed", "1")
		expectRedirect(t, env.post(admin, "/staff/setup/periods/1/status", closeIt, origin...), "/staff/setup/memberships?done=period-closed")
		var period engine.MembershipPeriod
		if err := db.NewSelect().Model(&period).Where("id = 1").Scan(ctx); err != nil || period.Status != engine.PeriodClosed {
			t.Fatalf("period after closing: %s %v", period.Status, err)
		}
		expectRedirect(t, env.post(admin, "/staff/setup/periods/1/status", url.Values{"status": {"open"}}, origin...), "/staff/setup/memberships?done=period-opened")
		if res := env.post(admin, "/staff/setup/periods/999/status", url.Values{"status": {"open"}}, origin...); res.status != http.StatusNotFound {
			t.Fatalf("another organisation's or no period: %d", res.status)
		}

		// Staff: a bad address by its field; then added.
		add := url.Values{"email": {"not-an-address"}, "name": {"Tess"}, "role": {"treasurer"}}
		if res := env.post(admin, "/staff/setup/staff", add, origin...); res.status != http.StatusUnprocessableEntity || res.testid("error-staff-email").Length() != 1 {
			t.Fatalf("bad staff address: %d", res.status)
		}
		add.Set("email", "tess@example.org")
		expectRedirect(t, env.post(admin, "/staff/setup/staff", add, origin...), "/staff/setup/staff?done=staff-added")
		list, err := staff.Of(env.svc).ListStaff(ctx, 1)
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
		if res := env.post(admin, path(me, "role"), url.Values{"role": {"viewer"}}, origin...); res.status != http.StatusConflict ||
			!strings.Contains(res.testid("setup-problem").Text(), "last active administrator") {
			t.Fatalf("last admin steps down: %d %s", res.status, res.testid("setup-problem").Text())
		}
		if res := env.post(admin, path(me, "disable"), url.Values{"confirmed": {"1"}}, origin...); res.status != http.StatusConflict {
			t.Fatalf("last admin disabled: %d", res.status)
		}
		// With a second administrator, they can.
		expectRedirect(t, env.post(admin, path(tess, "role"), url.Values{"role": {"admin"}}, origin...), "/staff/setup/staff?done=staff-role")
		if res := env.post(admin, path(tess, "role"), url.Values{"role": {"boss"}}, origin...); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("unknown role: %d", res.status)
		}
		ask = env.post(admin, path(tess, "disable"), url.Values{}, origin...)
		if ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("disabling without confirmation: %d", ask.status)
		}
		expectRedirect(t, env.post(admin, path(tess, "disable"), url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/staff?done=staff-disabled")
		after := env.get(admin, "/staff/setup/staff?done=staff-disabled")
		if after.testid("staff-flash").Text() != staffview.OpsText.StaffDisabledDone ||
			after.doc.Find(`[data-testid=staff-row][data-email="tess@example.org"] [data-testid=staff-disabled]`).Length() != 1 {
			t.Fatalf("after disabling: %s", after.testid("staff-table").Text())
		}
		for action, want := range map[string]int{"organisation.update": 1, "period.update": 2, "staff.add": 2, "staff.role": 1, "staff.remove": 1} {
			if got := env.auditActions(action); got != want {
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
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		inUse := func() int {
			t.Helper()
			var def engine.ProcessDefinition
			if err := db.NewSelect().Model(&def).Where("organisation_id = 1 AND key = 'membership' AND active").Order("version DESC").Limit(1).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			return def.Version
		}
		p := env.get(admin, "/staff/processes")
		if p.status != http.StatusOK || p.testid("definition-in-use").Length() != 1 || p.testid("step-question").Eq(1).Text() != "Club shirt size" {
			t.Fatalf("processes page: %d %s", p.status, p.testid("staff-main").Text())
		}
		if !strings.Contains(p.testid("definition-steps").Text(), "Extra small") {
			t.Error("the choices of a step are not shown")
		}

		if res := env.postFile(admin, "/staff/processes", nil, "broken.yaml", []byte("key: membership\nsteps: [")); res.status != http.StatusUnprocessableEntity ||
			res.testid("definition-error").Length() != 1 || inUse() != 1 {
			t.Fatalf("broken file: %d %s", res.status, res.testid("definition-error").Text())
		}
		raw, err := os.ReadFile("../engine/demodata/demo_definition.yaml")
		if err != nil {
			t.Fatal(err)
		}
		v2 := strings.Replace(string(raw), "en: Club shirt size", "en: Club shirt size (new cut)", 1)
		res := env.postFile(admin, "/staff/processes", nil, "membership.yaml", []byte(v2))
		expectRedirect(t, res, "/staff/processes?done=definition-imported")
		p = env.get(admin, res.header.Get("Location"))
		if inUse() != 2 || p.testid("step-question").Eq(1).Text() != "Club shirt size (new cut)" ||
			p.doc.Find(`[data-testid=definition-row][data-version="2"] [data-testid=definition-in-use]`).Length() != 1 {
			t.Fatalf("after the upload: version %d in use; %s", inUse(), p.testid("staff-main").Text())
		}
		activate := p.doc.Find(`[data-testid=definition-row][data-version="1"] form`).AttrOr("action", "")
		if ask := env.post(admin, activate, url.Values{}, "Origin", env.srv.URL); ask.testid("staff-confirm").Length() != 1 || inUse() != 2 {
			t.Fatalf("activation without confirmation: %d", ask.status)
		}
		expectRedirect(t, env.post(admin, activate, url.Values{"confirmed": {"1"}}, "Origin", env.srv.URL), "/staff/processes?done=definition-activated")
		if inUse() != 1 || env.auditActions("definition.import") != 1 || env.auditActions("definition.activate") != 1 {
			t.Fatalf("after activation: version %d in use, audit %d/%d", inUse(), env.auditActions("definition.import"), env.auditActions("definition.activate"))
		}
	})
}
