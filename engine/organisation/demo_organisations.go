package organisation

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/demodata"
	"portal/engine/payment"
)

//go:embed demo_organisations_definition.yaml
var demoOrganisationsDefinition []byte

// Demo tenants: `portal seed demo --tenants` (what `make run` does) adds a
// second club beside the rowing club, so that the separation of organisations can be
// seen by clicking. Each club gets a hostname: the rowing club localhost,
// the tennis club 127.0.0.1, both on the same port.
const (
	// DemoSecondOrgID is the second demo club.
	DemoSecondOrgID = 2
	// DemoSecondPeriodID is the second club's open period.
	DemoSecondPeriodID = 3
	// DemoFirstHost and DemoSecondHost are the demo clubs' hostnames.
	DemoFirstHost, DemoSecondHost = "localhost", "127.0.0.1"
)

// SeedDemoOrganisations adds the second demo club (another sport, another
// currency, bank transfer to its own account) and the two hostnames. The user key "demo" has persons in both
// clubs, so the same key shows different households on the two hosts.
// Idempotent: what exists is left alone. Run SeedDemo first.
func SeedDemoOrganisations(ctx context.Context, db *bun.DB, now time.Time) error {
	spec, err := definition.ParseDefinition(demoOrganisationsDefinition)
	if err != nil {
		return fmt.Errorf("demo organisations definition: %w", err)
	}
	err = engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*engine.Organisation)(nil)).Where("id = ?", DemoSecondOrgID).Exists(ctx)
		if err != nil || exists {
			return err
		}
		return seedSecondClub(ctx, tx, now)
	})
	if err != nil {
		return err
	}
	_, err = definition.ImportDefinition(ctx, db, spec)
	return err
}

func seedSecondClub(ctx context.Context, tx bun.Tx, now time.Time) error {
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, -1)
	org := DemoSecondOrgID
	rows := []any{
		&engine.Organisation{ID: int64(org), Name: "Lakeside Tennis Club", Slug: "lakeside", DefaultLanguage: "en",
			AccentColour: "#047857", ContactEmail: "office@lakeside-tennis.example"},
		&engine.OrganisationHost{Hostname: DemoFirstHost, OrganisationID: 1},
		&engine.OrganisationHost{Hostname: DemoSecondHost, OrganisationID: int64(org)},
		&engine.MembershipPeriod{ID: DemoSecondPeriodID, OrganisationID: int64(org), Name: fmt.Sprintf("Tennis year %d", start.Year()),
			NameTexts: demodata.DemoTexts(fmt.Sprintf("Tennis year %d", start.Year()), fmt.Sprintf("Tennisjahr %d", start.Year()), fmt.Sprintf("Année de tennis %d", start.Year())),
			StartDate: start, EndDate: end, Status: engine.PeriodOpen, Currency: "CHF", DefinitionKey: "membership"},
		&engine.MembershipType{ID: 3, OrganisationID: int64(org), Code: "PLAYER", Name: "Player", NameTexts: demodata.DemoTexts("Player", "Aktive", "Joueur"), MinAge: new(16)},
		&engine.MembershipType{ID: 4, OrganisationID: int64(org), Code: "YOUTH", Name: "Youth", NameTexts: demodata.DemoTexts("Youth", "Junioren", "Jeunesse"), MaxAge: new(15)},
		// The tennis club takes bank transfers to its own Swiss account: its
		// members see a QR-bill, the rowing club's the environment's provider.
		&payment.PaymentSettings{OrganisationID: int64(org), Provider: payment.BankTransferProvider, BankCreditorName: "Lakeside Tennis Club",
			BankIBAN: "CH9300762011623852957", BankCreditorAddress: "Seestrasse;1;8002;Zürich;CH", UpdatedAt: now},
	}
	for _, r := range rows {
		if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
			return fmt.Errorf("seed %T: %w", r, err)
		}
	}
	if err := demodata.AdvanceSequences(ctx, tx); err != nil {
		return err
	}
	// Persons without explicit ids: load-test members may already have taken any.
	persons := []engine.Person{
		{OrganisationID: int64(org), FirstName: "Kim", LastName: "Keller", DateOfBirth: demodata.DemoDate("1979-03-08"), Email: "kim.keller@example.org", CreatedAt: now},
		{OrganisationID: int64(org), FirstName: "Noa", LastName: "Keller", DateOfBirth: demodata.DemoDate("2013-11-21"), CreatedAt: now},
	}
	if _, err := tx.NewInsert().Model(&persons).Exec(ctx); err != nil {
		return fmt.Errorf("seed persons: %w", err)
	}
	links := []engine.UserPerson{{UserKey: engine.DemoUserKey, PersonID: persons[0].ID, OrganisationID: int64(org)}, {UserKey: engine.DemoUserKey, PersonID: persons[1].ID, OrganisationID: int64(org)}}
	if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
		return fmt.Errorf("seed user links: %w", err)
	}
	player, youth := int64(3), int64(4)
	rules := []engine.PriceRule{
		{PeriodID: DemoSecondPeriodID, Code: "player-fee", Kind: engine.RuleMembershipFee, Label: "Player membership", LabelTexts: demodata.DemoTexts("Player membership", "Mitgliedschaft Aktive", "Cotisation joueur"), MembershipTypeID: &player, AmountMinor: new(int64(28000))},
		{PeriodID: DemoSecondPeriodID, Code: "youth-fee", Kind: engine.RuleMembershipFee, Label: "Youth membership", LabelTexts: demodata.DemoTexts("Youth membership", "Mitgliedschaft Junioren", "Cotisation jeunesse"), MembershipTypeID: &youth, AmountMinor: new(int64(9000))},
		{PeriodID: DemoSecondPeriodID, Code: "admin-fee", Kind: engine.RuleAdminFee, Label: "Administration fee", LabelTexts: demodata.DemoTexts("Administration fee", "Bearbeitungsgebühr", "Frais administratifs"), AmountMinor: new(int64(500))},
	}
	if _, err := tx.NewInsert().Model(&rules).Exec(ctx); err != nil {
		return fmt.Errorf("seed price rules: %w", err)
	}
	return nil
}
