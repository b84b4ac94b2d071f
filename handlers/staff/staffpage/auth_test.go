package staffpage_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	staffpages "portal/handlers/staff"
	"portal/relay/session"
	"portal/views/staffview"
)

func TestStaffSignIn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := context.Background()
		anon := env.NewClient()

		// Anonymous: the overview sends to the sign-in page, which offers the IdP.
		handlertest.ExpectRedirect(t, env.Get(anon, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
		login := env.Get(anon, "/staff/login?rd=%2Fstaff%2Faudit")
		if login.Status != http.StatusOK || login.TestID("staff-message-link").AttrOr("href", "") != "/staff/login/start?rd=%2Fstaff%2Faudit" {
			t.Fatalf("sign-in page: %d %s", login.Status, login.Body)
		}

		// The first sign-in binds the subject by the verified address.
		rec := env.AddStaff("Treasurer@Example.org", staff.RoleTreasurer)
		c := env.MustStaffSignIn("treasurer@example.org", "/staff/audit")
		p := env.Get(c, "/staff/audit")
		if p.Status != http.StatusOK || p.TestID("staff-user-name").Text() != "Staff treasurer" || p.TestID("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("audit page after sign-in: %d %s", p.Status, p.Body)
		}
		if p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", p.Header.Get("Cache-Control"))
		}
		bound, err := staff.Of(env.Engine).StaffByID(ctx, 1, rec.ID)
		if err != nil || bound.Subject == nil || *bound.Subject != "sub-treasurer@example.org" || bound.LastSignInAt == nil {
			t.Fatalf("subject not bound: %+v %v", bound, err)
		}
		if got := p.TestID("audit-row").First().AttrOr("data-action", ""); got != "staff.bind" {
			t.Errorf("newest audit entry %q, want staff.bind", got)
		}

		// Later sign-ins match by subject, whatever address the IdP sends now.
		moved := env.NewClient()
		if res := env.StaffSignIn(moved, handlertest.IdPUser("sub-treasurer@example.org", "new-address@example.org"), "/staff"); res.Status != http.StatusOK {
			t.Fatalf("sign-in by subject: %d %s", res.Status, res.Body)
		}
		// ... and the bound address with another subject no longer gets in.
		other := env.NewClient()
		if res := env.StaffSignIn(other, handlertest.IdPUser("someone-else", "treasurer@example.org"), "/staff"); res.Status != http.StatusForbidden || env.StaffCookie(other) != "" {
			t.Fatalf("another subject with a bound address: %d, cookie %q", res.Status, env.StaffCookie(other))
		}

		// An address the IdP has not verified never binds.
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		unverified := env.NewClient()
		res := env.StaffSignIn(unverified, &mockoidc.MockUser{Subject: "sub-unverified", Email: "registrar@example.org"}, "/staff")
		if res.Status != http.StatusForbidden || env.StaffCookie(unverified) != "" || res.TestID("staff-message-text").Text() != staffview.Text.NotStaff {
			t.Fatalf("unverified address: %d %s", res.Status, res.Body)
		}
		// An unknown address neither.
		if res := env.StaffSignIn(env.NewClient(), handlertest.IdPUser("sub-x", "stranger@example.org"), "/staff"); res.Status != http.StatusForbidden {
			t.Fatalf("unknown address: %d", res.Status)
		}

		// The role claim grants a role without a record.
		claimed := env.NewClient()
		u := handlertest.IdPUser("sub-claim", "volunteer@example.org")
		u.Groups = []string{"other", handlertest.StaffClaimTreasurers}
		if res := env.StaffSignIn(claimed, u, "/staff"); res.Status != http.StatusOK {
			t.Fatalf("claim sign-in: %d %s", res.Status, res.Body)
		}
		if p := env.Get(claimed, "/staff/audit"); p.Status != http.StatusOK || p.TestID("staff-user-role").Text() != "Treasurer" {
			t.Fatalf("claim role: %d %s", p.Status, p.TestID("staff-user-role").Text())
		}
		// A grant limited to another organisation grants nothing here.
		limited := handlertest.IdPUser("sub-limited", "limited@example.org")
		limited.Groups = []string{"club-admins"}
		if res := env.StaffSignIn(env.NewClient(), limited, "/staff"); res.Status != http.StatusForbidden {
			t.Fatalf("grant of another organisation: %d", res.Status)
		}

		// A forged or replayed callback starts nothing.
		forged := env.NewClient()
		if res := env.Get(forged, server.StaffCallbackPath+"?state=forged&code=x"); res.Status != http.StatusBadRequest || env.StaffCookie(forged) != "" {
			t.Fatalf("forged callback: %d", res.Status)
		}

		// Removing the record ends its sessions at the next request.
		if err := staff.Of(env.Engine).RemoveStaff(ctx, engine.CommandLine, 1, "treasurer@example.org"); err != nil {
			t.Fatal(err)
		}
		handlertest.ExpectRedirect(t, env.Get(c, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
		if res := env.StaffSignIn(env.NewClient(), handlertest.IdPUser("sub-treasurer@example.org", "treasurer@example.org"), "/staff"); res.Status != http.StatusForbidden {
			t.Fatalf("removed staff signs in: %d", res.Status)
		}
		// Nor does a role claim let a removed staff member back in.
		removed := handlertest.IdPUser("sub-treasurer@example.org", "treasurer@example.org")
		removed.Groups = []string{handlertest.StaffClaimTreasurers}
		if res := env.StaffSignIn(env.NewClient(), removed, "/staff"); res.Status != http.StatusForbidden {
			t.Fatalf("removed staff signs in by the role claim: %d", res.Status)
		}

		// Sign-out ends the session on the server.
		cookie := env.StaffCookie(claimed)
		out := env.Post(claimed, server.StaffLogoutPath, url.Values{})
		handlertest.ExpectRedirect(t, out, "/staff/login?signed_out=1")
		replay := env.NewClient()
		su, _ := url.Parse(env.Server.URL)
		replay.Jar.SetCookies(su, []*http.Cookie{{Name: server.StaffCookieName, Value: cookie}})
		handlertest.ExpectRedirect(t, env.Get(replay, "/staff/audit"), "/staff/login?rd=%2Fstaff%2Faudit")
	})
}

// A member's session never reaches /staff: not with its own cookie, and
// not with its id put into the staff cookie.
func TestStaffRefusesMemberSessions(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	member := env.NewClient()
	env.Login(member, engine.DemoUserKey)
	handlertest.ExpectRedirect(t, env.Get(member, "/staff"), "/staff/login?rd=%2Fstaff")
	su, _ := url.Parse(env.Server.URL)
	var memberID string
	for _, ck := range member.Jar.Cookies(su) {
		if ck.Name == session.DefaultCookieName {
			memberID = ck.Value
		}
	}
	if memberID == "" {
		t.Fatal("no member session")
	}
	forged := env.NewClient()
	forged.Jar.SetCookies(su, []*http.Cookie{{Name: server.StaffCookieName, Value: memberID}})
	handlertest.ExpectRedirect(t, env.Get(forged, "/staff"), "/staff/login?rd=%2Fstaff")
	// And a staff session is no member's session.
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	staff := env.MustStaffSignIn("admin@example.org", "/staff")
	crossed := env.NewClient()
	crossed.Jar.SetCookies(su, []*http.Cookie{{Name: session.DefaultCookieName, Value: env.StaffCookie(staff)}})
	if res := env.Do(crossed, http.MethodGet, "/api/forms/membership/1", nil); res.Status != http.StatusUnauthorized {
		t.Fatalf("staff session used as a member's: %d %s", res.Status, res.Body)
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
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	member := env.NewClient()
	env.Login(member, engine.DemoUserKey)
	who := []principal{{name: "anonymous", c: env.NewClient()}, {name: "member", c: member}}
	for _, r := range staff.StaffRoles {
		email := string(r) + "@example.org"
		env.AddStaff(email, r)
		who = append(who, principal{name: string(r), role: r, c: env.MustStaffSignIn(email, "/staff")})
	}
	for _, route := range staffpages.StaffRoutes() {
		path := server.StaffPrefix + route.Path
		if route.Example != "" {
			path = server.StaffPrefix + route.Example
		}
		for _, p := range who {
			t.Run(route.Method+" "+path+" as "+p.name, func(t *testing.T) {
				var res handlertest.Page
				if route.Method == http.MethodGet {
					res = env.Get(p.c, path)
				} else {
					res = env.Post(p.c, path, url.Values{}, "Origin", env.Server.URL)
				}
				switch {
				case p.role == "" && route.Method == http.MethodGet:
					if res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), server.StaffLoginPath+"?rd=") {
						t.Fatalf("got %d to %q, want the sign-in", res.Status, res.Header.Get("Location"))
					}
				case p.role == "":
					if res.Status != http.StatusUnauthorized {
						t.Fatalf("got %d, want 401", res.Status)
					}
				case !p.role.AtLeast(route.Min):
					if res.Status != http.StatusForbidden || res.TestID("staff-message").AttrOr("data-kind", "") != "error" {
						t.Fatalf("got %d, want 403 (least role %s)", res.Status, route.Min)
					}
				default:
					if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden || res.Status >= 500 {
						t.Fatalf("got %d, want in (least role %s): %s", res.Status, route.Min, res.Body)
					}
				}
			})
		}
	}
}

// A POST from another site is refused before any staff action runs.
func TestStaffRefusesCrossSitePosts(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	c := env.MustStaffSignIn("admin@example.org", "/staff")
	res := env.Post(c, server.StaffLogoutPath, url.Values{}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if res.Status != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d", res.Status)
	}
	if p := env.Get(c, "/staff/audit"); p.Status != http.StatusOK {
		t.Fatalf("the session ended on a cross-site POST: %d", p.Status)
	}
}

// The audit page lists the organisation's changes only, newest first,
// and pages on.
func TestStaffAuditPage(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	ctx := context.Background()
	other, err := organisation.Of(env.Engine).CreateOrganisation(ctx, organisation.OrganisationChange{Name: handlertest.Ptr("Other club"), Slug: handlertest.Ptr("other")})
	if err != nil {
		t.Fatal(err)
	}
	env.AddStaff("viewer@example.org", staff.RoleViewer)
	for i := range 55 {
		env.AddStaff("person"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+"@example.org", staff.RoleViewer)
	}
	if _, err := staff.Of(env.Engine).AddStaff(ctx, engine.CommandLine, other.ID, staff.StaffInput{Email: "other-club@example.org", Name: "Other", Role: staff.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	// With two clubs and no hostnames, each is addressed as /o/{slug}.
	c := env.MustStaffSignIn("viewer@example.org", "/o/riverside/staff/audit")
	if p := env.Get(c, "/o/other/staff/audit"); p.Status != http.StatusSeeOther {
		t.Fatalf("a staff session of one club in another: %d", p.Status)
	}
	page1 := env.Get(c, "/o/riverside/staff/audit")
	if page1.Status != http.StatusOK || page1.TestID("audit-row").Length() != 50 {
		t.Fatalf("first page: %d, %d rows", page1.Status, page1.TestID("audit-row").Length())
	}
	if strings.Contains(string(page1.Body), "other-club@example.org") {
		t.Fatal("another organisation's audit entry shown")
	}
	older := page1.TestID("audit-older").AttrOr("href", "")
	page2 := env.Get(c, older)
	if page2.Status != http.StatusOK || page2.TestID("audit-row").Length() != 7 || page2.TestID("audit-older").Length() != 0 {
		t.Fatalf("second page %s: %d, %d rows", older, page2.Status, page2.TestID("audit-row").Length())
	}
}
