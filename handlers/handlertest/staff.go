package handlertest

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
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/relay/oidc"
	"portal/relay/session"
)

// Squash is s with its runs of white space as one space.
func Squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// Count counts the rows of model matching where (all without one).
func (env *StaffEnv) Count(model any, where ...any) int {
	env.TB.Helper()
	q := env.DB.NewSelect().Model(model)
	if len(where) > 0 {
		q = q.Where(where[0].(string), where[1:]...)
	}
	n, err := q.Count(env.TB.Context())
	if err != nil {
		env.TB.Fatal(err)
	}
	return int(n)
}

// SecondUnpaidRegistration adds, beside the demo household's, a
// registration of user key demo-1 for its first person with an unpaid
// order of 10.00 placed five days ago, and returns its id.
func SecondUnpaidRegistration(t *testing.T, db *bun.DB, demo engine.Order) int64 {
	t.Helper()
	ctx := t.Context()
	var inst engine.ProcessInstance
	if err := db.NewSelect().Model(&inst).Where("id = ?", demo.ProcessInstanceID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var person int64
	if err := db.NewSelect().TableExpr("user_persons").ColumnExpr("MIN(person_id)").Where("user_key = ?", "demo-1").Scan(ctx, &person); err != nil {
		t.Fatal(err)
	}
	inst.ID, inst.UserKey, inst.SelectedPersons = 0, "demo-1", []int64{person}
	if _, err := db.NewInsert().Model(&inst).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := demo
	o.ID, o.ProcessInstanceID, o.UserKey, o.PayReference, o.TotalMinor = 0, inst.ID, "demo-1", demo.PayReference+"X", 1000
	o.CreatedAt = clock.Now().UTC().Add(-5*24*time.Hour - time.Hour)
	o.Lines = nil
	if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return inst.ID
}

// BankTransferStaffEnv is a staff environment whose members pay by bank transfer.
func BankTransferStaffEnv(t *testing.T, db *bun.DB) *StaffEnv {
	t.Helper()
	creditor := banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: MustIBAN(t, "DE89370400440532013000"), BIC: "COBADEFFXXX"}
	var base string
	bt, err := banktransfer.New(creditor, func(ref string, amount int64) string { return server.PaymentLinks(base).PayLink("", ref, amount) })
	if err != nil {
		t.Fatal(err)
	}
	env := NewStaffEnv(t, db, Options{Provider: bt})
	base = env.Server.URL
	return env
}

// AuditRows are the organisation's audit rows of one action, oldest first.
func (env *StaffEnv) AuditRows(action string) []engine.AuditRecord {
	env.TB.Helper()
	var rows []engine.AuditRecord
	if err := env.DB.NewSelect().Model(&rows).Where("action = ?", action).Order("id ASC").Scan(env.TB.Context()); err != nil {
		env.TB.Fatal(err)
	}
	return rows
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// StaffEnv is an Env with staff sign-in through a real OIDC provider
// in the test process (mockoidc).
type StaffEnv struct {
	*Env
	IdP    *IdP
	Engine *engine.Service
	// Provider takes the payments (Options.Provider); nil: the test gateway.
	Provider engine.PaymentProvider
}

// StaffClaimTreasurers is the role claim the test environment maps to the treasurer.
const StaffClaimTreasurers = "club-treasurers"

// NewStaffEnv is a server with the staff pages, signed in through the test's IdP.
func NewStaffEnv(t *testing.T, db *bun.DB, o Options) *StaffEnv {
	t.Helper()
	idp := NewIdP(t)
	o.Staff = func(t testing.TB, sdb *bun.DB, serverURL string) server.StaffDeps {
		kr, err := session.ParseKeyring(session.GenerateKey())
		if err != nil {
			t.Fatal(err)
		}
		mgr := session.NewManager(session.NewDBStore(sdb), session.Config{CookieName: server.StaffCookieName, IdleTimeout: 30 * time.Minute, MaxLifetime: 8 * time.Hour})
		grants, err := server.ParseStaffRoleMap(StaffClaimTreasurers + "=treasurer,other-club:club-admins=admin")
		if err != nil {
			t.Fatal(err)
		}
		return server.StaffDeps{
			Provider: oidc.NewProvider(oidc.ProviderConfig{Issuer: idp.Mock.Issuer(), ClientID: idp.Mock.ClientID, ClientSecret: idp.Mock.ClientSecret,
				Scopes: []string{"email", "profile", "groups"}, RedirectURL: serverURL + server.StaffCallbackPath}),
			Attempts: oidc.NewAttemptCookies(kr, server.StaffCallbackPath, mgr.SecureFor),
			Sessions: mgr, BaseURL: serverURL, RoleClaim: "groups", RoleMap: grants,
		}
	}
	env := NewEnvWith(t, db, o)
	return &StaffEnv{Env: env, IdP: idp, Engine: engine.NewService(db, nil), Provider: o.Provider}
}

// AddStaff adds a staff record to the demo organisation.
func (env *StaffEnv) AddStaff(email string, role staff.StaffRole) *staff.StaffMember {
	env.TB.Helper()
	m, err := staff.Of(env.Engine).AddStaff(context.Background(), engine.CommandLine, 1, staff.StaffInput{Email: email, Name: "Staff " + string(role), Role: role})
	if err != nil {
		env.TB.Fatal(err)
	}
	return m
}

// IdPUser is a verified user of the test IdP.
func IdPUser(subject, email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: subject, Email: email, EmailVerified: true}
}

// StaffSignIn signs c in at the IdP as user, starting from /staff/login
// with rd (under /o/{slug} for a club addressed so), and returns the
// callback's answer.
func (env *StaffEnv) StaffSignIn(c *http.Client, user *mockoidc.MockUser, rd string) Page {
	env.TB.Helper()
	base, rest, _ := strings.Cut(rd, server.StaffPrefix)
	start := env.Get(c, base+server.StaffLoginPath+"/start?rd="+url.QueryEscape(server.StaffPrefix+rest))
	if start.Status != http.StatusSeeOther {
		env.TB.Fatalf("sign-in start: %d %s", start.Status, start.Body)
	}
	env.IdP.Mock.QueueUser(user)
	res := env.GetAbsolute(c, start.Header.Get("Location"))
	if res.Status != http.StatusFound {
		env.TB.Fatalf("IdP authorize: %d %s", res.Status, res.Body)
	}
	return env.GetAbsolute(c, res.Header.Get("Location"))
}

// MustStaffSignIn signs a new client in as a staff member with email and
// checks the continue page leads to rd.
func (env *StaffEnv) MustStaffSignIn(email, rd string) *http.Client {
	env.TB.Helper()
	c := env.NewClient()
	p := env.StaffSignIn(c, IdPUser("sub-"+email, email), rd)
	if p.Status != http.StatusOK || p.TestID("continue").Find("a").AttrOr("href", "") != rd {
		env.TB.Fatalf("staff sign-in of %s: %d %s", email, p.Status, p.Body)
	}
	return c
}

// GetAbsolute fetches the page at the absolute URL u with c.
func (env *StaffEnv) GetAbsolute(c *http.Client, u string) Page {
	env.TB.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		env.TB.Fatal(err)
	}
	return env.Parse(RoundTrip(env.TB, c, req))
}

// StaffCookie is c's staff session cookie value, "" for none.
func (env *StaffEnv) StaffCookie(c *http.Client) string {
	u, _ := url.Parse(env.Server.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == server.StaffCookieName {
			return ck.Value
		}
	}
	return ""
}
