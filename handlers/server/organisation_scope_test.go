package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/session"
)

func TestOrganisationsByHostname(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})

		tennis, p := env.HashLinkAt(handlertest.TennisHost, "3", "demo", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/3")
		overview := env.Get(tennis, "/membership/register/3", "Host", handlertest.TennisHost)
		if overview.Status != http.StatusOK {
			t.Fatalf("tennis overview: %d", overview.Status)
		}
		body := string(overview.Body)
		if !strings.Contains(body, "Kim") || strings.Contains(body, "Alex") {
			t.Fatalf("tennis overview shows the wrong household: %s", handlertest.PersonNames(overview))
		}
		if got := overview.TestID("brand-name").Text(); got != "Lakeside Tennis Club" {
			t.Fatalf("brand %q", got)
		}
		if href, _ := overview.Doc.Find(`link[href^="/brand.css"]`).Attr("href"); href != "/brand.css?c=047857" {
			t.Fatalf("brand stylesheet %q", href)
		}
		if css := env.Do(tennis, http.MethodGet, "/brand.css?c=047857", nil, "Host", handlertest.TennisHost); !strings.Contains(string(css.Body), "--brand-accent:#047857") {
			t.Fatalf("brand.css: %d %s", css.Status, css.Body)
		}
		if got := overview.TestID("brand-contact").Text(); !strings.Contains(got, "office@lakeside-tennis.example") {
			t.Fatalf("contact %q", got)
		}

		// The rowing club's period is not found from the tennis club, on the
		// pages and on the API, even with the same user key.
		if p := env.Get(tennis, "/membership/register/1", "Host", handlertest.TennisHost); p.Status == http.StatusOK || strings.Contains(string(p.Body), "Alex") {
			t.Fatalf("rowing period from the tennis host: %d", p.Status)
		}
		if _, p := env.HashLinkAt(handlertest.TennisHost, "1", "demo", handlertest.HashSecret); p.Header.Get("Location") != "/membership/register/1?error=period" {
			t.Fatalf("rowing hash link on the tennis host: %d %q", p.Status, p.Header.Get("Location"))
		}
		api := env.NewClient()
		if res := env.Do(api, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}, "Host", handlertest.TennisHost); res.Status != http.StatusOK {
			t.Fatalf("login on the tennis host: %d %s", res.Status, res.Body)
		}
		handlertest.ExpectHTTPError(t, env.Do(api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", handlertest.TennisHost), http.StatusNotFound, "/api/forms/membership/1")
		res := env.Do(api, http.MethodGet, "/api/forms/membership/3?userKey=demo", nil, "Host", handlertest.TennisHost)
		var f handlertest.Form
		res.JSON(t, &f)
		if (res.Status != http.StatusOK && res.Status != http.StatusCreated) || len(f.People) != 2 || f.People[0].FirstName != "Kim" {
			t.Fatalf("tennis form: %d %s", res.Status, res.Body)
		}

		// The rowing club: its own household, and its registration is not the tennis club's.
		rowing := env.NewClient()
		if res := env.Do(rowing, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}, "Host", handlertest.RowingHost); res.Status != http.StatusOK {
			t.Fatalf("login on the rowing host: %d %s", res.Status, res.Body)
		}
		res = env.Do(rowing, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", handlertest.RowingHost)
		var rf handlertest.Form
		res.JSON(t, &rf)
		if res.Status != http.StatusCreated || rf.People[0].FirstName == "Kim" {
			t.Fatalf("rowing form: %d %s", res.Status, res.Body)
		}
		path := "/api/forms/processes/" + rf.ProcessID + "/resume"
		handlertest.ExpectHTTPError(t, env.Do(api, http.MethodPost, path, map[string]any{}, "Host", handlertest.TennisHost), http.StatusNotFound, path)

		// A session is bound to its club: the tennis session (the cookie is
		// sent whatever the Host) is no session at the rowing club.
		handlertest.ExpectHTTPError(t, env.Do(api, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", handlertest.RowingHost), http.StatusUnauthorized, "/api/forms/membership/1")
		if p := env.Get(tennis, "/membership/register/1", "Host", handlertest.RowingHost); p.Status != http.StatusForbidden || p.TestID("error-page").Length() != 1 {
			t.Fatalf("tennis page session at the rowing club: %d", p.Status)
		}
	})
}

func TestUnknownHostIsNotFound(t *testing.T) {
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{})
	p := env.Get(env.Client, "/membership/register/1", "Host", "nobody.example", "Accept", "text/html")
	if p.Status != http.StatusNotFound || !strings.Contains(p.TestID("error-message").Text(), "No organisation") {
		t.Fatalf("unknown host page: %d %s", p.Status, p.Body)
	}
	handlertest.ExpectHTTPError(t, env.Do(env.Client, http.MethodGet, "/api/forms/membership/1?userKey=demo", nil, "Host", "nobody.example"), http.StatusNotFound, "/api/forms/membership/1")
	handlertest.ExpectHTTPError(t, env.Do(env.Client, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}, "Host", "nobody.example"), http.StatusNotFound, "/api/auth/external-login")
	// Probes, assets and the relay do not belong to a club.
	if res := env.Do(env.Client, http.MethodGet, "/healthz", nil, "Host", "nobody.example"); res.Status != http.StatusOK {
		t.Fatalf("healthz on an unknown host: %d", res.Status)
	}
	if res := env.Do(env.Client, http.MethodGet, "/services/admin-service/x", nil, "Host", "nobody.example"); res.Status != http.StatusServiceUnavailable {
		t.Fatalf("relay on an unknown host: %d %s", res.Status, res.Body)
	}
	// Links built on PORTAL_BASE_URL for e-mails and cards name their order
	// or card by an unguessable reference: they answer on any host.
	for _, path := range []string{"/pay/PO-UNKNOWN0000000000", "/verify/unknown-token"} {
		p := env.Get(env.Client, path, "Host", "nobody.example", "Accept", "text/html")
		if strings.Contains(p.TestID("error-message").Text(), "No organisation") {
			t.Errorf("%s on an unknown host: the unknown organisation's 404 (%d), want the page's own answer", path, p.Status)
		}
	}
}

// One hostname serving many clubs: /o/{slug}/ picks the club, and every
// address the pages make keeps the prefix.
func TestOrganisationsByPathPrefix(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		const shared = "portal.example" // no club's hostname
		c := env.NewClient()
		p := env.Get(c, "/o/riverside/membership/register/1?u=demo&h="+hashlink.Sign(handlertest.HashSecret, "demo"), "Host", shared)
		handlertest.ExpectRedirect(t, p, "/o/riverside/membership/register/1")
		overview := env.Get(c, "/o/riverside/membership/register/1", "Host", shared)
		start, _ := overview.TestID("start").Attr("href")
		if overview.Status != http.StatusOK || start != "/o/riverside/membership/register/1/persons" {
			t.Fatalf("overview %d, start link %q", overview.Status, start)
		}
		if got := overview.TestID("brand-name").Text(); got != "Riverside Rowing Club" {
			t.Fatalf("brand %q", got)
		}
		persons := env.Get(c, start, "Host", shared)
		if action, _ := persons.TestID("step-form").Attr("action"); action != "/o/riverside/membership/register/1/persons" {
			t.Fatalf("persons form action %q", action)
		}
		post := env.Post(c, "/o/riverside/membership/register/1/persons", url.Values{"person": {"1"}}, "Host", shared)
		handlertest.ExpectRedirect(t, post, "/o/riverside/membership/register/1/step/1")

		// The other club under the same hostname: another session, no access to the first's period.
		if p := env.Get(c, "/o/lakeside/membership/register/1", "Host", shared); p.Status == http.StatusOK {
			t.Fatalf("rowing period under lakeside: %d", p.Status)
		}
		if p := env.Get(c, "/o/nope/membership/register/1", "Host", shared, "Accept", "text/html"); p.Status != http.StatusNotFound {
			t.Fatalf("unknown slug: %d", p.Status)
		}
		// A club's own hostname serves only it.
		if p := env.Get(c, "/o/riverside/membership/register/1", "Host", handlertest.TennisHost); p.Status != http.StatusNotFound {
			t.Fatalf("/o/riverside on the tennis host: %d", p.Status)
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
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{HashSecrets: sealer, OrganisationRefresh: -1})
	const own = "tennis-club-secret"
	setSealed := func(sealed string) {
		t.Helper()
		if _, err := env.DB.NewUpdate().Model((*engine.Organisation)(nil)).Set("hash_secret_sealed = ?", sealed).Where("id = 2").Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	setSealed(sealer.Seal([]byte(own), server.HashSecretAAD(2)))
	if _, p := env.HashLinkAt(handlertest.TennisHost, "3", "demo", handlertest.HashSecret); p.Header.Get("Location") != "/membership/register/3?error=invalid" {
		t.Fatalf("environment secret at a club with its own: %d %q", p.Status, p.Header.Get("Location"))
	}
	if _, p := env.HashLinkAt(handlertest.TennisHost, "3", "demo", own); p.Header.Get("Location") != "/membership/register/3" {
		t.Fatalf("own secret: %d %q", p.Status, p.Header.Get("Location"))
	}
	if _, p := env.HashLinkAt(handlertest.RowingHost, "1", "demo", handlertest.HashSecret); p.Header.Get("Location") != "/membership/register/1" {
		t.Fatalf("environment secret at the rowing club: %d %q", p.Status, p.Header.Get("Location"))
	}
	// Sealed for another organisation (copied over): refused, not checked against a wrong secret.
	setSealed(sealer.Seal([]byte(own), server.HashSecretAAD(1)))
	for _, secret := range []string{own, handlertest.HashSecret} {
		if _, p := env.HashLinkAt(handlertest.TennisHost, "3", "demo", secret); p.Header.Get("Location") != "/membership/register/3?error=invalid" {
			t.Fatalf("unopenable secret, link with %q: %d %q", secret, p.Status, p.Header.Get("Location"))
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
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{Backend: u})
	if _, err := env.DB.NewUpdate().Model((*engine.Organisation)(nil)).Set("registration_system_id = ?", "RS-TENNIS").Where("id = 2").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{handlertest.TennisHost, handlertest.RowingHost} {
		if res := env.Do(env.NewClient(), http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": "demo", "hash": hashlink.Sign(handlertest.HashSecret, "demo")}, "Host", host); res.Status != http.StatusOK {
			t.Fatalf("login at %s: %d %s", host, res.Status, res.Body)
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
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{OrganisationRefresh: -1})
		off, on := false, true
		if _, err := organisation.Of(env.Engine).UpdateOrganisation(context.Background(), organisation.DemoSecondOrgID, organisation.OrganisationChange{HashLinks: &off}); err != nil {
			t.Fatal(err)
		}
		c, p := env.HashLinkAt(handlertest.TennisHost, "3", "demo", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/3?error=links_off")
		denied := env.Get(c, "/membership/register/3?error=links_off", "Host", handlertest.TennisHost)
		if denied.Status != http.StatusForbidden || !strings.Contains(string(denied.Body), "no longer accepts this kind of link") {
			t.Fatalf("links off: %d %s", denied.Status, denied.Body)
		}
		if overview := env.Get(c, "/membership/register/3", "Host", handlertest.TennisHost); strings.Contains(string(overview.Body), "Kim") {
			t.Fatal("a refused hash link signed the member in")
		}
		_, p = env.HashLinkAt(handlertest.RowingHost, "1", "demo", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/1")

		if _, err := organisation.Of(env.Engine).UpdateOrganisation(context.Background(), organisation.DemoSecondOrgID, organisation.OrganisationChange{HashLinks: &on}); err != nil {
			t.Fatal(err)
		}
		_, p = env.HashLinkAt(handlertest.TennisHost, "3", "demo", handlertest.HashSecret)
		handlertest.ExpectRedirect(t, p, "/membership/register/3")
	})
}
