package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/invitation"
	"portal/engine/payment"
	"portal/relay/hashlink"
	"portal/relay/invitelink"
)

var testInvitations = invitelink.NewSigner([][]byte{bytes.Repeat([]byte("v"), 32)})

// invite issues an invitation of a household to a period of orgID with
// the given clock and validity, and returns it with its token.
func (env *testEnv) invite(t testing.TB, orgID, periodID int64, userKey string, now time.Time, valid time.Duration) (invitation.Invitation, string) {
	t.Helper()
	svc := engine.NewService(env.db, env.gw, engine.WithClock(func() time.Time { return now }))
	rep, err := invitation.Of(svc).CreateInvitations(context.Background(), engine.CommandLine, orgID, invitation.Request{PeriodID: periodID, UserKeys: []string{userKey}, Expires: valid})
	if err != nil || len(rep.Created) != 1 {
		t.Fatalf("invite: %+v, %v", rep, err)
	}
	inv := rep.Created[0]
	return inv, testInvitations.Token(orgID, inv.ID, inv.ExpiresAt)
}

// expectRefused checks an invitation link's refusal page: its status, its
// message, and that nobody was signed in.
func expectRefused(t *testing.T, env *testEnv, c *http.Client, p page, status int, message, host string) {
	t.Helper()
	if p.status != status || !strings.Contains(p.testid("error-message").Text(), message) {
		t.Fatalf("got %d %q, want %d with %q", p.status, p.testid("error-message").Text(), status, message)
	}
	if len(p.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a refused invitation set cookies: %v", p.header.Values("Set-Cookie"))
	}
	if after := env.get(c, "/membership/register/1", "Host", host); after.status != http.StatusForbidden {
		t.Fatalf("signed in after a refused invitation: %d", after.status)
	}
}

func TestInvitationLinks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{invitations: testInvitations})
		now := clock.Now().UTC()
		inv, token := env.invite(t, 1, 1, engine.DemoUserKey, now, 0)

		t.Run("valid link signs in at its club", func(t *testing.T) {
			c := env.newClient()
			expectRedirect(t, env.get(c, "/invite/"+token, "Host", rowingHost), "/membership/register/1")
			overview := env.get(c, "/membership/register/1", "Host", rowingHost)
			if overview.status != http.StatusOK || !strings.Contains(string(overview.body), "Alex") {
				t.Fatalf("overview after the invitation: %d", overview.status)
			}
			var got invitation.Invitation
			if err := db.NewSelect().Model(&got).Where("id = ?", inv.ID).Scan(context.Background()); err != nil || got.OpenedAt == nil {
				t.Fatalf("opened_at not recorded: %+v, %v", got, err)
			}
			// Under /o/{slug} on a shared hostname the prefix is kept.
			c = env.newClient()
			expectRedirect(t, env.get(c, "/o/riverside/invite/"+token, "Host", "portal.example"), "/o/riverside/membership/register/1")
		})
		t.Run("forged links", func(t *testing.T) {
			parts := strings.Split(token, ".")
			for name, tc := range map[string]struct{ host, path string }{
				"another club's host":   {tennisHost, "/invite/" + token},
				"extended expiry":       {rowingHost, "/invite/" + parts[0] + "." + "4102444800" + "." + parts[2]},
				"another invitation":    {rowingHost, "/invite/" + "999." + parts[1] + "." + parts[2]},
				"garbage":               {rowingHost, "/invite/not-a-token"},
				"signed by another key": {rowingHost, "/invite/" + invitelink.NewSigner([][]byte{bytes.Repeat([]byte("z"), 32)}).Token(1, inv.ID, inv.ExpiresAt)},
			} {
				t.Run(name, func(t *testing.T) {
					c := env.newClient()
					expectRefused(t, env, c, env.get(c, tc.path, "Host", tc.host), http.StatusForbidden, "not valid", tc.host)
				})
			}
		})
		t.Run("expired link", func(t *testing.T) {
			_, old := env.invite(t, 1, 1, "demo-1", now.Add(-3*time.Hour), time.Hour)
			c := env.newClient()
			expectRefused(t, env, c, env.get(c, "/invite/"+old, "Host", rowingHost), http.StatusGone, "expired", rowingHost)
		})
		t.Run("revoked link", func(t *testing.T) {
			svc := engine.NewService(db, env.gw)
			if _, err := invitation.Of(svc).RevokeInvitation(context.Background(), engine.CommandLine, 1, inv.ID); err != nil {
				t.Fatal(err)
			}
			c := env.newClient()
			expectRefused(t, env, c, env.get(c, "/invite/"+token, "Host", rowingHost), http.StatusGone, "withdrawn", rowingHost)
		})
	})
}

// Without a session key there is no key to check invitation links with:
// every one is refused, none signs in.
func TestInvitationLinksWithoutKey(t *testing.T) {
	env := newOrganisationsEnv(t, dbtest.SQLite(t), envOptions{})
	_, token := env.invite(t, 1, 1, engine.DemoUserKey, clock.Now().UTC(), 0)
	c := env.newClient()
	expectRefused(t, env, c, env.get(c, "/invite/"+token, "Host", rowingHost), http.StatusForbidden, "not valid", rowingHost)
}

// The payment return page of a club addressed by /o/{slug} posts its
// retry form under the same prefix, where the member's session belongs.
func TestPaymentRetryKeepsOrganisationPrefix(t *testing.T) {
	env := newOrganisationsEnv(t, dbtest.SQLite(t), envOptions{})
	const shared = "portal.example"
	c := env.newClient()
	expectRedirect(t, env.get(c, "/o/riverside/membership/register/1?u=demo&h="+hashlink.Sign(testSecret, "demo"), "Host", shared), "/o/riverside/membership/register/1")
	demo := &enginetest.Demo{T: t, DB: env.db, Svc: engine.NewService(env.db, env.gw), GW: env.gw}
	form := demo.Commit(1)
	ctx := context.Background()
	payLink, _ := url.Parse(form.PaymentURL)
	attempt, err := payment.Of(demo.Svc).FollowPayLink(ctx, payLink.Query().Get("reference"))
	if err != nil {
		t.Fatal(err)
	}
	ret, _ := url.Parse(env.gw.ReturnURL(attempt.Reference, "failed", "tx-1", attempt.AmountMinor, attempt.Currency))
	p := env.get(c, "/o/riverside/membership/payment-return?"+ret.RawQuery, "Host", shared)
	if action := p.testid("retry-form").AttrOr("action", ""); action != "/o/riverside/membership/payment-retry" {
		t.Fatalf("retry form posts to %q:\n%s", action, p.body)
	}
}

// Opening an invitation link starts a registration (the overview page
// does) but registers nobody: the invitation is opened, and a later
// invitation run does not skip the household as registered. Only the
// committed registration makes it registered.
func TestInvitationRegisteredOnlyWhenCommitted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnvWith(t, db, envOptions{invitations: testInvitations})
		ctx := context.Background()
		inv, token := env.invite(t, 1, 1, engine.DemoUserKey, clock.Now().UTC(), 0)
		c := env.newClient()
		expectRedirect(t, env.get(c, "/invite/"+token), "/membership/register/1")
		if p := env.get(c, "/membership/register/1"); p.status != http.StatusOK {
			t.Fatalf("overview: %d", p.status)
		}
		stateOf := func() invitation.Status {
			t.Helper()
			list, err := invitation.Of(env.svc).Invitations(ctx, 1, 1)
			if err != nil || len(list) == 0 {
				t.Fatalf("invitations: %v %v", list, err)
			}
			return list[len(list)-1] // the first, newest first
		}
		if st := stateOf(); st.ID != inv.ID || st.State != invitation.InvitationOpened || st.Registered {
			t.Fatalf("after opening: %s, registered %v", st.State, st.Registered)
		}
		// A later run after the link was withdrawn invites the household again.
		if _, err := invitation.Of(env.svc).RevokeInvitation(ctx, engine.CommandLine, 1, inv.ID); err != nil {
			t.Fatal(err)
		}
		rep, err := invitation.Of(env.svc).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: 1, UserKeys: []string{engine.DemoUserKey}})
		if err != nil || len(rep.Created) != 1 || len(rep.Skipped) != 0 {
			t.Fatalf("second run: %+v %v", rep, err)
		}

		// The member commits the registration begun on the overview.
		res := env.do(c, http.MethodGet, "/api/forms/membership/1?userKey="+engine.DemoUserKey, nil)
		var f form
		res.json(t, &f)
		res, f = env.next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
		if res.status != http.StatusOK {
			t.Fatalf("select: %d %s", res.status, res.body)
		}
		for _, step := range demoPath {
			if res, f = env.next(c, f.ProcessID, step, demoAnswers[step]); res.status != http.StatusOK {
				t.Fatalf("step %d: %d %s", step, res.status, res.body)
			}
		}
		list, err := invitation.Of(env.svc).Invitations(ctx, 1, 1)
		if err != nil || len(list) != 2 || list[0].State != invitation.InvitationRegistered || !list[0].Registered {
			t.Fatalf("after the commit: %+v %v", list, err)
		}
		rep, err = invitation.Of(env.svc).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: 1, UserKeys: []string{engine.DemoUserKey}})
		if err != nil || len(rep.Created) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != invitation.SkipAlreadyInvited && rep.Skipped[0].Reason != invitation.SkipRegistered {
			t.Fatalf("third run: %+v %v", rep, err)
		}
	})
}
