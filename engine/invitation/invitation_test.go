package invitation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/organisation"
)

func TestInvitations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		now := clock.Now().UTC()
		clock := now
		svc := engine.NewService(db, f.GW, engine.WithClock(func() time.Time { return clock }))
		if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("external_id = 'P-' || CAST(id AS TEXT)").Where("organisation_id = 1").Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}

		t.Run("bad requests change nothing", func(t *testing.T) {
			for name, req := range map[string]invitation.Request{
				"nobody":       {PeriodID: engine.DemoPeriodID},
				"two choices":  {PeriodID: engine.DemoPeriodID, All: true, UserKeys: []string{"demo"}},
				"short expiry": {PeriodID: engine.DemoPeriodID, All: true, Expires: time.Minute},
			} {
				_, err := invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, req)
				enginetest.WantCode(t, err, engine.CodeValidation)
				_ = name
			}
			_, err := invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, invitation.Request{PeriodID: 2, All: true})
			enginetest.WantCode(t, err, engine.CodeConflict) // period 2 is closed
			_, err = invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 2, invitation.Request{PeriodID: engine.DemoPeriodID, All: true})
			enginetest.WantCode(t, err, engine.CodeNotFound) // another organisation's period
			if n := f.Count((*invitation.Invitation)(nil), "1=1"); n != 0 {
				t.Fatalf("%d invitations after refusals", n)
			}
		})

		// demo-1 committed its registration: it is skipped as registered (a
		// registration only started is not: TestInvitationRegisteredOnlyWhenCommitted).
		f.Start("demo-1", 5).Commit()
		rep, err := invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, ExternalIDs: []string{"P-1", "P-999"}, Send: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Created) != 1 || rep.Created[0].UserKey != engine.DemoUserKey || !rep.Created[0].ExpiresAt.Equal(now.Add(engine.DefaultInvitationExpiry)) {
			t.Fatalf("created %+v", rep.Created)
		}
		if len(rep.Skipped) != 1 || rep.Skipped[0].ExternalID != "P-999" || rep.Skipped[0].Reason != invitation.SkipUnknownPerson {
			t.Fatalf("skipped %+v", rep.Skipped)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "kind = ? AND recipient = ?", invitation.KindInvitation, "alex.morgan@example.org, sam.morgan@example.org"); n != 1 {
			t.Fatalf("%d invitation messages to the household", n)
		}
		if n := f.Count((*jobs.Job)(nil), "kind = ?", invitation.KindInvitation); n != 1 {
			t.Fatalf("%d invitation jobs", n)
		}

		// Everyone: only demo-2 is new (demo holds a valid link, demo-1 registered).
		rep, err = invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, All: true, Expires: 48 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Created) != 1 || rep.Created[0].UserKey != "demo-2" {
			t.Fatalf("second run created %+v", rep.Created)
		}
		reasons := map[string]string{}
		for _, s := range rep.Skipped {
			reasons[s.UserKey] = s.Reason
		}
		if reasons["demo"] != invitation.SkipAlreadyInvited || reasons["demo-1"] != invitation.SkipRegistered {
			t.Fatalf("second run skipped %+v", rep.Skipped)
		}
		demoInv, demo2Inv := f.Count((*invitation.Invitation)(nil), "user_key = 'demo'"), rep.Created[0]
		if demoInv != 1 {
			t.Fatalf("%d invitations of demo", demoInv)
		}

		// Open, revoke, expire.
		var first invitation.Invitation
		if err := db.NewSelect().Model(&first).Where("user_key = 'demo'").Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := invitation.Of(svc).OpenInvitation(f.Ctx, 2, first.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("open under another organisation: %v", err)
		}
		opened, err := invitation.Of(svc).OpenInvitation(f.Ctx, 1, first.ID)
		if err != nil || opened.UserKey != engine.DemoUserKey || opened.OpenedAt == nil {
			t.Fatalf("open: %+v, %v", opened, err)
		}
		if _, err := invitation.Of(svc).RevokeInvitation(f.Ctx, engine.CommandLine, 1, first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := invitation.Of(svc).OpenInvitation(f.Ctx, 1, first.ID); !errors.Is(err, invitation.ErrInvitationRevoked) {
			t.Fatalf("open revoked: %v", err)
		}
		clock = now.Add(49 * time.Hour)
		if _, err := invitation.Of(svc).OpenInvitation(f.Ctx, 1, demo2Inv.ID); !errors.Is(err, invitation.ErrInvitationExpired) {
			t.Fatalf("open expired: %v", err)
		}

		list, err := invitation.Of(svc).Invitations(f.Ctx, 1, engine.DemoPeriodID)
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]invitation.State{}
		for _, st := range list {
			states[st.UserKey] = st.State
		}
		if states["demo"] != invitation.InvitationRevoked || states["demo-2"] != invitation.InvitationExpired || len(list) != 2 {
			t.Fatalf("states %v", states)
		}
		if _, err := invitation.Of(svc).Invitations(f.Ctx, 2, engine.DemoPeriodID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("list of another organisation's period: %v", err)
		}

		// After a revocation (and the expiry) the household can be invited again; registered and paid show.
		clock = now
		rep, err = invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, UserKeys: []string{"demo", "nobody"}})
		if err != nil || len(rep.Created) != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != invitation.SkipUnknownUserKey {
			t.Fatalf("re-invite: %+v, %v", rep, err)
		}
		r := f.Start(engine.DemoUserKey, enginetest.Sam)
		f.Pay(f.AttemptOf(r.Commit().PaymentURL), engine.OutcomeSuccess)
		list, _ = invitation.Of(svc).Invitations(f.Ctx, 1, engine.DemoPeriodID)
		if list[0].UserKey != engine.DemoUserKey || list[0].State != invitation.InvitationPaid || len(list[0].Persons) != 4 {
			t.Fatalf("newest invitation: %+v", list[0])
		}
		if n, err := invitation.Of(svc).RevokeInvitationsOf(f.Ctx, engine.CommandLine, 1, engine.DemoPeriodID, engine.DemoUserKey); err != nil || n != 1 {
			t.Fatalf("revoke of user key: %d, %v", n, err)
		}
	})
}

// An organisation's own invitation expiry is the default of its new
// invitations; out-of-range settings are refused by name.
func TestInvitationExpiryPerOrganisation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		now := clock.Now().UTC()
		svc := engine.NewService(db, f.GW, engine.WithClock(func() time.Time { return now }))
		for _, bad := range []int{-1, 367} {
			_, err := organisation.Of(svc).UpdateOrganisation(f.Ctx, 1, organisation.OrganisationChange{InvitationExpiryDays: &bad})
			enginetest.WantCode(t, err, engine.CodeValidation)
			if e, ok := err.(*engine.Error); !ok || len(e.Fields) != 1 || e.Fields[0].Field != "invitationExpiryDays" {
				t.Fatalf("%d days: %v", bad, err)
			}
		}
		days := 14
		if _, err := organisation.Of(svc).UpdateOrganisation(f.Ctx, 1, organisation.OrganisationChange{InvitationExpiryDays: &days}); err != nil {
			t.Fatal(err)
		}
		rep, err := invitation.Of(svc).CreateInvitations(f.Ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, UserKeys: []string{engine.DemoUserKey}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Created) != 1 || !rep.Created[0].ExpiresAt.Equal(now.Add(14*24*time.Hour)) {
			t.Fatalf("created %+v, want an expiry in 14 days", rep.Created)
		}
	})
}
