package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/relay/oidc"
	"portal/relay/oidc/oidcop"
	"portal/relay/session"
	"portal/views/staffview"
)

// The certified OP's accounts of the staff suite. The first is the OP's
// own test user; like every account of this OP, it gets email and
// email_verified only from the userinfo endpoint, not in the ID token.
var certifiedOPUsers = []oidcop.User{
	{ID: "id1", Username: "test-user@localhost", Password: "verysecure", FirstName: "Test", LastName: "User",
		Email: "admin@club.example", EmailVerified: true},
	{ID: "id2", Username: "treasurer@localhost", Password: "verysecure", FirstName: "Tess", LastName: "Urer",
		Email: "treasurer@club.example", EmailVerified: true},
	{ID: "id3", Username: "unverified@localhost", Password: "verysecure", FirstName: "Una", LastName: "Verified",
		Email: "registrar@club.example", EmailVerified: false},
}

// newCertifiedOPEnv is a staff environment whose sign-in goes to
// zitadel's example OP, a certified OpenID Provider, in its own process.
func newCertifiedOPEnv(t *testing.T, db *bun.DB, log *logBuffer) (*staffEnv, *oidcop.OP) {
	t.Helper()
	var op *oidcop.OP
	o := envOptions{log: log}
	o.staff = func(t testing.TB, sdb *bun.DB, serverURL string) server.StaffDeps {
		op = oidcop.Start(t, certifiedOPUsers, serverURL+server.StaffCallbackPath)
		kr, err := session.ParseKeyring(session.GenerateKey())
		if err != nil {
			t.Fatal(err)
		}
		mgr := session.NewManager(session.NewDBStore(sdb), session.Config{CookieName: server.StaffCookieName, IdleTimeout: 30 * time.Minute, MaxLifetime: 8 * time.Hour})
		return server.StaffDeps{
			Provider: oidc.NewProvider(oidc.ProviderConfig{Issuer: op.Issuer, ClientID: oidcop.ClientID, ClientSecret: oidcop.ClientSecret,
				Scopes: []string{"email", "profile"}, RedirectURL: serverURL + server.StaffCallbackPath}),
			Attempts: oidc.NewAttemptCookies(kr, server.StaffCallbackPath, mgr.SecureFor),
			Sessions: mgr, BaseURL: serverURL,
		}
	}
	env := newEnvWith(t, db, o)
	return &staffEnv{testEnv: env, svc: engine.NewService(db, nil)}, op
}

// opSignIn signs c in at the certified OP, starting from /staff/login/start
// with rd, and returns the portal's answer to the callback.
func (env *staffEnv) opSignIn(op *oidcop.OP, c *http.Client, username, rd string) page {
	env.t.Helper()
	start := env.get(c, server.StaffLoginPath+"/start?rd="+url.QueryEscape(rd))
	if start.status != http.StatusSeeOther || !strings.HasPrefix(start.header.Get("Location"), op.Issuer) {
		env.t.Fatalf("sign-in start: %d %q %s", start.status, start.header.Get("Location"), start.body)
	}
	back := op.SignIn(env.t, c, start.header.Get("Location"), username, "verysecure")
	if !strings.HasPrefix(back, env.srv.URL+server.StaffCallbackPath+"?") {
		env.t.Fatalf("the OP sent the browser to %q", back)
	}
	return env.getAbsolute(c, back)
}

// Staff sign in, are held to their roles and sign out through a certified
// OP that sends email and email_verified from its userinfo endpoint only.
func TestStaffSignInCertifiedOP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		log := &logBuffer{}
		env, op := newCertifiedOPEnv(t, db, log)
		admin := env.addStaff("Admin@Club.example", staff.RoleAdmin)
		env.addStaff("treasurer@club.example", staff.RoleTreasurer)
		env.addStaff("registrar@club.example", staff.RoleRegistrar)

		// The admin signs in: the record binds by the address the userinfo
		// endpoint verified, and the continue page leads on.
		ac := env.newClient()
		p := env.opSignIn(op, ac, "test-user@localhost", "/staff/setup")
		if p.status != http.StatusOK || p.testid("continue").Find("a").AttrOr("href", "") != "/staff/setup" {
			t.Fatalf("admin sign-in: %d %s\n%s", p.status, p.body, log.String())
		}
		bound, err := staff.Of(env.svc).StaffByID(t.Context(), 1, admin.ID)
		if err != nil || bound.Subject == nil || *bound.Subject != "id1" {
			t.Fatalf("subject not bound: %+v %v", bound, err)
		}
		if p := env.get(ac, "/staff/setup"); p.status != http.StatusOK || p.testid("staff-user-role").Text() != "Administrator" {
			t.Fatalf("admin on the setup page: %d %s", p.status, p.testid("staff-user-role").Text())
		}

		// The treasurer signs in too, and is held to the role.
		tc := env.newClient()
		if p := env.opSignIn(op, tc, "treasurer@localhost", "/staff"); p.status != http.StatusOK {
			t.Fatalf("treasurer sign-in: %d %s", p.status, p.body)
		}
		if p := env.get(tc, "/staff/audit"); p.status != http.StatusOK || p.testid("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("treasurer on the audit page: %d %s", p.status, p.testid("staff-user-role").Text())
		}
		if p := env.get(tc, "/staff/setup"); p.status != http.StatusForbidden {
			t.Fatalf("treasurer on the admin's setup page: %d", p.status)
		}

		// An address the OP has not verified never binds, and the log says
		// why without the address (this OP leaves email_verified out when
		// it is false).
		log.take()
		uc := env.newClient()
		p = env.opSignIn(op, uc, "unverified@localhost", "/staff")
		if p.status != http.StatusForbidden || env.staffCookie(uc) != "" || p.testid("staff-message-text").Text() != staffview.Text.NotStaff {
			t.Fatalf("unverified address: %d %s", p.status, p.body)
		}
		line := log.take()
		if !strings.Contains(line, "staff sign-in refused") || !strings.Contains(line, "subject=id3") ||
			!strings.Contains(line, "email_claim=present") || !strings.Contains(line, "email_verified_claim=missing") || !strings.Contains(line, "not verified") ||
			strings.Contains(line, "registrar@club.example") {
			t.Fatalf("refusal log: %s", line)
		}

		// Sign-out ends the session: the pages send to the sign-in again.
		expectRedirect(t, env.post(ac, server.StaffLogoutPath, url.Values{}), "/staff/login?signed_out=1")
		expectRedirect(t, env.get(ac, "/staff/setup"), "/staff/login?rd=%2Fstaff%2Fsetup")
		// The treasurer's session is another and stays.
		if p := env.get(tc, "/staff/audit"); p.status != http.StatusOK {
			t.Fatalf("the treasurer's session after the admin's sign-out: %d", p.status)
		}
	})
}
