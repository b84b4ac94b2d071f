package members_test

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
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
	"portal/relay/invitelink"
)

// invite issues an invitation of a household to a period of orgID with
// the given clock and validity, and returns it with its token.
func invite(env *handlertest.Env, t testing.TB, orgID, periodID int64, userKey string, now time.Time, valid time.Duration) (invitation.Invitation, string) {
	t.Helper()
	svc := engine.NewService(env.DB, env.Gateway, engine.WithClock(func() time.Time { return now }))
	rep, err := invitation.Of(svc).CreateInvitations(context.Background(), engine.CommandLine, orgID, invitation.Request{PeriodID: periodID, UserKeys: []string{userKey}, Expires: valid})
	if err != nil || len(rep.Created) != 1 {
		t.Fatalf("invite: %+v, %v", rep, err)
	}
	inv := rep.Created[0]
	return inv, handlertest.TestInvitations.Token(orgID, inv.ID, inv.ExpiresAt)
}

// expectRefused checks an invitation link's refusal page: its status, its
// message, and that nobody was signed in.
func expectRefused(t *testing.T, env *handlertest.Env, c *http.Client, p handlertest.Page, status int, message, host string) {
	t.Helper()
	if p.Status != status || !strings.Contains(p.TestID("error-message").Text(), message) {
		t.Fatalf("got %d %q, want %d with %q", p.Status, p.TestID("error-message").Text(), status, message)
	}
	if len(p.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a refused invitation set cookies: %v", p.Header.Values("Set-Cookie"))
	}
	if after := env.Get(c, "/membership/register/1", "Host", host); after.Status != http.StatusForbidden {
		t.Fatalf("signed in after a refused invitation: %d", after.Status)
	}
}

func TestInvitationLinks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
		now := clock.Now().UTC()
		inv, token := invite(env, t, 1, 1, engine.DemoUserKey, now, 0)

		t.Run("valid link signs in at its club", func(t *testing.T) {
			c := env.NewClient()
			handlertest.ExpectRedirect(t, env.Get(c, "/invite/"+token, "Host", handlertest.RowingHost), "/membership/register/1")
			overview := env.Get(c, "/membership/register/1", "Host", handlertest.RowingHost)
			if overview.Status != http.StatusOK || !strings.Contains(string(overview.Body), "Alex") {
				t.Fatalf("overview after the invitation: %d", overview.Status)
			}
			var got invitation.Invitation
			if err := db.NewSelect().Model(&got).Where("id = ?", inv.ID).Scan(context.Background()); err != nil || got.OpenedAt == nil {
				t.Fatalf("opened_at not recorded: %+v, %v", got, err)
			}
			// Under /o/{slug} on a shared hostname the prefix is kept.
			c = env.NewClient()
			handlertest.ExpectRedirect(t, env.Get(c, "/o/riverside/invite/"+token, "Host", "portal.example"), "/o/riverside/membership/register/1")
		})
		t.Run("forged links", func(t *testing.T) {
			parts := strings.Split(token, ".")
			for name, tc := range map[string]struct{ host, path string }{
				"another club's host":   {handlertest.TennisHost, "/invite/" + token},
				"extended expiry":       {handlertest.RowingHost, "/invite/" + parts[0] + "." + "4102444800" + "." + parts[2]},
				"another invitation":    {handlertest.RowingHost, "/invite/" + "999." + parts[1] + "." + parts[2]},
				"garbage":               {handlertest.RowingHost, "/invite/not-a-token"},
				"signed by another key": {handlertest.RowingHost, "/invite/" + invitelink.NewSigner([][]byte{bytes.Repeat([]byte("z"), 32)}).Token(1, inv.ID, inv.ExpiresAt)},
			} {
				t.Run(name, func(t *testing.T) {
					c := env.NewClient()
					expectRefused(t, env, c, env.Get(c, tc.path, "Host", tc.host), http.StatusForbidden, "not valid", tc.host)
				})
			}
		})
		t.Run("expired link", func(t *testing.T) {
			_, old := invite(env, t, 1, 1, "demo-1", now.Add(-3*time.Hour), time.Hour)
			c := env.NewClient()
			expectRefused(t, env, c, env.Get(c, "/invite/"+old, "Host", handlertest.RowingHost), http.StatusGone, "expired", handlertest.RowingHost)
		})
		t.Run("revoked link", func(t *testing.T) {
			svc := engine.NewService(db, env.Gateway)
			if _, err := invitation.Of(svc).RevokeInvitation(context.Background(), engine.CommandLine, 1, inv.ID); err != nil {
				t.Fatal(err)
			}
			c := env.NewClient()
			expectRefused(t, env, c, env.Get(c, "/invite/"+token, "Host", handlertest.RowingHost), http.StatusGone, "withdrawn", handlertest.RowingHost)
		})
	})
}

// Without a session key there is no key to check invitation links with:
// every one is refused, none signs in.
func TestInvitationLinksWithoutKey(t *testing.T) {
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{})
	_, token := invite(env, t, 1, 1, engine.DemoUserKey, clock.Now().UTC(), 0)
	c := env.NewClient()
	expectRefused(t, env, c, env.Get(c, "/invite/"+token, "Host", handlertest.RowingHost), http.StatusForbidden, "not valid", handlertest.RowingHost)
}

// The payment return page of a club addressed by /o/{slug} posts its
// retry form under the same prefix, where the member's session belongs.
func TestPaymentRetryKeepsOrganisationPrefix(t *testing.T) {
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{})
	const shared = "portal.example"
	c := env.NewClient()
	handlertest.ExpectRedirect(t, env.Get(c, "/o/riverside/membership/register/1?u=demo&h="+hashlink.Sign(handlertest.HashSecret, "demo"), "Host", shared), "/o/riverside/membership/register/1")
	demo := &enginetest.Demo{T: t, DB: env.DB, Svc: engine.NewService(env.DB, env.Gateway), GW: env.Gateway}
	form := demo.Commit(1)
	ctx := context.Background()
	payLink, _ := url.Parse(form.PaymentURL)
	attempt, err := payment.Of(demo.Svc).FollowPayLink(ctx, payLink.Query().Get("reference"))
	if err != nil {
		t.Fatal(err)
	}
	ret, _ := url.Parse(env.Gateway.ReturnURL(attempt.Reference, "failed", "tx-1", attempt.AmountMinor, attempt.Currency))
	p := env.Get(c, "/o/riverside/membership/payment-return?"+ret.RawQuery, "Host", shared)
	if action := p.TestID("retry-form").AttrOr("action", ""); action != "/o/riverside/membership/payment-retry" {
		t.Fatalf("retry form posts to %q:\n%s", action, p.Body)
	}
}

// Opening an invitation link starts a registration (the overview page
// does) but registers nobody: the invitation is opened, and a later
// invitation run does not skip the household as registered. Only the
// committed registration makes it registered.
func TestInvitationRegisteredOnlyWhenCommitted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
		ctx := context.Background()
		inv, token := invite(env, t, 1, 1, engine.DemoUserKey, clock.Now().UTC(), 0)
		c := env.NewClient()
		handlertest.ExpectRedirect(t, env.Get(c, "/invite/"+token), "/membership/register/1")
		if p := env.Get(c, "/membership/register/1"); p.Status != http.StatusOK {
			t.Fatalf("overview: %d", p.Status)
		}
		stateOf := func() invitation.Status {
			t.Helper()
			list, err := invitation.Of(env.Engine).Invitations(ctx, 1, 1)
			if err != nil || len(list) == 0 {
				t.Fatalf("invitations: %v %v", list, err)
			}
			return list[len(list)-1] // the first, newest first
		}
		if st := stateOf(); st.ID != inv.ID || st.State != invitation.InvitationOpened || st.Registered {
			t.Fatalf("after opening: %s, registered %v", st.State, st.Registered)
		}
		// A later run after the link was withdrawn invites the household again.
		if _, err := invitation.Of(env.Engine).RevokeInvitation(ctx, engine.CommandLine, 1, inv.ID); err != nil {
			t.Fatal(err)
		}
		rep, err := invitation.Of(env.Engine).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: 1, UserKeys: []string{engine.DemoUserKey}})
		if err != nil || len(rep.Created) != 1 || len(rep.Skipped) != 0 {
			t.Fatalf("second run: %+v %v", rep, err)
		}

		// The member commits the registration begun on the overview.
		res := env.Do(c, http.MethodGet, "/api/forms/membership/1?userKey="+engine.DemoUserKey, nil)
		var f handlertest.Form
		res.JSON(t, &f)
		res, f = env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
		if res.Status != http.StatusOK {
			t.Fatalf("select: %d %s", res.Status, res.Body)
		}
		for _, step := range handlertest.DemoPath {
			if res, f = env.Next(c, f.ProcessID, step, handlertest.DemoAnswers[step]); res.Status != http.StatusOK {
				t.Fatalf("step %d: %d %s", step, res.Status, res.Body)
			}
		}
		list, err := invitation.Of(env.Engine).Invitations(ctx, 1, 1)
		if err != nil || len(list) != 2 || list[0].State != invitation.InvitationRegistered || !list[0].Registered {
			t.Fatalf("after the commit: %+v %v", list, err)
		}
		rep, err = invitation.Of(env.Engine).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: 1, UserKeys: []string{engine.DemoUserKey}})
		if err != nil || len(rep.Created) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != invitation.SkipAlreadyInvited && rep.Skipped[0].Reason != invitation.SkipRegistered {
			t.Fatalf("third run: %+v %v", rep, err)
		}
	})
}
