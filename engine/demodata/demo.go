package demodata

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/definition"
)

//go:embed demo_definition.yaml
var demoDefinition []byte

// SeedDemo loads the demo organisation, period, pricing, persons and
// definition, and then members user keys demo-1 ... demo-N with two
// selectable persons each. It is idempotent: what exists is left alone.
func SeedDemo(ctx context.Context, db *bun.DB, members int, now time.Time) error {
	spec, err := definition.ParseDefinition(demoDefinition)
	if err != nil {
		return fmt.Errorf("demo definition: %w", err)
	}
	err = engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*engine.Organisation)(nil)).Where("id = 1").Exists(ctx)
		if err != nil {
			return fmt.Errorf("check demo organisation: %w", err)
		}
		if !exists {
			if err := seedDemoCore(ctx, tx, now); err != nil {
				return err
			}
		}
		return seedDemoMembers(ctx, tx, members, now)
	})
	if err != nil {
		return err
	}
	_, err = definition.ImportDefinition(ctx, db, spec)
	return err
}

func DemoDate(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err) // only called with literals
	}
	return t
}

func seedDemoCore(ctx context.Context, tx bun.Tx, now time.Time) error {
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, -1)
	rows := []any{
		&engine.Organisation{ID: 1, Name: "Riverside Rowing Club", Slug: "riverside", DefaultLanguage: "en"},
		&engine.MembershipPeriod{ID: engine.DemoPeriodID, OrganisationID: 1, Name: fmt.Sprintf("Season %d/%d", start.Year(), end.Year()),
			NameTexts: seasonTexts(start.Year(), end.Year()), StartDate: start, EndDate: end, Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"},
		&engine.MembershipPeriod{ID: 2, OrganisationID: 1, Name: fmt.Sprintf("Season %d/%d", start.Year()-1, end.Year()-1),
			NameTexts: seasonTexts(start.Year()-1, end.Year()-1), StartDate: start.AddDate(-1, 0, 0), EndDate: start.AddDate(0, 0, -1), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"},
		&engine.MembershipType{ID: 1, OrganisationID: 1, Code: "ADULT", Name: "Adult", NameTexts: DemoTexts("Adult", "Erwachsene", "Adulte"), MinAge: new(18)},
		&engine.MembershipType{ID: 2, OrganisationID: 1, Code: "JUNIOR", Name: "Junior", NameTexts: DemoTexts("Junior", "Jugend", "Junior"), MaxAge: new(17)},
		&engine.Person{ID: 1, OrganisationID: 1, FirstName: "Alex", LastName: "Morgan", DateOfBirth: DemoDate("1985-04-12"), Email: "alex.morgan@example.org", CreatedAt: now},
		&engine.Person{ID: 2, OrganisationID: 1, FirstName: "Sam", LastName: "Morgan", DateOfBirth: DemoDate("1987-09-30"), Email: "sam.morgan@example.org", CreatedAt: now},
		// The juniors are reached through a parent's address: a confirmation goes to each address once.
		&engine.Person{ID: 3, OrganisationID: 1, FirstName: "Robin", LastName: "Morgan", DateOfBirth: DemoDate("2014-06-02"), Email: "alex.morgan@example.org", CreatedAt: now},
		&engine.Person{ID: 4, OrganisationID: 1, FirstName: "Jamie", LastName: "Morgan", DateOfBirth: DemoDate("2011-02-17"), Email: "sam.morgan@example.org", CreatedAt: now},
	}
	for _, r := range rows {
		if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
			return fmt.Errorf("seed %T: %w", r, err)
		}
	}
	var links []engine.UserPerson
	for id := int64(1); id <= 4; id++ {
		links = append(links, engine.UserPerson{UserKey: engine.DemoUserKey, PersonID: id, OrganisationID: 1})
	}
	if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
		return fmt.Errorf("seed user links: %w", err)
	}
	// Alex renews (held an adult membership last season); Jamie is already registered this season.
	held := []engine.Membership{
		{PersonID: 1, PeriodID: 2, MembershipTypeID: 1, MemberType: engine.MemberNew, Status: engine.MembershipActive, CreatedAt: start.AddDate(-1, 0, 0), ActivatedAt: new(start.AddDate(-1, 0, 0))},
		{PersonID: 4, PeriodID: engine.DemoPeriodID, MembershipTypeID: 2, MemberType: engine.MemberRenewal, Status: engine.MembershipActive, CreatedAt: now, ActivatedAt: new(now)},
	}
	if _, err := tx.NewInsert().Model(&held).Exec(ctx); err != nil {
		return fmt.Errorf("seed memberships: %w", err)
	}
	adult, junior := int64(1), int64(2)
	rules := []engine.PriceRule{
		{PeriodID: engine.DemoPeriodID, Code: "adult-fee", Kind: engine.RuleMembershipFee, Label: "Adult membership", LabelTexts: DemoTexts("Adult membership", "Mitgliedschaft Erwachsene", "Cotisation adulte"), MembershipTypeID: &adult, AmountMinor: new(int64(12000))},
		{PeriodID: engine.DemoPeriodID, Code: "junior-fee", Kind: engine.RuleMembershipFee, Label: "Junior membership", LabelTexts: DemoTexts("Junior membership", "Mitgliedschaft Jugend", "Cotisation junior"), MembershipTypeID: &junior, AmountMinor: new(int64(6000))},
		{PeriodID: engine.DemoPeriodID, Code: "joining-fee", Kind: engine.RuleMemberType, Label: "Joining fee (new member)", LabelTexts: DemoTexts("Joining fee (new member)", "Eintrittsgebühr (neues Mitglied)", "Droit d'entrée (nouveau membre)"), MemberType: new(engine.MemberNew), AmountMinor: new(int64(1500))},
		{PeriodID: engine.DemoPeriodID, Code: "loyalty", Kind: engine.RuleMemberType, Label: "Loyalty discount (renewal)", LabelTexts: DemoTexts("Loyalty discount (renewal)", "Treuerabatt (Verlängerung)", "Remise de fidélité (renouvellement)"), MemberType: new(engine.MemberRenewal), AmountMinor: new(int64(-1000))},
		{PeriodID: engine.DemoPeriodID, Code: "transfer-fee", Kind: engine.RuleMemberType, Label: "Transfer handling", LabelTexts: DemoTexts("Transfer handling", "Bearbeitung des Vereinswechsels", "Frais de transfert"), MemberType: new(engine.MemberTransfer), AmountMinor: new(int64(500))},
		{PeriodID: engine.DemoPeriodID, Code: "early-bird", Kind: engine.RuleEarlyBird, Label: "Early-bird discount 10%", LabelTexts: DemoTexts("Early-bird discount 10%", "Frühbucherrabatt 10 %", "Remise anticipée 10 %"), ValidUntil: new(start.AddDate(0, 2, 0)), PercentBP: new(-1000)},
		{PeriodID: engine.DemoPeriodID, Code: "late-fee", Kind: engine.RuleLateFee, Label: "Late registration", LabelTexts: DemoTexts("Late registration", "Späte Anmeldung", "Inscription tardive"), ValidFrom: new(start.AddDate(0, 6, 0)), AmountMinor: new(int64(2000))},
		{PeriodID: engine.DemoPeriodID, Code: "family", Kind: engine.RuleFamily, Label: "Family discount 15% (3 or more)", LabelTexts: DemoTexts("Family discount 15% (3 or more)", "Familienrabatt 15 % (ab 3 Personen)", "Remise famille 15 % (3 personnes ou plus)"), MinPersons: new(3), PercentBP: new(-1500)},
		{PeriodID: engine.DemoPeriodID, Code: "admin-fee", Kind: engine.RuleAdminFee, Label: "Administration fee", LabelTexts: DemoTexts("Administration fee", "Bearbeitungsgebühr", "Frais administratifs"), AmountMinor: new(int64(250))},
	}
	if _, err := tx.NewInsert().Model(&rules).Exec(ctx); err != nil {
		return fmt.Errorf("seed price rules: %w", err)
	}
	return AdvanceSequences(ctx, tx)
}

// DemoTexts are a demo text in English, German and French: the demo
// clubs show their own data in the member's language.
func DemoTexts(en, de, fr string) engine.Texts { return engine.Texts{"en": en, "de": de, "fr": fr} }

// seasonTexts name a demo season in each language.
func seasonTexts(from, to int) engine.Texts {
	return DemoTexts(fmt.Sprintf("Season %d/%d", from, to), fmt.Sprintf("Saison %d/%d", from, to), fmt.Sprintf("Saison %d/%d", from, to))
}

// AdvanceSequences moves PostgreSQL's id sequences past the rows the demo
// inserted with explicit ids.
func AdvanceSequences(ctx context.Context, tx bun.Tx) error {
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	for _, table := range []string{"organisations", "membership_periods", "membership_types", "persons"} {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(
			"SELECT setval(pg_get_serial_sequence('%[1]s', 'id'), (SELECT max(id) FROM %[1]s))", table)); err != nil {
			return fmt.Errorf("advance %s id sequence: %w", table, err)
		}
	}
	return nil
}

// seedDemoMembers links user keys demo-1 ... demo-n to two adults each, for load tests.
func seedDemoMembers(ctx context.Context, tx bun.Tx, n int, now time.Time) error {
	for i := 1; i <= n; i++ {
		key := fmt.Sprintf("demo-%d", i)
		exists, err := tx.NewSelect().Model((*engine.UserPerson)(nil)).Where("user_key = ?", key).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check %s: %w", key, err)
		}
		if exists {
			continue
		}
		persons := []engine.Person{
			{OrganisationID: 1, FirstName: "Load", LastName: fmt.Sprintf("Tester %d A", i), DateOfBirth: DemoDate("1990-01-15"), Email: fmt.Sprintf("load-%d@example.invalid", i), CreatedAt: now},
			{OrganisationID: 1, FirstName: "Load", LastName: fmt.Sprintf("Tester %d B", i), DateOfBirth: DemoDate("1992-07-04"), Email: fmt.Sprintf("load-%d@example.invalid", i), CreatedAt: now},
		}
		if _, err := tx.NewInsert().Model(&persons).Exec(ctx); err != nil {
			return fmt.Errorf("seed persons of %s: %w", key, err)
		}
		links := []engine.UserPerson{{UserKey: key, PersonID: persons[0].ID, OrganisationID: 1}, {UserKey: key, PersonID: persons[1].ID, OrganisationID: 1}}
		if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
			return fmt.Errorf("seed links of %s: %w", key, err)
		}
	}
	return nil
}

// DemoDefinitionYAML is the demo definition's source, for tests that import
// a changed version of it.
func DemoDefinitionYAML() []byte { return demoDefinition }
