package messages_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/invitation"
	"portal/outbound/messages"
	"portal/relay/invitelink"
)

// TestInvitationMail: an invitation e-mail goes over SMTP to the
// household's addresses with a link that verifies for its organisation;
// one revoked before the job ran is not sent.
func TestInvitationMail(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		signer := invitelink.NewSigner([][]byte{bytes.Repeat([]byte("i"), 32)})
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", Invitations: signer, Now: e.clk.Now})
		demo := enginetest.Seed(t, db, engine.WithClock(e.clk.Now))
		invite := func() invitation.Invitation {
			rep, err := invitation.Of(demo.Svc).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, UserKeys: []string{engine.DemoUserKey}, Send: true})
			if err != nil || len(rep.Created) != 1 {
				t.Fatalf("invite: %+v, %v", rep, err)
			}
			return rep.Created[0]
		}
		withdrawn := invite()
		if _, err := invitation.Of(demo.Svc).RevokeInvitation(ctx, engine.CommandLine, 1, withdrawn.ID); err != nil {
			t.Fatal(err)
		}
		inv := invite()
		e.run(t, 0)
		got := e.srv.Wait(t, 1)
		if len(got) != 1 || strings.Join(got[0].To, ",") != "alex.morgan@example.org,sam.morgan@example.org" {
			t.Fatalf("received %d messages, to %v", len(got), got[0].To)
		}
		header, parts := decoded(t, got[0].Data)
		if header.Get("X-Portal-Invitation") == "" || !strings.Contains(parts["text/plain"], "Alex Morgan") {
			t.Fatalf("header %v, text:\n%s", header, parts["text/plain"])
		}
		link := regexp.MustCompile(`https://portal\.example/invite/(\S+)`).FindStringSubmatch(parts["text/plain"])
		if link == nil || !strings.Contains(parts["text/html"], link[0]) {
			t.Fatalf("no invitation link in:\n%s\n%s", parts["text/plain"], parts["text/html"])
		}
		id, exp, err := signer.Verify(1, link[1])
		if err != nil || id != inv.ID || !exp.Equal(inv.ExpiresAt.Truncate(1e9)) {
			t.Fatalf("link verifies as %d, %v, %v; want %d, %v", id, exp, err, inv.ID, inv.ExpiresAt)
		}
		if _, _, err := signer.Verify(2, link[1]); err == nil {
			t.Fatal("the link verifies for another organisation")
		}
		list, err := invitation.Of(demo.Svc).Invitations(ctx, 1, engine.DemoPeriodID)
		if err != nil || list[0].ID != inv.ID || list[0].State != invitation.InvitationSent || list[1].State != invitation.InvitationRevoked {
			t.Fatalf("list: %+v, %v", list, err)
		}
	})
}
