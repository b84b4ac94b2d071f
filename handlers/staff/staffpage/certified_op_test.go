package staffpage_test

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
	"portal/handlers/handlertest"
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
func newCertifiedOPEnv(t *testing.T, db *bun.DB, log *handlertest.LogBuffer) (*handlertest.StaffEnv, *oidcop.OP) {
	t.Helper()
	var op *oidcop.OP
	o := handlertest.Options{Log: log}
	o.Staff = func(t testing.TB, sdb *bun.DB, serverURL string) server.StaffDeps {
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
	env := handlertest.NewEnvWith(t, db, o)
	return &handlertest.StaffEnv{Env: env, Engine: engine.NewService(db, nil)}, op
}

// opSignIn signs c in at the certified OP, starting from /staff/login/start
// with rd, and returns the portal's answer to the callback.
func opSignIn(env *handlertest.StaffEnv, op *oidcop.OP, c *http.Client, username, rd string) handlertest.Page {
	env.TB.Helper()
	start := env.Get(c, server.StaffLoginPath+"/start?rd="+url.QueryEscape(rd))
	if start.Status != http.StatusSeeOther || !strings.HasPrefix(start.Header.Get("Location"), op.Issuer) {
		env.TB.Fatalf("sign-in start: %d %q %s", start.Status, start.Header.Get("Location"), start.Body)
	}
	back := op.SignIn(env.TB, c, start.Header.Get("Location"), username, "verysecure")
	if !strings.HasPrefix(back, env.Server.URL+server.StaffCallbackPath+"?") {
		env.TB.Fatalf("the OP sent the browser to %q", back)
	}
	return env.GetAbsolute(c, back)
}

// Staff sign in, are held to their roles and sign out through a certified
// OP that sends email and email_verified from its userinfo endpoint only.
func TestStaffSignInCertifiedOP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		log := &handlertest.LogBuffer{}
		env, op := newCertifiedOPEnv(t, db, log)
		admin := env.AddStaff("Admin@Club.example", staff.RoleAdmin)
		env.AddStaff("treasurer@club.example", staff.RoleTreasurer)
		env.AddStaff("registrar@club.example", staff.RoleRegistrar)

		// The admin signs in: the record binds by the address the userinfo
		// endpoint verified, and the continue page leads on.
		ac := env.NewClient()
		p := opSignIn(env, op, ac, "test-user@localhost", "/staff/setup")
		if p.Status != http.StatusOK || p.TestID("continue").Find("a").AttrOr("href", "") != "/staff/setup" {
			t.Fatalf("admin sign-in: %d %s\n%s", p.Status, p.Body, log.String())
		}
		bound, err := staff.Of(env.Engine).StaffByID(t.Context(), 1, admin.ID)
		if err != nil || bound.Subject == nil || *bound.Subject != "id1" {
			t.Fatalf("subject not bound: %+v %v", bound, err)
		}
		if p := env.Get(ac, "/staff/setup"); p.Status != http.StatusOK || p.TestID("staff-user-role").Text() != "Administrator" {
			t.Fatalf("admin on the setup page: %d %s", p.Status, p.TestID("staff-user-role").Text())
		}

		// The treasurer signs in too, and is held to the role.
		tc := env.NewClient()
		if p := opSignIn(env, op, tc, "treasurer@localhost", "/staff"); p.Status != http.StatusOK {
			t.Fatalf("treasurer sign-in: %d %s", p.Status, p.Body)
		}
		if p := env.Get(tc, "/staff/audit"); p.Status != http.StatusOK || p.TestID("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("treasurer on the audit page: %d %s", p.Status, p.TestID("staff-user-role").Text())
		}
		if p := env.Get(tc, "/staff/setup"); p.Status != http.StatusForbidden {
			t.Fatalf("treasurer on the admin's setup page: %d", p.Status)
		}

		// An address the OP has not verified never binds, and the log says
		// why without the address (this OP leaves email_verified out when
		// it is false).
		log.Take()
		uc := env.NewClient()
		p = opSignIn(env, op, uc, "unverified@localhost", "/staff")
		if p.Status != http.StatusForbidden || env.StaffCookie(uc) != "" || p.TestID("staff-message-text").Text() != staffview.Text.NotStaff {
			t.Fatalf("unverified address: %d %s", p.Status, p.Body)
		}
		line := log.Take()
		if !strings.Contains(line, "staff sign-in refused") || !strings.Contains(line, "subject=id3") ||
			!strings.Contains(line, "email_claim=present") || !strings.Contains(line, "email_verified_claim=missing") || !strings.Contains(line, "not verified") ||
			strings.Contains(line, "registrar@club.example") {
			t.Fatalf("refusal log: %s", line)
		}

		// Sign-out ends the session: the pages send to the sign-in again.
		handlertest.ExpectRedirect(t, env.Post(ac, server.StaffLogoutPath, url.Values{}), "/staff/login?signed_out=1")
		handlertest.ExpectRedirect(t, env.Get(ac, "/staff/setup"), "/staff/login?rd=%2Fstaff%2Fsetup")
		// The treasurer's session is another and stays.
		if p := env.Get(tc, "/staff/audit"); p.Status != http.StatusOK {
			t.Fatalf("the treasurer's session after the admin's sign-out: %d", p.Status)
		}
	})
}
