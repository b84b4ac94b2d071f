package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
	staffpages "portal/handlers/staff"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/views/staffview"
)

func ptr[T any](v T) *T { return &v }

// staffEnv is a testEnv with staff sign-in through a real OIDC provider
// in the test process (mockoidc).
type staffEnv struct {
	*testEnv
	idp *gwIdP
	svc *engine.Service
	// provider takes the payments (envOptions.provider); nil: the test gateway.
	provider engine.PaymentProvider
}

// staffRoleGroups are the role claim values the test environment maps.
const staffClaimTreasurers = "club-treasurers"

func newStaffEnv(t *testing.T, db *bun.DB, o envOptions) *staffEnv {
	t.Helper()
	idp := newIdP(t)
	o.staff = func(t testing.TB, sdb *bun.DB, serverURL string) server.StaffDeps {
		kr, err := session.ParseKeyring(session.GenerateKey())
		if err != nil {
			t.Fatal(err)
		}
		mgr := session.NewManager(session.NewDBStore(sdb), session.Config{CookieName: server.StaffCookieName, IdleTimeout: 30 * time.Minute, MaxLifetime: 8 * time.Hour})
		grants, err := server.ParseStaffRoleMap(staffClaimTreasurers + "=treasurer,other-club:club-admins=admin")
		if err != nil {
			t.Fatal(err)
		}
		return server.StaffDeps{
			Provider: oidc.NewProvider(oidc.ProviderConfig{Issuer: idp.m.Issuer(), ClientID: idp.m.ClientID, ClientSecret: idp.m.ClientSecret,
				Scopes: []string{"email", "profile", "groups"}, RedirectURL: serverURL + server.StaffCallbackPath}),
			Attempts: oidc.NewAttemptCookies(kr, server.StaffCallbackPath, mgr.SecureFor),
			Sessions: mgr, BaseURL: serverURL, RoleClaim: "groups", RoleMap: grants,
		}
	}
	env := newEnvWith(t, db, o)
	return &staffEnv{testEnv: env, idp: idp, svc: engine.NewService(db, nil), provider: o.provider}
}

// addStaff adds a staff record to the demo organisation.
func (env *staffEnv) addStaff(email string, role staff.StaffRole) *staff.StaffMember {
	env.t.Helper()
	m, err := staff.Of(env.svc).AddStaff(context.Background(), engine.CommandLine, 1, staff.StaffInput{Email: email, Name: "Staff " + string(role), Role: role})
	if err != nil {
		env.t.Fatal(err)
	}
	return m
}

// idpUser is a verified user of the test IdP.
func idpUser(subject, email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: subject, Email: email, EmailVerified: true}
}

// staffSignIn signs c in at the IdP as user, starting from /staff/login
// with rd (under /o/{slug} for a club addressed so), and returns the
// callback's answer.
func (env *staffEnv) staffSignIn(c *http.Client, user *mockoidc.MockUser, rd string) page {
	env.t.Helper()
	base, rest, _ := strings.Cut(rd, server.StaffPrefix)
	start := env.get(c, base+server.StaffLoginPath+"/start?rd="+url.QueryEscape(server.StaffPrefix+rest))
	if start.status != http.StatusSeeOther {
		env.t.Fatalf("sign-in start: %d %s", start.status, start.body)
	}
	env.idp.m.QueueUser(user)
	res := env.getAbsolute(c, start.header.Get("Location"))
	if res.status != http.StatusFound {
		env.t.Fatalf("IdP authorize: %d %s", res.status, res.body)
	}
	return env.getAbsolute(c, res.header.Get("Location"))
}

// mustStaffSignIn signs a new client in as a staff member with email and
// checks the continue page leads to rd.
func (env *staffEnv) mustStaffSignIn(email, rd string) *http.Client {
	env.t.Helper()
	c := env.newClient()
	p := env.staffSignIn(c, idpUser("sub-"+email, email), rd)
	if p.status != http.StatusOK || p.testid("continue").Find("a").AttrOr("href", "") != rd {
		env.t.Fatalf("staff sign-in of %s: %d %s", email, p.status, p.body)
	}
	return c
}

func (env *staffEnv) getAbsolute(c *http.Client, u string) page {
	env.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		env.t.Fatal(err)
	}
	return env.parse(roundTrip(env.t, c, req))
}

// staffCookie is c's staff session cookie value, "" for none.
func (env *staffEnv) staffCookie(c *http.Client) string {
	u, _ := url.Parse(env.srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == server.StaffCookieName {
			return ck.Value
		}
	}
	return ""
}

func TestStaffSignIn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		ctx := context.Background()
		anon := env.newClient()

		// Anonymous: the overview sends to the sign-in page, which offers the IdP.
		expectRedirect(t, env.get(anon, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
		login := env.get(anon, "/staff/login?rd=%2Fstaff%2Faudit")
		if login.status != http.StatusOK || login.testid("staff-message-link").AttrOr("href", "") != "/staff/login/start?rd=%2Fstaff%2Faudit" {
			t.Fatalf("sign-in page: %d %s", login.status, login.body)
		}

		// The first sign-in binds the subject by the verified address.
		rec := env.addStaff("Treasurer@Example.org", staff.RoleTreasurer)
		c := env.mustStaffSignIn("treasurer@example.org", "/staff/audit")
		p := env.get(c, "/staff/audit")
		if p.status != http.StatusOK || p.testid("staff-user-name").Text() != "Staff treasurer" || p.testid("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("audit page after sign-in: %d %s", p.status, p.body)
		}
		if p.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", p.header.Get("Cache-Control"))
		}
		bound, err := staff.Of(env.svc).StaffByID(ctx, 1, rec.ID)
		if err != nil || bound.Subject == nil || *bound.Subject != "sub-treasurer@example.org" || bound.LastSignInAt == nil {
			t.Fatalf("subject not bound: %+v %v", bound, err)
		}
		if got := p.testid("audit-row").First().AttrOr("data-action", ""); got != "staff.bind" {
			t.Errorf("newest audit entry %q, want staff.bind", got)
		}

		// Later sign-ins match by subject, whatever address the IdP sends now.
		moved := env.newClient()
		if res := env.staffSignIn(moved, idpUser("sub-treasurer@example.org", "new-address@example.org"), "/staff"); res.status != http.StatusOK {
			t.Fatalf("sign-in by subject: %d %s", res.status, res.body)
		}
		// ... and the bound address with another subject no longer gets in.
		other := env.newClient()
		if res := env.staffSignIn(other, idpUser("someone-else", "treasurer@example.org"), "/staff"); res.status != http.StatusForbidden || env.staffCookie(other) != "" {
			t.Fatalf("another subject with a bound address: %d, cookie %q", res.status, env.staffCookie(other))
		}

		// An address the IdP has not verified never binds.
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		unverified := env.newClient()
		res := env.staffSignIn(unverified, &mockoidc.MockUser{Subject: "sub-unverified", Email: "registrar@example.org"}, "/staff")
		if res.status != http.StatusForbidden || env.staffCookie(unverified) != "" || res.testid("staff-message-text").Text() != staffview.Text.NotStaff {
			t.Fatalf("unverified address: %d %s", res.status, res.body)
		}
		// An unknown address neither.
		if res := env.staffSignIn(env.newClient(), idpUser("sub-x", "stranger@example.org"), "/staff"); res.status != http.StatusForbidden {
			t.Fatalf("unknown address: %d", res.status)
		}

		// The role claim grants a role without a record.
		claimed := env.newClient()
		u := idpUser("sub-claim", "volunteer@example.org")
		u.Groups = []string{"other", staffClaimTreasurers}
		if res := env.staffSignIn(claimed, u, "/staff"); res.status != http.StatusOK {
			t.Fatalf("claim sign-in: %d %s", res.status, res.body)
		}
		if p := env.get(claimed, "/staff/audit"); p.status != http.StatusOK || p.testid("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("claim role: %d %s", p.status, p.testid("staff-user-role").Text())
		}
		// A grant limited to another organisation grants nothing here.
		limited := idpUser("sub-limited", "limited@example.org")
		limited.Groups = []string{"club-admins"}
		if res := env.staffSignIn(env.newClient(), limited, "/staff"); res.status != http.StatusForbidden {
			t.Fatalf("grant of another organisation: %d", res.status)
		}

		// A forged or replayed callback starts nothing.
		forged := env.newClient()
		if res := env.get(forged, server.StaffCallbackPath+"?state=forged&code=x"); res.status != http.StatusBadRequest || env.staffCookie(forged) != "" {
			t.Fatalf("forged callback: %d", res.status)
		}

		// Removing the record ends its sessions at the next request.
		if err := staff.Of(env.svc).RemoveStaff(ctx, engine.CommandLine, 1, "treasurer@example.org"); err != nil {
			t.Fatal(err)
		}
		expectRedirect(t, env.get(c, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
		if res := env.staffSignIn(env.newClient(), idpUser("sub-treasurer@example.org", "treasurer@example.org"), "/staff"); res.status != http.StatusForbidden {
			t.Fatalf("removed staff signs in: %d", res.status)
		}
		// Nor does a role claim let a removed staff member back in.
		removed := idpUser("sub-treasurer@example.org", "treasurer@example.org")
		removed.Groups = []string{staffClaimTreasurers}
		if res := env.staffSignIn(env.newClient(), removed, "/staff"); res.status != http.StatusForbidden {
			t.Fatalf("removed staff signs in by the role claim: %d", res.status)
		}

		// Sign-out ends the session on the server.
		cookie := env.staffCookie(claimed)
		out := env.post(claimed, server.StaffLogoutPath, url.Values{})
		expectRedirect(t, out, "/staff/login?signed_out=1")
		replay := env.newClient()
		su, _ := url.Parse(env.srv.URL)
		replay.Jar.SetCookies(su, []*http.Cookie{{Name: server.StaffCookieName, Value: cookie}})
		expectRedirect(t, env.get(replay, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
	})
}

// A member's session never reaches /staff: not with its own cookie, and
// not with its id put into the staff cookie.
func TestStaffRefusesMemberSessions(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	member := env.newClient()
	env.login(member, engine.DemoUserKey)
	expectRedirect(t, env.get(member, "/staff"), "/staff/login?rd=%2Fstaff")
	su, _ := url.Parse(env.srv.URL)
	var memberID string
	for _, ck := range member.Jar.Cookies(su) {
		if ck.Name == session.DefaultCookieName {
			memberID = ck.Value
		}
	}
	if memberID == "" {
		t.Fatal("no member session")
	}
	forged := env.newClient()
	forged.Jar.SetCookies(su, []*http.Cookie{{Name: server.StaffCookieName, Value: memberID}})
	expectRedirect(t, env.get(forged, "/staff"), "/staff/login?rd=%2Fstaff")
	// And a staff session is no member's session.
	env.addStaff("admin@example.org", staff.RoleAdmin)
	staff := env.mustStaffSignIn("admin@example.org", "/staff")
	crossed := env.newClient()
	crossed.Jar.SetCookies(su, []*http.Cookie{{Name: session.DefaultCookieName, Value: env.staffCookie(staff)}})
	if res := env.do(crossed, http.MethodGet, "/api/forms/membership/1", nil); res.status != http.StatusUnauthorized {
		t.Fatalf("staff session used as a member's: %d %s", res.status, res.body)
	}
}

// principal is who makes a request in the role matrix.
type principal struct {
	name string
	role staff.StaffRole // "" for anonymous and the member
	c    *http.Client
}

// TestStaffRoleMatrix requests every staff route as every role, as an
// anonymous visitor and as a member: each gets in exactly from the
// route's least role.
func TestStaffRoleMatrix(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	member := env.newClient()
	env.login(member, engine.DemoUserKey)
	who := []principal{{name: "anonymous", c: env.newClient()}, {name: "member", c: member}}
	for _, r := range staff.StaffRoles {
		email := string(r) + "@example.org"
		env.addStaff(email, r)
		who = append(who, principal{name: string(r), role: r, c: env.mustStaffSignIn(email, "/staff")})
	}
	for _, route := range staffpages.StaffRoutes() {
		path := server.StaffPrefix + route.Path
		if route.Example != "" {
			path = server.StaffPrefix + route.Example
		}
		for _, p := range who {
			t.Run(route.Method+" "+path+" as "+p.name, func(t *testing.T) {
				var res page
				if route.Method == http.MethodGet {
					res = env.get(p.c, path)
				} else {
					res = env.post(p.c, path, url.Values{}, "Origin", env.srv.URL)
				}
				switch {
				case p.role == "" && route.Method == http.MethodGet:
					if res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), server.StaffLoginPath+"?rd=") {
						t.Fatalf("got %d to %q, want the sign-in", res.status, res.header.Get("Location"))
					}
				case p.role == "":
					if res.status != http.StatusUnauthorized {
						t.Fatalf("got %d, want 401", res.status)
					}
				case !p.role.AtLeast(route.Min):
					if res.status != http.StatusForbidden || res.testid("staff-message").AttrOr("data-kind", "") != "error" {
						t.Fatalf("got %d, want 403 (least role %s)", res.status, route.Min)
					}
				default:
					if res.status == http.StatusUnauthorized || res.status == http.StatusForbidden || res.status >= 500 {
						t.Fatalf("got %d, want in (least role %s): %s", res.status, route.Min, res.body)
					}
				}
			})
		}
	}
}

// A POST from another site is refused before any staff action runs.
func TestStaffRefusesCrossSitePosts(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	env.addStaff("admin@example.org", staff.RoleAdmin)
	c := env.mustStaffSignIn("admin@example.org", "/staff")
	res := env.post(c, server.StaffLogoutPath, url.Values{}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if res.status != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d", res.status)
	}
	if p := env.get(c, "/staff/audit"); p.status != http.StatusOK {
		t.Fatalf("the session ended on a cross-site POST: %d", p.status)
	}
}

// The audit page lists the organisation's changes only, newest first,
// and pages on.
func TestStaffAuditPage(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	ctx := context.Background()
	other, err := organisation.Of(env.svc).CreateOrganisation(ctx, organisation.OrganisationChange{Name: ptr("Other club"), Slug: ptr("other")})
	if err != nil {
		t.Fatal(err)
	}
	env.addStaff("viewer@example.org", staff.RoleViewer)
	for i := range 55 {
		env.addStaff("person"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+"@example.org", staff.RoleViewer)
	}
	if _, err := staff.Of(env.svc).AddStaff(ctx, engine.CommandLine, other.ID, staff.StaffInput{Email: "other-club@example.org", Name: "Other", Role: staff.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	// With two clubs and no hostnames, each is addressed as /o/{slug}.
	c := env.mustStaffSignIn("viewer@example.org", "/o/riverside/staff/audit")
	if p := env.get(c, "/o/other/staff/audit"); p.status != http.StatusSeeOther {
		t.Fatalf("a staff session of one club in another: %d", p.status)
	}
	page1 := env.get(c, "/o/riverside/staff/audit")
	if page1.status != http.StatusOK || page1.testid("audit-row").Length() != 50 {
		t.Fatalf("first page: %d, %d rows", page1.status, page1.testid("audit-row").Length())
	}
	if strings.Contains(string(page1.body), "other-club@example.org") {
		t.Fatal("another organisation's audit entry shown")
	}
	older := page1.testid("audit-older").AttrOr("href", "")
	page2 := env.get(c, older)
	if page2.status != http.StatusOK || page2.testid("audit-row").Length() != 7 || page2.testid("audit-older").Length() != 0 {
		t.Fatalf("second page %s: %d, %d rows", older, page2.status, page2.testid("audit-row").Length())
	}
}
