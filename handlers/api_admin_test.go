package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/relay/hashlink"
	"portal/relay/session"
)

// apiKey makes an admin API key of an organisation.
func (env *testEnv) apiKey(orgID int64, scope engine.APIKeyScope) (string, int64) {
	env.t.Helper()
	key, k, err := engine.NewService(env.db, nil).CreateAPIKey(context.Background(), orgID, "test", scope)
	if err != nil {
		env.t.Fatal(err)
	}
	return key, k.ID
}

func (env *testEnv) admin(key, method, path string, body any, headers ...string) response {
	env.t.Helper()
	return env.do(env.newClient(), method, path, body, append([]string{"Authorization", "Bearer " + key}, headers...)...)
}

func (env *testEnv) adminCSV(key, csv string) response {
	env.t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.srv.URL+"/api/admin/persons/import", strings.NewReader(csv))
	if err != nil {
		env.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+key)
	return roundTrip(env.t, env.newClient(), req)
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
	env := newTenantEnv(t, dbtest.SQLite(t), envOptions{})
	write, writeID := env.apiKey(2, engine.ScopeWrite)
	read, _ := env.apiKey(2, engine.ScopeRead)

	res := env.do(env.client, http.MethodGet, "/api/admin/organisation", nil)
	expectHTTPError(t, res, http.StatusUnauthorized, "/api/admin/organisation")
	if !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate %q", res.header.Get("WWW-Authenticate"))
	}
	expectHTTPError(t, env.admin("ptl_nonsense", http.MethodGet, "/api/admin/organisation", nil), http.StatusUnauthorized, "/api/admin/organisation")

	var org struct {
		ID            int64    `json:"id"`
		Slug          string   `json:"slug"`
		Hostnames     []string `json:"hostnames"`
		HashSecretSet bool     `json:"hashSecretSet"`
	}
	res = env.admin(read, http.MethodGet, "/api/admin/organisation", nil)
	res.json(t, &org)
	if res.status != http.StatusOK || org.ID != 2 || org.Slug != "lakeside" || len(org.Hostnames) != 1 {
		t.Fatalf("organisation: %d %s", res.status, res.body)
	}
	if strings.Contains(string(res.body), "hash_secret") || strings.Contains(string(res.body), "s1.") {
		t.Fatalf("the organisation leaks its secret: %s", res.body)
	}
	expectHTTPError(t, env.admin(read, http.MethodPatch, "/api/admin/organisation", map[string]string{"name": "X"}), http.StatusForbidden, "/api/admin/organisation")
	// A key of the tennis club on the rowing club's hostname is not valid there.
	expectHTTPError(t, env.admin(read, http.MethodGet, "/api/admin/organisation", nil, "Host", rowingHost), http.StatusUnauthorized, "/api/admin/organisation")

	if err := engine.NewService(env.db, nil).RevokeAPIKey(context.Background(), 2, writeID); err != nil {
		t.Fatal(err)
	}
	expectHTTPError(t, env.admin(write, http.MethodGet, "/api/admin/organisation", nil), http.StatusUnauthorized, "/api/admin/organisation")
}

func TestAdminOrganisationSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		kr, _ := session.NewKeyring([]byte(strings.Repeat("s", 32)))
		env := newTenantEnv(t, db, envOptions{hashSecrets: kr.Sealer("organisation hash secret")})
		key, _ := env.apiKey(2, engine.ScopeWrite)
		bad := env.admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"accentColour": "red", "hostnames": []string{"https://x/"}, "hashSecret": "short"})
		e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, "/api/admin/organisation")
		if len(e.Errors) == 0 {
			t.Fatalf("no field errors: %s", bad.body)
		}
		bad = env.admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"accentColour": "red", "hostnames": []string{"https://x/"}})
		if e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, "/api/admin/organisation"); len(e.Errors) != 2 {
			t.Fatalf("want accentColour and hostnames[0]: %s", bad.body)
		}
		expectHTTPError(t, env.admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"slug": "riverside"}), http.StatusConflict, "/api/admin/organisation")
		expectHTTPError(t, env.admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Renamed", "hostnames": []string{"localhost"}}), http.StatusConflict, "/api/admin/organisation")
		if o, _ := engine.NewService(db, nil).Organisation(context.Background(), 2); o.Name != "Lakeside Tennis Club" {
			t.Fatalf("a refused change wrote the name %q", o.Name)
		}

		ok := env.admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Lakeside TC", "accentColour": "#AA0000",
			"hostnames": []string{"Tennis.Example:8080", tennisHost}, "hashSecret": "lakeside-own-secret-1"})
		if ok.status != http.StatusOK || !strings.Contains(string(ok.body), `"hashSecretSet":true`) || !strings.Contains(string(ok.body), `"accentColour":"#aa0000"`) {
			t.Fatalf("patch: %d %s", ok.status, ok.body)
		}
		p := env.get(env.newClient(), "/membership/register/3?u=demo&h="+hashlink.Sign("lakeside-own-secret-1", "demo"), "Host", "tennis.example")
		expectRedirect(t, p, "/membership/register/3")
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
		env := newTenantEnv(t, db, envOptions{})
		key, _ := env.apiKey(2, engine.ScopeWrite)
		household := func(i int) string { return fmt.Sprintf("family-%d", i/2) } // two persons a household
		csv := personsCSV(500, 0, household)

		var rep importReport
		res := env.adminCSV(key, csv)
		res.json(t, &rep)
		if res.status != http.StatusOK || rep.Created != 500 || rep.Updated+rep.Unchanged+rep.Errors != 0 || len(rep.Rows) != 500 || rep.Rows[0].Line != 2 {
			t.Fatalf("first import: %d created %d updated %d unchanged %d errors %d", res.status, rep.Created, rep.Updated, rep.Unchanged, rep.Errors)
		}
		res = env.adminCSV(key, csv)
		rep = importReport{}
		res.json(t, &rep)
		if res.status != http.StatusOK || rep.Unchanged != 500 {
			t.Fatalf("the same file again: %d %+v", res.status, rep.Unchanged)
		}
		changed := strings.Replace(csv, "M-0007,Member,Number 7,", "M-0007,Member,Renamed,", 1)
		res = env.adminCSV(key, changed)
		rep = importReport{}
		res.json(t, &rep)
		if res.status != http.StatusOK || rep.Updated != 1 || rep.Unchanged != 499 || rep.Rows[7].Outcome != "updated" {
			t.Fatalf("one change: %d updated %d", res.status, rep.Updated)
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
		res = env.adminCSV(key, badCSV)
		e := expectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/persons/import")
		fields := map[string]bool{}
		for _, f := range e.Errors {
			fields[f.Field] = true
		}
		for _, want := range []string{"line 5: firstName", "line 5: dateOfBirth", "line 5: userKeys[0]", "line 6: externalId"} {
			if !fields[want] {
				t.Errorf("error %q missing from %s", want, res.body)
			}
		}
		if count() != before {
			t.Fatalf("a refused import wrote persons: %d, was %d", count(), before)
		}
		expectHTTPError(t, env.adminCSV(key, "externalId,first\nx,y\n"), http.StatusBadRequest, "/api/admin/persons/import")

		// JSON, and unlinking.
		res = env.admin(key, http.MethodPost, "/api/admin/persons/import", map[string]any{"persons": []map[string]any{
			{"externalId": "J-1", "firstName": "Jo", "lastName": "Json", "dateOfBirth": "2001-02-03", "userKeys": []string{"json-family"}}}})
		rep = importReport{}
		res.json(t, &rep)
		if res.status != http.StatusOK || rep.Created != 1 {
			t.Fatalf("json import: %d %s", res.status, res.body)
		}
		res = env.admin(key, http.MethodPost, "/api/admin/persons/unlink", map[string]any{"links": []map[string]string{{"externalId": "M-0000", "userKey": "family-0"}}})
		if res.status != http.StatusOK || !strings.Contains(string(res.body), `"removed":1`) {
			t.Fatalf("unlink: %d %s", res.status, res.body)
		}

		// A household of the import registers at its club's hostname; the
		// rowing club's hostname does not know it.
		c, p := env.hashLinkAt(tennisHost, "3", "family-3", testSecret)
		expectRedirect(t, p, "/membership/register/3")
		overview := env.get(c, "/membership/register/3", "Host", tennisHost)
		if !strings.Contains(string(overview.body), "Number 6") || !strings.Contains(string(overview.body), "Number 7") && !strings.Contains(string(overview.body), "Renamed") {
			t.Fatalf("imported household not shown: %d", overview.status)
		}
		if _, p := env.hashLinkAt(rowingHost, "1", "family-3", testSecret); p.header.Get("Location") != "/membership/register/1?error=period" {
			t.Fatalf("imported household at the rowing club: %q", p.header.Get("Location"))
		}
		// The rowing club's key sees none of it.
		rowing, _ := env.apiKey(1, engine.ScopeWrite)
		res = env.admin(rowing, http.MethodPost, "/api/admin/persons/unlink", map[string]any{"links": []map[string]string{{"externalId": "M-0001", "userKey": "family-0"}}}, "Host", rowingHost)
		expectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/persons/unlink")
	})
}
