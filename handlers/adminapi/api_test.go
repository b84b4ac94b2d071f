package adminapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
	"portal/relay/session"
)

func adminCSV(env *handlertest.Env, key, csv string, headers ...string) handlertest.Response {
	env.TB.Helper()
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+"/api/admin/persons/import", strings.NewReader(csv))
	if err != nil {
		env.TB.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+key)
	return handlertest.RoundTrip(env.TB, env.NewClient(), req, headers...)
}

type importReport struct {
	Created, Updated, Unchanged, Errors int
	Rows                                []struct {
		Line       int    `json:"line"`
		ExternalID string `json:"externalId"`
		Outcome    string `json:"outcome"`
	} `json:"rows"`
}

func TestAdminAPIKeys(t *testing.T) {
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{})
	write, writeID := env.ApiKey(2, organisation.ScopeWrite)
	read, _ := env.ApiKey(2, organisation.ScopeRead)

	res := env.Do(env.Client, http.MethodGet, "/api/admin/organisation", nil)
	handlertest.ExpectHTTPError(t, res, http.StatusUnauthorized, "/api/admin/organisation")
	if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate %q", res.Header.Get("WWW-Authenticate"))
	}
	handlertest.ExpectHTTPError(t, env.Admin("ptl_nonsense", http.MethodGet, "/api/admin/organisation", nil), http.StatusUnauthorized, "/api/admin/organisation")

	var org struct {
		ID            int64    `json:"id"`
		Slug          string   `json:"slug"`
		Hostnames     []string `json:"hostnames"`
		HashSecretSet bool     `json:"hashSecretSet"`
	}
	res = env.Admin(read, http.MethodGet, "/api/admin/organisation", nil)
	res.JSON(t, &org)
	if res.Status != http.StatusOK || org.ID != 2 || org.Slug != "lakeside" || len(org.Hostnames) != 1 {
		t.Fatalf("organisation: %d %s", res.Status, res.Body)
	}
	if strings.Contains(string(res.Body), "hash_secret") || strings.Contains(string(res.Body), "s1.") {
		t.Fatalf("the organisation leaks its secret: %s", res.Body)
	}
	handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodPatch, "/api/admin/organisation", map[string]string{"name": "X"}), http.StatusForbidden, "/api/admin/organisation")
	// A key of the tennis club on the rowing club's hostname is not valid there.
	handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodGet, "/api/admin/organisation", nil, "Host", handlertest.RowingHost), http.StatusUnauthorized, "/api/admin/organisation")

	if err := organisation.Of(engine.NewService(env.DB, nil)).RevokeAPIKey(context.Background(), 2, writeID); err != nil {
		t.Fatal(err)
	}
	handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodGet, "/api/admin/organisation", nil), http.StatusUnauthorized, "/api/admin/organisation")
}

func TestAdminOrganisationSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		kr, _ := session.NewKeyring([]byte(strings.Repeat("s", 32)))
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{HashSecrets: kr.Sealer("organisation hash secret"), PublicHost: "portal.example:8443"})
		key, _ := env.ApiKey(2, organisation.ScopeWrite)
		// The portal's own address serves every club's /o/{slug} pages: no
		// club's key may claim it.
		claim := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"hostnames": []string{"PORTAL.example"}})
		if e := handlertest.ExpectHTTPError(t, claim, http.StatusUnprocessableEntity, "/api/admin/organisation"); len(e.Errors) != 1 || e.Errors[0].Field != "hostnames" {
			t.Fatalf("claiming the portal's host: %s", claim.Body)
		}
		bad := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"accentColour": "red", "hostnames": []string{"https://x/"}, "hashSecret": "short"})
		e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, "/api/admin/organisation")
		if len(e.Errors) == 0 {
			t.Fatalf("no field errors: %s", bad.Body)
		}
		bad = env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"accentColour": "red", "hostnames": []string{"https://x/"}})
		if e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, "/api/admin/organisation"); len(e.Errors) != 2 {
			t.Fatalf("want accentColour and hostnames[0]: %s", bad.Body)
		}
		handlertest.ExpectHTTPError(t, env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"slug": "riverside"}), http.StatusConflict, "/api/admin/organisation")
		handlertest.ExpectHTTPError(t, env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Renamed", "hostnames": []string{"localhost"}}), http.StatusConflict, "/api/admin/organisation")
		if o, _ := engine.NewService(db, nil).Organisation(context.Background(), 2); o.Name != "Lakeside Tennis Club" {
			t.Fatalf("a refused change wrote the name %q", o.Name)
		}

		ok := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Lakeside TC", "accentColour": "#AA0000",
			"hostnames": []string{"Tennis.Example:8080", handlertest.TennisHost}, "hashSecret": "lakeside-own-secret-1"})
		if ok.Status != http.StatusOK || !strings.Contains(string(ok.Body), `"hashSecretSet":true`) || !strings.Contains(string(ok.Body), `"accentColour":"#aa0000"`) {
			t.Fatalf("patch: %d %s", ok.Status, ok.Body)
		}
		p := env.Get(env.NewClient(), "/membership/register/3?u=demo&h="+hashlink.Sign("lakeside-own-secret-1", "demo"), "Host", "tennis.example")
		handlertest.ExpectRedirect(t, p, "/membership/register/3")
	})
}

func personsCSV(n int, from int, userKey func(i int) string) string {
	var b strings.Builder
	b.WriteString("externalId,firstName,lastName,dateOfBirth,email,userKeys\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "M-%04d,Member,Number %d,1990-01-%02d,m%d@example.org,%s\n", i, i, 1+i%28, i, userKey(i))
	}
	return b.String()
}

func TestAdminPersonImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		key, _ := env.ApiKey(2, organisation.ScopeWrite)
		household := func(i int) string { return fmt.Sprintf("family-%d", i/2) } // two persons a household
		csv := personsCSV(500, 0, household)

		var rep importReport
		res := adminCSV(env, key, csv)
		res.JSON(t, &rep)
		if res.Status != http.StatusOK || rep.Created != 500 || rep.Updated+rep.Unchanged+rep.Errors != 0 || len(rep.Rows) != 500 || rep.Rows[0].Line != 2 {
			t.Fatalf("first import: %d created %d updated %d unchanged %d errors %d", res.Status, rep.Created, rep.Updated, rep.Unchanged, rep.Errors)
		}
		res = adminCSV(env, key, csv)
		rep = importReport{}
		res.JSON(t, &rep)
		if res.Status != http.StatusOK || rep.Unchanged != 500 {
			t.Fatalf("the same file again: %d %+v", res.Status, rep.Unchanged)
		}
		changed := strings.Replace(csv, "M-0007,Member,Number 7,", "M-0007,Member,Renamed,", 1)
		res = adminCSV(env, key, changed)
		rep = importReport{}
		res.JSON(t, &rep)
		if res.Status != http.StatusOK || rep.Updated != 1 || rep.Unchanged != 499 || rep.Rows[7].Outcome != "updated" {
			t.Fatalf("one change: %d updated %d", res.Status, rep.Updated)
		}

		// Bad rows: every error by line and field, nothing written.
		count := func() int {
			n, err := db.NewSelect().Model((*engine.Person)(nil)).Where("organisation_id = 2").Count(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		before := count()
		badCSV := personsCSV(3, 1000, household) + "M-2000,,Nobody,1990-13-01,,bad key\nM-1000,Dup,Licate,1990-01-01,,\n"
		res = adminCSV(env, key, badCSV)
		e := handlertest.ExpectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/persons/import")
		fields := map[string]bool{}
		for _, f := range e.Errors {
			fields[f.Field] = true
		}
		for _, want := range []string{"line 5: firstName", "line 5: dateOfBirth", "line 5: userKeys[0]", "line 6: externalId"} {
			if !fields[want] {
				t.Errorf("error %q missing from %s", want, res.Body)
			}
		}
		if count() != before {
			t.Fatalf("a refused import wrote persons: %d, was %d", count(), before)
		}
		// Every row has an outcome the schema names: the good rows were not
		// written, so they are unchanged, and the counts add up.
		var refused struct {
			Report importReport `json:"report"`
		}
		res.JSON(t, &refused)
		r := refused.Report
		if len(r.Rows) != 5 || r.Errors != 2 || r.Unchanged != 3 || r.Created+r.Updated != 0 {
			t.Fatalf("refused import's report: %s", res.Body)
		}
		for _, row := range r.Rows {
			if want := map[bool]string{true: "error", false: "unchanged"}[row.Line >= 5]; row.Outcome != want {
				t.Errorf("line %d: outcome %q, want %q", row.Line, row.Outcome, want)
			}
		}
		handlertest.ExpectHTTPError(t, adminCSV(env, key, "externalId,first\nx,y\n"), http.StatusBadRequest, "/api/admin/persons/import")

		// JSON, and unlinking.
		res = env.Admin(key, http.MethodPost, "/api/admin/persons/import", map[string]any{"persons": []map[string]any{
			{"externalId": "J-1", "firstName": "Jo", "lastName": "Json", "dateOfBirth": "2001-02-03", "userKeys": []string{"json-family"}}}})
		rep = importReport{}
		res.JSON(t, &rep)
		if res.Status != http.StatusOK || rep.Created != 1 {
			t.Fatalf("json import: %d %s", res.Status, res.Body)
		}
		res = env.Admin(key, http.MethodPost, "/api/admin/persons/unlink", map[string]any{"links": []map[string]string{{"externalId": "M-0000", "userKey": "family-0"}}})
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"removed":1`) {
			t.Fatalf("unlink: %d %s", res.Status, res.Body)
		}

		// A household of the import registers at its club's hostname; the
		// rowing club's hostname does not know it.
		c, p := env.HashLinkAt(handlertest.TennisHost, "3", "family-3", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/3")
		overview := env.Get(c, "/membership/register/3", "Host", handlertest.TennisHost)
		if !strings.Contains(string(overview.Body), "Number 6") || !strings.Contains(string(overview.Body), "Number 7") && !strings.Contains(string(overview.Body), "Renamed") {
			t.Fatalf("imported household not shown: %d", overview.Status)
		}
		if _, p := env.HashLinkAt(handlertest.RowingHost, "1", "family-3", handlertest.HashSecret); p.Header.Get("Location") != "/membership/register/1?error=period" {
			t.Fatalf("imported household at the rowing club: %q", p.Header.Get("Location"))
		}
		// The rowing club's key sees none of it.
		rowing, _ := env.ApiKey(1, organisation.ScopeWrite)
		res = env.Admin(rowing, http.MethodPost, "/api/admin/persons/unlink", map[string]any{"links": []map[string]string{{"externalId": "M-0001", "userKey": "family-0"}}}, "Host", handlertest.RowingHost)
		handlertest.ExpectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/persons/unlink")
	})
}

const hockeyDefinition = `key: membership
name: Hockey membership
category: MEMBERSHIP
organisationId: 1
steps:
  - name: stick_hand
    questionText: Which hand holds the stick?
    questionType: DRP
    required: true
    options:
      - {value: R, label: Right}
      - {value: L, label: Left}
  - name: terms
    questionText: I accept the club rules
    questionType: ITC
    required: true
`

// A third club is built entirely through the admin API (after the
// operator's `portal orgs create`), its members registered through its own
// hostname, and nothing of the other clubs shows through.
func TestBuildOrganisationThroughAdminAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		svc := engine.NewService(db, nil)
		org, err := organisation.Of(svc).CreateOrganisation(context.Background(), organisation.OrganisationChange{Name: ptrTo("Hill Hockey"), Slug: ptrTo("hill")})
		if err != nil {
			t.Fatal(err)
		}
		key, _ := env.ApiKey(org.ID, organisation.ScopeWrite)
		const host = "hill.example"
		// The admin API on the club's own hostname (unknown until the first PATCH names it).
		adm := func(method, path string, body any, headers ...string) handlertest.Response {
			t.Helper()
			return env.Admin(key, method, path, body, append(headers, "Host", host)...)
		}
		must := func(res handlertest.Response, status int) handlertest.Response {
			t.Helper()
			if res.Status != status {
				t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
			}
			return res
		}
		must(adm(http.MethodPatch, "/api/admin/organisation", map[string]any{"hostnames": []string{host}, "accentColour": "#7c2d12", "contactEmail": "board@hill.example"}), http.StatusOK)
		must(adm(http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 18}), http.StatusCreated)
		must(adm(http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "YOUTH", "name": "Youth", "maxAge": 17}), http.StatusCreated)
		must(adm(http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "YOUTH", "name": "Again"}), http.StatusConflict)
		must(adm(http.MethodPost, "/api/admin/definitions", hockeyDefinition, "Content-Type", "application/yaml"), http.StatusCreated)
		must(adm(http.MethodPost, "/api/admin/definitions", hockeyDefinition, "Content-Type", "application/yaml"), http.StatusOK)
		e := handlertest.ExpectHTTPError(t, adm(http.MethodPost, "/api/admin/periods", map[string]any{"name": "Season", "startDate": "2026-13-01", "endDate": "2026-01-01", "currency": "gbp", "definitionKey": "nope"}), http.StatusUnprocessableEntity, "/api/admin/periods")
		if len(e.Errors) != 3 {
			t.Fatalf("want startDate, currency and definitionKey named: %+v", e.Errors)
		}
		var period struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		}
		now := clock.Now().UTC()
		must(adm(http.MethodPost, "/api/admin/periods", map[string]any{"name": "Hockey season", "startDate": now.AddDate(0, -1, 0).Format(time.DateOnly),
			"endDate": now.AddDate(0, 11, 0).Format(time.DateOnly), "currency": "GBP", "definitionKey": "membership"}), http.StatusCreated).JSON(t, &period)
		if period.Status != "closed" {
			t.Fatalf("a new period is %q, want closed", period.Status)
		}
		pid := fmt.Sprint(period.ID)
		var typeList []struct {
			ID   int64
			Code string
		}
		must(adm(http.MethodGet, "/api/admin/membership-types", nil), http.StatusOK).JSON(t, &typeList)
		senior, youth := typeList[0].ID, typeList[1].ID
		rules := "/api/admin/periods/" + pid + "/price-rules"
		early := now.AddDate(0, 1, 0)
		e = handlertest.ExpectHTTPError(t, adm(http.MethodPut, rules, map[string]any{"rules": []map[string]any{
			{"code": "senior-fee", "kind": "MEMBERSHIP_FEE", "label": "Senior", "membershipTypeId": senior, "amountMinor": 10000},
			{"code": "eb-1", "kind": "EARLY_BIRD", "label": "Early", "validUntil": early, "percentBp": -1000},
			{"code": "eb-2", "kind": "EARLY_BIRD", "label": "Earlier", "validUntil": early.AddDate(0, -1, 0), "percentBp": -500},
			{"code": "loyal", "kind": "MEMBER_TYPE", "label": "Loyal", "memberType": "RENEWAL", "amountMinor": -20000},
		}}), http.StatusUnprocessableEntity, rules)
		if len(e.Errors) != 2 || e.Errors[0].Field != "[2].validFrom" {
			t.Fatalf("want the overlapping early-bird and the negative total named: %+v", e.Errors)
		}
		must(adm(http.MethodPut, rules, map[string]any{"rules": []map[string]any{
			{"code": "senior-fee", "kind": "MEMBERSHIP_FEE", "label": "Senior membership", "membershipTypeId": senior, "amountMinor": 9000},
			{"code": "youth-fee", "kind": "MEMBERSHIP_FEE", "label": "Youth membership", "membershipTypeId": youth, "amountMinor": 4000},
			{"code": "eb", "kind": "EARLY_BIRD", "label": "Early bird", "validUntil": early, "percentBp": -1000},
			{"code": "admin", "kind": "ADMIN_FEE", "label": "Administration", "amountMinor": 300},
		}}), http.StatusOK)
		res := adminCSV(env, key, personsCSV(500, 0, func(i int) string { return fmt.Sprintf("hill-%d", i/2) }), "Host", host)
		var rep importReport
		must(res, http.StatusOK).JSON(t, &rep)
		if rep.Created != 500 {
			t.Fatalf("created %d", rep.Created)
		}

		// Closed: the household's link says so; opened: it registers.
		_, p := env.HashLinkAt(host, pid, "hill-10", handlertest.HashSecret)
		if p.Header.Get("Location") != "/membership/register/"+pid+"?error=period" {
			t.Fatalf("link to a closed period: %d %q", p.Status, p.Header.Get("Location"))
		}
		must(adm(http.MethodPatch, "/api/admin/periods/"+pid, map[string]any{"status": "open"}), http.StatusOK)
		c, p := env.HashLinkAt(host, pid, "hill-10", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/"+pid)
		overview := env.Get(c, "/membership/register/"+pid, "Host", host)
		if overview.TestID("brand-name").Text() != "Hill Hockey" || !strings.Contains(string(overview.Body), "Number 20") || !strings.Contains(string(overview.Body), "Number 21") {
			t.Fatalf("overview at %s: %d %s", host, overview.Status, handlertest.PersonNames(overview))
		}
		api := env.NewClient()
		must(env.Do(api, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "hill-10", "hash": hashlink.Sign(handlertest.HashSecret, "hill-10")}, "Host", host), http.StatusOK)
		var f handlertest.Form
		must(env.Do(api, http.MethodGet, "/api/forms/membership/"+pid+"?userKey=hill-10", nil, "Host", host), http.StatusOK).JSON(t, &f) // 200: the overview page made it
		people := []map[string]any{{"id": f.People[0].ID}, {"id": f.People[1].ID}}
		next := func(step int, answer string) handlertest.Form {
			t.Helper()
			var out handlertest.Form
			body := map[string]any{"processId": f.ProcessID, "step": step, "people": people}
			if answer != "" {
				body["people"] = []map[string]any{{"id": f.People[0].ID, "answer": answer}, {"id": f.People[1].ID, "answer": answer}}
			}
			must(env.Do(api, http.MethodPost, "/api/forms/next", body, "Host", host), http.StatusOK).JSON(t, &out)
			return out
		}
		next(0, "")
		next(1, "L")
		done := next(2, "1")
		if done.ProcessState != "DONE" || done.PaymentURL == nil {
			t.Fatalf("registration at the new club: %+v", done)
		}
		var order struct {
			Total    int64
			Currency string
		}
		if err := db.NewSelect().Table("orders").Column("total_minor", "currency").Where("process_instance_id = ?", f.ProcessID).Scan(context.Background(), &order.Total, &order.Currency); err != nil {
			t.Fatal(err)
		}
		if order.Currency != "GBP" || order.Total != 2*8100+300 { // two seniors at 90.00 less 10% early bird, plus 3.00
			t.Fatalf("order %d %s", order.Total, order.Currency)
		}

		// Nothing of the other clubs from here: pages, form API, admin API.
		if p := env.Get(c, "/membership/register/1", "Host", host); p.Status == http.StatusOK || strings.Contains(string(p.Body), "Alex") {
			t.Fatalf("rowing period at the hockey club: %d", p.Status)
		}
		handlertest.ExpectHTTPError(t, env.Do(api, http.MethodGet, "/api/forms/membership/3?userKey=hill-10", nil, "Host", host), http.StatusNotFound, "/api/forms/membership/3")
		handlertest.ExpectHTTPError(t, adm(http.MethodPatch, "/api/admin/periods/1", map[string]any{"status": "closed"}), http.StatusNotFound, "/api/admin/periods/1")
		var periods []struct{ ID int64 }
		must(adm(http.MethodGet, "/api/admin/periods", nil), http.StatusOK).JSON(t, &periods)
		var types []struct{ Code string }
		must(adm(http.MethodGet, "/api/admin/membership-types", nil), http.StatusOK).JSON(t, &types)
		if len(periods) != 1 || periods[0].ID != period.ID || len(types) != 2 {
			t.Fatalf("the hockey key sees periods %v and types %v", periods, types)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
