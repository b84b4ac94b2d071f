package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/session"
)

// The demo's two clubs (engine.SeedDemoOrganisations): the rowing club on
// localhost (period 1), the tennis club on 127.0.0.1 (period 3), which is
// also the test server's own address. The user key "demo" has a household
// in each.
const (
	rowingHost = "localhost"
	tennisHost = "127.0.0.1"
)

func newOrganisationsEnv(t *testing.T, db *bun.DB, o envOptions) *testEnv {
	t.Helper()
	env := newEnvWith(t, db, o)
	if err := organisation.SeedDemoOrganisations(context.Background(), db, clock.Now()); err != nil {
		t.Fatalf("seed organisations: %v", err)
	}
	return env
}

// hashLinkAt opens a hash link of period on host and returns the client and the answer.
func (env *testEnv) hashLinkAt(host string, period, userKey, secret string) (*http.Client, page) {
	env.t.Helper()
	c := env.newClient()
	return c, env.get(c, "/membership/register/"+period+"?u="+userKey+"&h="+hashlink.Sign(secret, userKey), "Host", host)
}

func names(p page) string {
	var out []string
	p.doc.Find(`[data-testid="person-name"], label, td, li`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
	return strings.Join(out, "|")
}

func TestOrganisationsByHostname(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})

		tennis, p := env.hashLinkAt(tennisHost, "3", "demo", testSecret)
		expectRedirect(t, p, "/membership/register/3")
		overview := env.get(tennis, "/membership/register/3", "Host", tennisHost)
		if overview.status != http.StatusOK {
			t.Fatalf("tennis overview: %d", overview.status)
		}
		body := string(overview.body)
		if !strings.Contains(body, "Kim") || strings.Contains(body, "Alex") {
			t.Fatalf("tennis overview shows the wrong household: %s", names(overview))
		}
		if got := overview.testid("brand-name").Text(); got != "Lakeside Tennis Club" {
			t.Fatalf("brand %q", got)
		}
		if href, _ := overview.doc.Find(`link[href^="/brand.css"]`).Attr("href"); href != "/brand.css?c=047857" {
			t.Fatalf("brand stylesheet %q", href)
		}
		if css := env.do(tennis, http.MethodGet, "/brand.css?c=047857", nil, "Host", tennisHost); !strings.Contains(string(css.body), "--brand-accent:#047857") {
			t.Fatalf("brand.css: %d %s", css.status, css.body)
		}
		if got := overview.testid("brand-contact").Text(); !strings.Contains(got, "office@lakeside-tennis.example") {
			t.Fatalf("contact %q", got)
		}

		// The rowing club's period is not found from the tennis club, on the
		// pages and on the API, even with the same user key.
		if p := env.get(tennis, "/membership/register/1", "Host", tennisHost); p.status == http.StatusOK || strings.Contains(string(p.body), "Alex") {
			t.Fatalf("rowing period from the tennis host: %d", p.status)
		}
		if _, p := env.hashLinkAt(tennisHost, "1", "demo", testSecret); p.header.Get("Location") != "/membership/register/1?error=period" {
			t.Fatalf("rowing hash link on the tennis host: %d %q", p.status, p.header.Get("Location"))
		}
		api := env.newClient()
		if res := env.do(api, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}, "Host", tennisHost); res.status != http.StatusOK {
			t.Fatalf("login on the tennis host: %d %s", res.status, res.body)
		}
		expectHTTPError(t, env.do(api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", tennisHost), http.StatusNotFound, "/api/forms/membership/1")
		res := env.do(api, http.MethodGet, "/api/forms/membership/3?userKey=demo", nil, "Host", tennisHost)
		var f form
		res.json(t, &f)
		if (res.status != http.StatusOK && res.status != http.StatusCreated) || len(f.People) != 2 || f.People[0].FirstName != "Kim" {
			t.Fatalf("tennis form: %d %s", res.status, res.body)
		}

		// The rowing club: its own household, and its registration is not the tennis club's.
		rowing := env.newClient()
		if res := env.do(rowing, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}, "Host", rowingHost); res.status != http.StatusOK {
			t.Fatalf("login on the rowing host: %d %s", res.status, res.body)
		}
		res = env.do(rowing, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", rowingHost)
		var rf form
		res.json(t, &rf)
		if res.status != http.StatusCreated || rf.People[0].FirstName == "Kim" {
			t.Fatalf("rowing form: %d %s", res.status, res.body)
		}
		path := "/api/forms/processes/" + rf.ProcessID + "/resume"
		expectHTTPError(t, env.do(api, http.MethodPost, path, map[string]any{}, "Host", tennisHost), http.StatusNotFound, path)

		// A session is bound to its club: the tennis session (the cookie is
		// sent whatever the Host) is no session at the rowing club.
		expectHTTPError(t, env.do(api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", rowingHost), http.StatusUnauthorized, "/api/forms/membership/1")
		if p := env.get(tennis, "/membership/register/1", "Host", rowingHost); p.status != http.StatusForbidden || p.testid("error-page").Length() != 1 {
			t.Fatalf("tennis page session at the rowing club: %d", p.status)
		}
	})
}

func TestUnknownHostIsNotFound(t *testing.T) {
	env := newOrganisationsEnv(t, dbtest.SQLite(t), envOptions{})
	p := env.get(env.client, "/membership/register/1", "Host", "nobody.example", "Accept", "text/html")
	if p.status != http.StatusNotFound || !strings.Contains(p.testid("error-message").Text(), "No organisation") {
		t.Fatalf("unknown host page: %d %s", p.status, p.body)
	}
	expectHTTPError(t, env.do(env.client, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", "nobody.example"), http.StatusNotFound, "/api/forms/membership/1")
	expectHTTPError(t, env.do(env.client, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}, "Host", "nobody.example"), http.StatusNotFound, "/api/auth/external-login")
	// Probes, assets and the relay do not belong to a club.
	if res := env.do(env.client, http.MethodGet, "/healthz", nil, "Host", "nobody.example"); res.status != http.StatusOK {
		t.Fatalf("healthz on an unknown host: %d", res.status)
	}
	if res := env.do(env.client, http.MethodGet, "/services/admin-service/x", nil, "Host", "nobody.example"); res.status != http.StatusServiceUnavailable {
		t.Fatalf("relay on an unknown host: %d %s", res.status, res.body)
	}
	// Links built on PORTAL_BASE_URL for e-mails and cards name their order
	// or card by an unguessable reference: they answer on any host.
	for _, path := range []string{"/pay/PO-UNKNOWN0000000000", "/verify/unknown-token"} {
		p := env.get(env.client, path, "Host", "nobody.example", "Accept", "text/html")
		if strings.Contains(p.testid("error-message").Text(), "No organisation") {
			t.Errorf("%s on an unknown host: the unknown organisation's 404 (%d), want the page's own answer", path, p.status)
		}
	}
}

// One hostname serving many clubs: /o/{slug}/ picks the club, and every
// address the pages make keeps the prefix.
func TestOrganisationsByPathPrefix(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		const shared = "portal.example" // no club's hostname
		c := env.newClient()
		p := env.get(c, "/o/riverside/membership/register/1?u=demo&h="+hashlink.Sign(testSecret, "demo"), "Host", shared)
		expectRedirect(t, p, "/o/riverside/membership/register/1")
		overview := env.get(c, "/o/riverside/membership/register/1", "Host", shared)
		start, _ := overview.testid("start").Attr("href")
		if overview.status != http.StatusOK || start != "/o/riverside/membership/register/1/persons" {
			t.Fatalf("overview %d, start link %q", overview.status, start)
		}
		if got := overview.testid("brand-name").Text(); got != "Riverside Rowing Club" {
			t.Fatalf("brand %q", got)
		}
		persons := env.get(c, start, "Host", shared)
		if action, _ := persons.testid("step-form").Attr("action"); action != "/o/riverside/membership/register/1/persons" {
			t.Fatalf("persons form action %q", action)
		}
		post := env.post(c, "/o/riverside/membership/register/1/persons", url.Values{"person": {"1"}}, "Host", shared)
		expectRedirect(t, post, "/o/riverside/membership/register/1/step/1")

		// The other club under the same hostname: another session, no access to the first's period.
		if p := env.get(c, "/o/lakeside/membership/register/1", "Host", shared); p.status == http.StatusOK {
			t.Fatalf("rowing period under lakeside: %d", p.status)
		}
		if p := env.get(c, "/o/nope/membership/register/1", "Host", shared, "Accept", "text/html"); p.status != http.StatusNotFound {
			t.Fatalf("unknown slug: %d", p.status)
		}
		// A club's own hostname serves only it.
		if p := env.get(c, "/o/riverside/membership/register/1", "Host", tennisHost); p.status != http.StatusNotFound {
			t.Fatalf("/o/riverside on the tennis host: %d", p.status)
		}
	})
}

// An organisation signs its links with a secret of its own, kept sealed
// with the session key; the environment's secret stays the default of the others.
func TestOrganisationHashSecret(t *testing.T) {
	kr, err := session.NewKeyring([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	sealer := kr.Sealer(server.HashSecretPurpose)
	env := newOrganisationsEnv(t, dbtest.SQLite(t), envOptions{hashSecrets: sealer, organisationRefresh: -1})
	const own = "tennis-club-secret"
	setSealed := func(sealed string) {
		t.Helper()
		if _, err := env.db.NewUpdate().Model((*engine.Organisation)(nil)).Set("hash_secret_sealed = ?", sealed).Where("id = 2").Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	setSealed(sealer.Seal([]byte(own), server.HashSecretAAD(2)))
	if _, p := env.hashLinkAt(tennisHost, "3", "demo", testSecret); p.header.Get("Location") != "/membership/register/3?error=invalid" {
		t.Fatalf("environment secret at a club with its own: %d %q", p.status, p.header.Get("Location"))
	}
	if _, p := env.hashLinkAt(tennisHost, "3", "demo", own); p.header.Get("Location") != "/membership/register/3" {
		t.Fatalf("own secret: %d %q", p.status, p.header.Get("Location"))
	}
	if _, p := env.hashLinkAt(rowingHost, "1", "demo", testSecret); p.header.Get("Location") != "/membership/register/1" {
		t.Fatalf("environment secret at the rowing club: %d %q", p.status, p.header.Get("Location"))
	}
	// Sealed for another organisation (copied over): refused, not checked against a wrong secret.
	setSealed(sealer.Seal([]byte(own), server.HashSecretAAD(1)))
	for _, secret := range []string{own, testSecret} {
		if _, p := env.hashLinkAt(tennisHost, "3", "demo", secret); p.header.Get("Location") != "/membership/register/3?error=invalid" {
			t.Fatalf("unopenable secret, link with %q: %d %q", secret, p.status, p.header.Get("Location"))
		}
	}
}

// The hash login tells the admin backend which club's registration system it is for.
func TestOrganisationRegistrationSystemID(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]string
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"token":"jwt"}`))
	}))
	t.Cleanup(be.Close)
	u, _ := url.Parse(be.URL)
	env := newOrganisationsEnv(t, dbtest.SQLite(t), envOptions{backend: u})
	if _, err := env.db.NewUpdate().Model((*engine.Organisation)(nil)).Set("registration_system_id = ?", "RS-TENNIS").Where("id = 2").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{tennisHost, rowingHost} {
		if res := env.do(env.newClient(), http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(testSecret, "demo")}, "Host", host); res.status != http.StatusOK {
			t.Fatalf("login at %s: %d %s", host, res.status, res.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0]["registrationSystemId"] != "RS-TENNIS" || got[0]["userKey"] != "demo" {
		t.Fatalf("backend got %v", got)
	}
	if _, ok := got[1]["registrationSystemId"]; ok {
		t.Fatalf("the rowing club has no registration system id, backend got %v", got[1])
	}
}

// An organisation that switched the spec's hash links off refuses them
// with a page of its own (not counted as a guess); the other club still
// takes them, and the switch back on is immediate.
func TestHashLinksSwitchedOff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{organisationRefresh: -1})
		off, on := false, true
		if _, err := organisation.Of(env.svc).UpdateOrganisation(context.Background(), organisation.DemoSecondOrgID, organisation.OrganisationChange{HashLinks: &off}); err != nil {
			t.Fatal(err)
		}
		c, p := env.hashLinkAt(tennisHost, "3", "demo", testSecret)
		expectRedirect(t, p, "/membership/register/3?error=links_off")
		denied := env.get(c, "/membership/register/3?error=links_off", "Host", tennisHost)
		if denied.status != http.StatusForbidden || !strings.Contains(string(denied.body), "no longer accepts this kind of link") {
			t.Fatalf("links off: %d %s", denied.status, denied.body)
		}
		if overview := env.get(c, "/membership/register/3", "Host", tennisHost); strings.Contains(string(overview.body), "Kim") {
			t.Fatal("a refused hash link signed the member in")
		}
		_, p = env.hashLinkAt(rowingHost, "1", "demo", testSecret)
		expectRedirect(t, p, "/membership/register/1")

		if _, err := organisation.Of(env.svc).UpdateOrganisation(context.Background(), organisation.DemoSecondOrgID, organisation.OrganisationChange{HashLinks: &on}); err != nil {
			t.Fatal(err)
		}
		_, p = env.hashLinkAt(tennisHost, "3", "demo", testSecret)
		expectRedirect(t, p, "/membership/register/3")
	})
}
