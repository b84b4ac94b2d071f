package handlers_test

import (
	"testing"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/invitation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestE2EStaffSendInvitations: in Chromium, a registrar opens the
// invitations page, finds a person by name to read their external id,
// invites that person's household to the period and sees the invitation
// listed with its state; axe checks the page.
func TestE2EStaffSendInvitations(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	// Alex of the demo household came from the club's own system.
	if _, err := env.DB.NewUpdate().Model((*engine.Person)(nil)).Set("external_id = 'P-1'").
		Where("organisation_id = 1 AND first_name = 'Alex'").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("registrar@example.org", staff.RoleRegistrar)
	b := newE2EBrowser(t, env.Env, "staff-invitations", true, true)

	staffBrowserSignIn(env, b, "registrar@example.org", `[data-testid=overview-states]`)
	b.clickTo(`[data-testid=staff-nav] a[href="/staff/invitations"]`, `[data-testid=invite-form]`)
	if n := b.count(`[data-testid=invitation-row]`); n != 0 {
		t.Fatalf("%d invitations before sending", n)
	}
	b.typeInto(`#persons-q`, "ALEX")
	b.clickTo(`[data-testid=persons-search-submit]`, `#persons-q[value=ALEX]`)
	if n := b.count(`[data-testid=person-row]`); n != 1 {
		t.Fatalf("%d persons found for ALEX", n)
	}
	b.checkPage("staff-invitations")

	b.click(`input[name=whom][value=chosen]`)
	b.typeInto(`#invite-ids`, "P-1")
	b.clickTo(`[data-testid=invite-send]`, `[data-testid=invite-result]`)
	if got := b.text(`[data-testid=invite-invited]`); got != "1" {
		t.Fatalf("%s invited, want 1", got)
	}
	if n := b.count(`[data-testid=invitation-row]`); n != 1 {
		t.Fatalf("%d invitations listed, want 1", n)
	}
	if key := b.text(`[data-testid=invitation-key]`); key != engine.DemoUserKey {
		t.Fatalf("invitation for %q, want %s", key, engine.DemoUserKey)
	}
	if st := b.attr(`[data-testid=invitation-state]`, "data-state"); st != string(invitation.InvitationInvited) && st != string(invitation.InvitationSent) {
		t.Fatalf("invitation state %q", st)
	}
	b.checkPage("staff-invitations-sent")
}
