package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/privacy"
)

// The demo household's persons (engine/demodata): Alex and Sam are the
// parents, Robin (whose address is Alex's) and Jamie the children.
const (
	demoAlex  = int64(1)
	demoRobin = int64(3)
	alexIBAN  = "DE89370400440532013000"
)

// giveAlexsMandate stores the SEPA mandate Alex gives for the demo
// household, as GiveMandate stores it.
func giveAlexsMandate(t *testing.T, db *bun.DB) *directdebit.DebitMandate {
	t.Helper()
	m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999",
		Reference: "DEMO-ALEX", Holder: "Alex Morgan", IBAN: alexIBAN, BIC: "COBADEFFXXX", Language: "en", TextVersion: "test",
		Text: "I authorise the club to collect payments from my account.", SignedAt: clock.Now()}
	if _, err := db.NewInsert().Model(m).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestErasingOnePersonLeavesAnothersRecords: erasing Robin changes
// Robin's records only. Alex's mandate keeps its holder, account and
// validity; Alex's order lines keep Alex's name; the confirmation that
// went to Alex's address (also Robin's) keeps it and Alex's name.
func TestErasingOnePersonLeavesAnothersRecords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		form := d.Commit(demoAlex, demoRobin)
		d.Pay(form)
		mandate := giveAlexsMandate(t, db)

		var alexLinesBefore []engine.OrderLine
		if err := db.NewSelect().Model(&alexLinesBefore).Where("person_id = ?", demoAlex).Order("id").Scan(ctx); err != nil || len(alexLinesBefore) == 0 {
			t.Fatalf("Alex's lines: %v %v", alexLinesBefore, err)
		}
		var confirmation engine.OutboxMessage
		if err := db.NewSelect().Model(&confirmation).Where("kind = 'membership_confirmation'").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(confirmation.Payload, "Alex Morgan") || !strings.Contains(confirmation.Payload, "Robin Morgan") {
			t.Fatalf("the confirmation's payload does not name both: %s", confirmation.Payload)
		}

		if _, err := privacy.Of(d.Svc).ErasePerson(ctx, engine.CommandLine, 1, demoRobin, privacy.ErasureOptions{Force: true}); err != nil {
			t.Fatal(err)
		}

		var m directdebit.DebitMandate
		if err := db.NewSelect().Model(&m).Where("id = ?", mandate.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if m.Holder != "Alex Morgan" || m.IBAN != alexIBAN || m.BIC != "COBADEFFXXX" || m.RevokedAt != nil || m.EndReason != "" {
			t.Fatalf("erasing Robin changed Alex's mandate: holder %q iban %q bic %q revoked %v end %q", m.Holder, m.IBAN, m.BIC, m.RevokedAt, m.EndReason)
		}
		var alexLines []engine.OrderLine
		if err := db.NewSelect().Model(&alexLines).Where("person_id = ?", demoAlex).Order("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for i, l := range alexLines {
			if l.Description != alexLinesBefore[i].Description {
				t.Errorf("erasing Robin changed Alex's line %q to %q", alexLinesBefore[i].Description, l.Description)
			}
		}
		var robinLines []engine.OrderLine
		if err := db.NewSelect().Model(&robinLines).Where("person_id = ?", demoRobin).Scan(ctx); err != nil || len(robinLines) == 0 {
			t.Fatalf("Robin's lines: %v %v", robinLines, err)
		}
		for _, l := range robinLines {
			if strings.Contains(l.Description, "Robin") || !strings.HasSuffix(l.Description, " – "+privacy.ErasedLabel(demoRobin)) {
				t.Errorf("Robin's line after the erasure: %q", l.Description)
			}
		}
		var after engine.OutboxMessage
		if err := db.NewSelect().Model(&after).Where("id = ?", confirmation.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if after.Recipient != confirmation.Recipient || !strings.Contains(after.Payload, `"Alex Morgan"`) || strings.Contains(after.Payload, "Robin") {
			t.Fatalf("the confirmation after erasing Robin: to %q (was %q), payload %s", after.Recipient, confirmation.Recipient, after.Payload)
		}
	})
}

// TestPersonExportListsOnlyMandatesAboutThem: a person's export lists
// the mandates they hold and those that paid their own memberships, not
// another holder's mandate of the household, nor one given after they
// left it.
func TestPersonExportListsOnlyMandatesAboutThem(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		id := addQuirin(t, d)
		form := registerQuirin(t, d, id)
		d.Pay(form)
		mandate := func(ref, holder, iban string) *directdebit.DebitMandate {
			m := &directdebit.DebitMandate{OrganisationID: 1, UserKey: engine.DemoUserKey, CreditorID: "DE98ZZZ09999999999", Reference: ref,
				Holder: holder, IBAN: iban, Language: "en", TextVersion: "test", Text: "I authorise the club.", SignedAt: clock.Now()}
			if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			return m
		}
		mandate("OWN", "Zabelthorn, Quirinus", quirinIBAN)
		paid := mandate("PAID", "Sam Morgan", "DE02120300000000202051")
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("debit_mandate_id = ?", paid.ID).
			Where("process_instance_id = ?", form.ProcessID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		mandate("OTHER", "Sam Morgan", "DE75512108001245126199")
		if _, err := organisation.Of(d.Svc).UnlinkPersons(ctx, 1, []organisation.PersonLink{{ExternalID: quirin.external, UserKey: engine.DemoUserKey}}); err != nil {
			t.Fatal(err)
		}
		mandate("AFTER", "Alex Morgan", alexIBAN)

		x, err := privacy.Of(d.Svc).ExportPerson(ctx, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, m := range x.Mandates {
			refs = append(refs, m.Reference)
		}
		if strings.Join(refs, ",") != "OWN,PAID" {
			t.Fatalf("the person's export lists mandates %v, want OWN (they hold it) and PAID (it paid their membership)", refs)
		}
		// The household's own export still lists every mandate it gave.
		h, err := privacy.Of(d.Svc).ExportHousehold(ctx, 1, engine.DemoUserKey)
		if err != nil || len(h.Mandates) != 4 {
			t.Fatalf("the household's export: %d mandates, %v", len(h.Mandates), err)
		}
	})
}
