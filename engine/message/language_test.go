package message_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
)

// TestMessageLanguage: a message about a registration takes its language;
// one about a household or a person without a registration of its own
// (last season's membership, kept from before the portal) takes the
// household's last registration's; none recorded is "" (the
// organisation's default).
func TestMessageLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db)
		var held engine.Membership
		if err := db.NewSelect().Model(&held).Where("person_id = 1 AND period_id = 2").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		memberLanguage := func() string {
			m, err := message.LoadMemberMessage(ctx, db, message.MemberMessagePayload{PersonID: 1, OrganisationID: 1, MembershipID: held.ID})
			if err != nil {
				t.Fatal(err)
			}
			return m.Language
		}
		if got, err := message.HouseholdLanguage(ctx, db, 1, engine.DemoUserKey); err != nil || got != "" || memberLanguage() != "" {
			t.Fatalf("before any registration: %q, %v, member %q", got, err, memberLanguage())
		}
		form := demo.Commit(2)
		if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = 'fr'").Where("id = ?", form.ProcessID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := message.RegistrationLanguage(ctx, db, form.ProcessID); err != nil || got != "fr" {
			t.Fatalf("registration: %q, %v", got, err)
		}
		if got, err := message.HouseholdLanguage(ctx, db, 1, engine.DemoUserKey); err != nil || got != "fr" {
			t.Fatalf("household: %q, %v", got, err)
		}
		if got := memberLanguage(); got != "fr" {
			t.Fatalf("last season's member: %q, want the household's fr", got)
		}
		if got, err := message.HouseholdLanguage(ctx, db, 2, engine.DemoUserKey); err != nil || got != "" {
			t.Fatalf("another organisation: %q, %v", got, err)
		}
		if got, err := message.RegistrationLanguage(ctx, db, 999999); err != nil || got != "" {
			t.Fatalf("no such registration: %q, %v", got, err)
		}
	})
}
