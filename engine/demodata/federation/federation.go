// Package federation seeds a federation for `portal seed federation` and
// `make bench-federation` (issue 42): the demo at the scale of many clubs.
package federation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/definition"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/registration"
)

// A federation is the demo at the scale of `portal seed federation`
// (issue 42, docs/BENCHMARKS.md): many clubs on one portal, each with two
// seasons of registrations in every state, their orders, payments and
// mandates. Three clubs have a part to play in the benchmark:
//
//   - the demo club (organisation 1, SeedDemo) holds the households of the
//     season opening (user keys fed-open-1 ... fed-open-N), linked to two
//     persons each and not yet registered in the open period 1;
//   - BankClub (slug fed-001), the big club, whose members pay by
//     bank transfer to its own account: about a tenth of its households
//     owe an open transfer (the statement import's matches);
//   - DebitClub (slug fed-002) collects every fee by SEPA direct
//     debit: each of its households has a mandate and an order due today
//     (the collection run).
//
// The rows are what the engine writes when members register (the commit's
// order, frozen price lines from registration.PriceRegistration,
// memberships, the payment attempt and the provider's event), inserted in
// batches instead of one registration at a time.
const (
	BankClub  = "fed-001"
	DebitClub = "fed-002"
	// OpeningPrefix names the season opening's user keys.
	OpeningPrefix = "fed-open-"
	// CreditorIBAN is the big club's account (a valid example
	// IBAN; nobody owns it): the statement import's account.
	CreditorIBAN = "DE02120300000000202051"
	// DebitIBAN is the debit club's account and CreditorID its SEPA creditor id.
	DebitIBAN  = "DE02500105170137075030"
	CreditorID = "DE98ZZZ09999999999"
)

// Size is how big a federation to seed.
type Size struct {
	Clubs, Persons int
}

// Households is how the persons are spread: the season opening's
// households (two persons each), the big club's and the debit club's
// households, and the households of each other club.
func (s Size) Households() (opening, bank, debit, perClub int) {
	opening = s.Persons / 10   // a fifth of the persons
	bank = s.Persons / 20      // two persons each on average: a tenth
	debit = s.Persons / 10     // one person each: a tenth
	rest := s.Persons * 6 / 10 // the rest, two persons each on average
	perClub = rest / 2 / max(s.Clubs-2, 1)
	return opening, bank, debit, perClub
}

// Report says what a seed added and what it found.
type Report struct {
	ClubsAdded, ClubsFound     int
	OpeningAdded, OpeningFound int
	Persons, Registrations     int
}

// Seed seeds the demo (SeedDemo), then size.Clubs clubs and the
// season opening's households. It is idempotent: each club is seeded in
// one transaction and left alone when its slug exists, and the opening's
// households are added only where missing. progress, when set, is told of
// each club.
func Seed(ctx context.Context, db *bun.DB, size Size, now time.Time, progress func(string)) (Report, error) {
	var rep Report
	if size.Clubs < 2 || size.Persons < 100 {
		return rep, fmt.Errorf("a federation needs at least 2 clubs and 100 persons")
	}
	if err := demodata.SeedDemo(ctx, db, 0, now); err != nil {
		return rep, err
	}
	now = now.UTC()
	opening, bank, debit, perClub := size.Households()
	added, err := seedOpening(ctx, db, opening, now)
	if err != nil {
		return rep, err
	}
	rep.OpeningAdded, rep.OpeningFound = added, opening-added
	for i := 1; i <= size.Clubs; i++ {
		c := fedClub{slug: fmt.Sprintf("fed-%03d", i), households: perClub, provider: ""}
		switch c.slug {
		case BankClub:
			c.households, c.provider = bank, payment.BankTransferProvider
		case DebitClub:
			c.households, c.provider = debit, payment.DirectDebitProvider
		}
		added, persons, regs, err := seedClub(ctx, db, i, c, now)
		if err != nil {
			return rep, fmt.Errorf("club %s: %w", c.slug, err)
		}
		if !added {
			rep.ClubsFound++
			continue
		}
		rep.ClubsAdded++
		rep.Persons += persons
		rep.Registrations += regs
		if progress != nil && (i%20 == 0 || i <= 2) {
			progress(fmt.Sprintf("club %d of %d (%s): %d households", i, size.Clubs, c.slug, c.households))
		}
	}
	if rep.ClubsAdded > 0 {
		if db.Dialect().Name() == dialect.PG {
			// The seeded tables only: a bare ANALYZE reads every schema of the database.
			if _, err := db.ExecContext(ctx, "ANALYZE organisations, membership_periods, persons, user_persons, process_instances, orders, order_lines, memberships, payments, payment_events, debit_mandates"); err != nil {
				return rep, fmt.Errorf("analyze: %w", err)
			}
		}
	}
	return rep, nil
}

// seedOpening links user keys fed-open-1 ... fed-open-n of the demo club
// to two adults each, those not linked yet.
func seedOpening(ctx context.Context, db *bun.DB, n int, now time.Time) (int, error) {
	var have []string
	if err := db.NewSelect().Model((*engine.UserPerson)(nil)).Column("user_key").Distinct().
		Where("organisation_id = 1 AND user_key LIKE ?", OpeningPrefix+"%").Scan(ctx, &have); err != nil {
		return 0, fmt.Errorf("season opening households: %w", err)
	}
	exists := make(map[string]bool, len(have))
	for _, k := range have {
		exists[k] = true
	}
	added := 0
	const batch = 1000
	for from := 1; from <= n; from += batch {
		var keys []string
		var persons []engine.Person
		for i := from; i < min(from+batch, n+1); i++ {
			key := fmt.Sprintf("%s%d", OpeningPrefix, i)
			if exists[key] {
				continue
			}
			keys = append(keys, key)
			email := key + "@example.invalid"
			persons = append(persons,
				engine.Person{OrganisationID: 1, FirstName: firstNames[i%len(firstNames)], LastName: fmt.Sprintf("Opening %d", i), DateOfBirth: birthDate(i, 0), Email: email, CreatedAt: now},
				engine.Person{OrganisationID: 1, FirstName: firstNames[(i+7)%len(firstNames)], LastName: fmt.Sprintf("Opening %d", i), DateOfBirth: birthDate(i, 1), Email: email, CreatedAt: now})
		}
		if len(keys) == 0 {
			continue
		}
		err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&persons).Exec(ctx); err != nil {
				return fmt.Errorf("season opening persons: %w", err)
			}
			links := make([]engine.UserPerson, len(persons))
			for j := range persons {
				links[j] = engine.UserPerson{UserKey: keys[j/2], PersonID: persons[j].ID, OrganisationID: 1}
			}
			if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
				return fmt.Errorf("season opening links: %w", err)
			}
			return nil
		})
		if err != nil {
			return added, err
		}
		added += len(keys)
	}
	return added, nil
}

var firstNames = []string{"Alex", "Sam", "Robin", "Jamie", "Kim", "Noa", "Lea", "Jonas", "Mia", "Elias", "Emma", "Finn", "Lina", "Paul", "Clara", "Ben", "Sofia", "Luca", "Anna", "Tom"}

var familyNames = []string{"Morgan", "Keller", "Müller", "Schmidt", "Dubois", "Martin", "Weber", "Fischer", "Meyer", "Wagner", "Becker", "Bernard", "Rossi", "Huber", "Moreau", "Lambert", "Brunner", "Favre", "Gerber", "Roux"}

// birthDate is a household's member j's date of birth: the first two are
// adults, a third is a junior.
func birthDate(household, j int) time.Time {
	if j >= 2 {
		return time.Date(2010+household%8, time.Month(1+household%12), 1+household%28, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(1950+(household*7+j*3)%50, time.Month(1+(household+j)%12), 1+(household+j*5)%28, 0, 0, 0, 0, time.UTC)
}

// fedClub is one club to seed: its slug, households and payment method
// ("" for the portal's provider).
type fedClub struct {
	slug       string
	households int
	provider   string
}

// clubSetup is what seedClub made of a club's setup.
type clubSetup struct {
	org          int64
	current, old engine.MembershipPeriod
	adult, youth engine.MembershipType
	rules        map[int64][]engine.PriceRule // by period
	def          engine.ProcessDefinition
}

// seedClub seeds one club: its setup in one transaction, then its
// households in transactions of 500. A club whose last household exists
// is complete and left alone; one that a stopped seed left behind is
// finished (the setup read back, the missing batches added).
func seedClub(ctx context.Context, db *bun.DB, n int, c fedClub, now time.Time) (added bool, persons, regs int, err error) {
	if c.households == 0 {
		return false, 0, 0, nil
	}
	done, err := db.NewSelect().Model((*engine.UserPerson)(nil)).Where("user_key = ?", householdKey(c, c.households-1)).Exists(ctx)
	if err != nil || done {
		return false, 0, 0, err
	}
	var setup clubSetup
	err = engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		setup, err = clubSetupOf(ctx, tx, c)
		if err == nil && setup.org == 0 {
			setup, err = seedClubSetup(ctx, tx, n, c, now)
		}
		return err
	})
	if err != nil {
		return false, 0, 0, err
	}
	// Both are idempotent: an unchanged definition is not stored again.
	spec, err := definition.ParseDefinitionFor(demodata.DemoDefinitionYAML(), setup.org)
	if err != nil {
		return false, 0, 0, err
	}
	spec.Name = fmt.Sprintf("Membership of club %03d", n)
	if _, err := definition.ImportDefinition(ctx, db, spec); err != nil {
		return false, 0, 0, err
	}
	if err := db.NewSelect().Model(&setup.def).Where("organisation_id = ? AND key = ?", setup.org, "membership").
		Order("version DESC").Limit(1).Scan(ctx); err != nil {
		return false, 0, 0, fmt.Errorf("definition: %w", err)
	}
	if err := clubPaymentSettings(ctx, db, setup.org, c); err != nil {
		return false, 0, 0, err
	}
	const batch = 500
	for from := 0; from < c.households; from += batch {
		exists, err := db.NewSelect().Model((*engine.UserPerson)(nil)).Where("user_key = ?", householdKey(c, from)).Exists(ctx)
		if err != nil {
			return false, persons, regs, err
		}
		if exists {
			continue
		}
		err = engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			p, r, err := seedHouseholds(ctx, tx, &setup, c, from, min(from+batch, c.households), now)
			persons += p
			regs += r
			return err
		})
		if err != nil {
			return false, persons, regs, err
		}
	}
	return true, persons, regs, nil
}

// householdKey is the user key of a club's household h.
func householdKey(c fedClub, h int) string { return fmt.Sprintf("%s-%d", c.slug, h) }

// clubSetupOf reads back the setup of a club that exists (org 0 when it does not).
func clubSetupOf(ctx context.Context, tx bun.Tx, c fedClub) (clubSetup, error) {
	var s clubSetup
	var org engine.Organisation
	if err := tx.NewSelect().Model(&org).Where("slug = ?", c.slug).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return s, nil
		}
		return s, fmt.Errorf("organisation: %w", err)
	}
	s.org = org.ID
	var periods []engine.MembershipPeriod
	if err := tx.NewSelect().Model(&periods).Where("organisation_id = ?", s.org).Order("start_date DESC").Scan(ctx); err != nil || len(periods) != 2 {
		return s, fmt.Errorf("periods of %s: %d, %v", c.slug, len(periods), err)
	}
	s.current, s.old = periods[0], periods[1]
	var types []engine.MembershipType
	if err := tx.NewSelect().Model(&types).Where("organisation_id = ?", s.org).Order("id").Scan(ctx); err != nil || len(types) != 2 {
		return s, fmt.Errorf("membership types of %s: %d, %v", c.slug, len(types), err)
	}
	s.adult, s.youth = types[0], types[1]
	s.rules = map[int64][]engine.PriceRule{}
	for _, p := range periods {
		var rs []engine.PriceRule
		if err := tx.NewSelect().Model(&rs).Where("period_id = ?", p.ID).Order("id").Scan(ctx); err != nil {
			return s, fmt.Errorf("price rules: %w", err)
		}
		s.rules[p.ID] = rs
	}
	return s, nil
}

// seedClubSetup adds the club, its two seasons (last one closed, this one
// open), its membership types and each season's price rules.
func seedClubSetup(ctx context.Context, tx bun.Tx, n int, c fedClub, now time.Time) (clubSetup, error) {
	var s clubSetup
	org := &engine.Organisation{Name: fmt.Sprintf("Federation Club %03d", n), Slug: c.slug, DefaultLanguage: "en",
		ContactEmail: "office@" + c.slug + ".example"}
	if _, err := tx.NewInsert().Model(org).Exec(ctx); err != nil {
		return s, fmt.Errorf("organisation: %w", err)
	}
	s.org = org.ID
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, -1)
	s.current = engine.MembershipPeriod{OrganisationID: s.org, Name: fmt.Sprintf("Season %d/%d", start.Year(), end.Year()),
		NameTexts: seasonTexts(start.Year(), end.Year()), StartDate: start, EndDate: end, Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"}
	s.old = engine.MembershipPeriod{OrganisationID: s.org, Name: fmt.Sprintf("Season %d/%d", start.Year()-1, end.Year()-1),
		NameTexts: seasonTexts(start.Year()-1, end.Year()-1), StartDate: start.AddDate(-1, 0, 0), EndDate: start.AddDate(0, 0, -1), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"}
	s.adult = engine.MembershipType{OrganisationID: s.org, Code: "ADULT", Name: "Adult", NameTexts: demodata.DemoTexts("Adult", "Erwachsene", "Adulte"), MinAge: new(18)}
	s.youth = engine.MembershipType{OrganisationID: s.org, Code: "JUNIOR", Name: "Junior", NameTexts: demodata.DemoTexts("Junior", "Jugend", "Junior"), MaxAge: new(17)}
	for _, r := range []any{&s.current, &s.old, &s.adult, &s.youth} {
		if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
			return s, fmt.Errorf("seed %T: %w", r, err)
		}
	}
	fee := int64(9000 + 500*(n%7))
	rules := func(period engine.MembershipPeriod, full bool) []engine.PriceRule {
		rs := []engine.PriceRule{
			{PeriodID: period.ID, Code: "adult-fee", Kind: engine.RuleMembershipFee, Label: "Adult membership", LabelTexts: demodata.DemoTexts("Adult membership", "Mitgliedschaft Erwachsene", "Cotisation adulte"), MembershipTypeID: &s.adult.ID, AmountMinor: ptr(fee)},
			{PeriodID: period.ID, Code: "junior-fee", Kind: engine.RuleMembershipFee, Label: "Junior membership", LabelTexts: demodata.DemoTexts("Junior membership", "Mitgliedschaft Jugend", "Cotisation junior"), MembershipTypeID: &s.youth.ID, AmountMinor: ptr(fee / 2)},
			{PeriodID: period.ID, Code: "admin-fee", Kind: engine.RuleAdminFee, Label: "Administration fee", LabelTexts: demodata.DemoTexts("Administration fee", "Bearbeitungsgebühr", "Frais administratifs"), AmountMinor: new(int64(250))},
		}
		if full {
			rs = append(rs,
				engine.PriceRule{PeriodID: period.ID, Code: "joining-fee", Kind: engine.RuleMemberType, Label: "Joining fee (new member)", LabelTexts: demodata.DemoTexts("Joining fee (new member)", "Eintrittsgebühr (neues Mitglied)", "Droit d'entrée (nouveau membre)"), MemberType: new(engine.MemberNew), AmountMinor: new(int64(1500))},
				engine.PriceRule{PeriodID: period.ID, Code: "loyalty", Kind: engine.RuleMemberType, Label: "Loyalty discount (renewal)", LabelTexts: demodata.DemoTexts("Loyalty discount (renewal)", "Treuerabatt (Verlängerung)", "Remise de fidélité (renouvellement)"), MemberType: new(engine.MemberRenewal), AmountMinor: new(int64(-1000))},
				engine.PriceRule{PeriodID: period.ID, Code: "family", Kind: engine.RuleFamily, Label: "Family discount 15% (3 or more)", LabelTexts: demodata.DemoTexts("Family discount 15% (3 or more)", "Familienrabatt 15 % (ab 3 Personen)", "Remise famille 15 % (3 personnes ou plus)"), MinPersons: new(3), PercentBP: new(-1500)})
		}
		return rs
	}
	s.rules = map[int64][]engine.PriceRule{s.current.ID: rules(s.current, true), s.old.ID: rules(s.old, false)}
	for _, rs := range s.rules {
		if _, err := tx.NewInsert().Model(&rs).Exec(ctx); err != nil {
			return s, fmt.Errorf("price rules: %w", err)
		}
	}
	return s, nil
}

// clubPaymentSettings gives the big club its own account for bank
// transfers and the debit club its creditor id, as staff set them.
func clubPaymentSettings(ctx context.Context, db *bun.DB, org int64, c fedClub) error {
	name := "Federation Club " + strings.TrimPrefix(c.slug, "fed-")
	var ch settings.PaymentSettingsChange
	switch c.provider {
	case payment.BankTransferProvider:
		ch = settings.PaymentSettingsChange{BankCreditorName: &name, BankIBAN: new(CreditorIBAN), Methods: &[]string{payment.BankTransferProvider}}
	case payment.DirectDebitProvider:
		ch = settings.PaymentSettingsChange{BankCreditorName: &name, BankIBAN: new(DebitIBAN),
			Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider}, DebitCreditorID: new(CreditorID)}
	default:
		return nil
	}
	_, err := settings.Of(engine.NewService(db, nil)).SetPaymentSettings(ctx, org, ch)
	return err
}

// registrationState is what household h of a club did in the current
// season: a tenth each not yet started, in progress, suspended and
// cancelled, two tenths awaiting payment, four paid. The debit club's
// households all await their collection.
func registrationState(c fedClub, h int) engine.ProcessState {
	if c.provider == payment.DirectDebitProvider {
		return engine.StateDone
	}
	return [...]engine.ProcessState{engine.StateCompleted, engine.StateCompleted, engine.StateDone, engine.StateCompleted,
		engine.StateRunning, engine.StateDone, engine.StateCompleted, engine.StateSuspended, engine.StateCancelled, engine.StateNone}[h%10]
}

// fedRegistration is one registration being built: its instance, the
// household's persons, and its order.
type fedRegistration struct {
	inst    engine.ProcessInstance
	persons []engine.Person
	period  *engine.MembershipPeriod
	renewal bool
	order   *engine.Order
	mandate *directdebit.DebitMandate
}

// seedHouseholds adds households [from, to) of a club with their
// registrations of both seasons.
func seedHouseholds(ctx context.Context, tx bun.Tx, s *clubSetup, c fedClub, from, to int, now time.Time) (persons, regs int, err error) {
	var all []engine.Person
	keys := make([]string, 0, to-from)
	sizes := make([]int, 0, to-from)
	for h := from; h < to; h++ {
		key := householdKey(c, h)
		size := 1 + h%3
		if c.provider == payment.DirectDebitProvider {
			size = 1
		}
		keys, sizes = append(keys, key), append(sizes, size)
		family := fmt.Sprintf("%s %d", familyNames[h%len(familyNames)], h)
		for j := range size {
			all = append(all, engine.Person{OrganisationID: s.org, FirstName: firstNames[(h+j*3)%len(firstNames)], LastName: family,
				DateOfBirth: birthDate(h, j), Email: key + "@example.org", CreatedAt: now.AddDate(-1, 0, -h%60)})
		}
	}
	if _, err := tx.NewInsert().Model(&all).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("persons: %w", err)
	}
	links := make([]engine.UserPerson, len(all))
	household := make([][]engine.Person, len(keys))
	for i, k := 0, 0; i < len(keys); i++ {
		household[i] = all[k : k+sizes[i]]
		for _, p := range household[i] {
			links[k] = engine.UserPerson{UserKey: keys[i], PersonID: p.ID, OrganisationID: s.org}
			k++
		}
	}
	if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("links: %w", err)
	}
	var mandates []directdebit.DebitMandate
	if c.provider == payment.DirectDebitProvider {
		mandates = make([]directdebit.DebitMandate, len(keys))
		for i, key := range keys {
			ref := fmt.Sprintf("FED-%s-%06d", strings.ToUpper(c.slug), from+i)
			text, version := directdebit.MandateText("en", directdebit.MandateTerms{CreditorName: "Federation Club 002", CreditorID: CreditorID, Reference: ref})
			mandates[i] = directdebit.DebitMandate{OrganisationID: s.org, UserKey: key, CreditorID: CreditorID, Reference: ref,
				Holder: household[i][0].FirstName + " " + household[i][0].LastName, IBAN: DebitIBAN, Language: "en", Text: text, TextVersion: version,
				SignedAt: now.AddDate(0, 0, -10-i%20)}
		}
		if _, err := tx.NewInsert().Model(&mandates).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("mandates: %w", err)
		}
	}
	// Registrations: last season's (four in five households, paid) and
	// this season's (registrationState).
	var rs []*fedRegistration
	for i, key := range keys {
		h := from + i
		hadLast := h%5 != 4 && c.provider != payment.DirectDebitProvider
		if hadLast {
			at := s.old.StartDate.Add(time.Duration(h%(30*24)) * time.Hour)
			rs = append(rs, &fedRegistration{persons: household[i], period: &s.old, inst: engine.ProcessInstance{
				DefinitionID: s.def.ID, DefinitionKey: s.def.Key, Status: engine.StateCompleted, StartTime: at, EndTime: new(at.Add(20 * time.Minute)),
				RelatedEntityType: engine.EntityMembership, RelatedEntityID: s.old.ID, OrganisationID: s.org, UserKey: key, UpdatedAt: at.Add(time.Hour), Version: 8}})
		}
		state := registrationState(c, h)
		if state == engine.StateNone {
			continue
		}
		at := now.Add(-time.Duration(h%(30*24)) * time.Hour).Add(-time.Duration(h%60) * time.Minute)
		r := &fedRegistration{persons: household[i], period: &s.current, renewal: hadLast, inst: engine.ProcessInstance{
			DefinitionID: s.def.ID, DefinitionKey: s.def.Key, Status: state, StartTime: at,
			RelatedEntityType: engine.EntityMembership, RelatedEntityID: s.current.ID, OrganisationID: s.org, UserKey: key, UpdatedAt: at.Add(15 * time.Minute), Version: 4}}
		if state == engine.StateDone || state == engine.StateCompleted || state == engine.StateCancelled {
			r.inst.EndTime, r.inst.Version = new(at.Add(15*time.Minute)), 8
		}
		if mandates != nil {
			r.mandate = &mandates[i]
		}
		rs = append(rs, r)
	}
	insts := make([]engine.ProcessInstance, len(rs))
	for i, r := range rs {
		r.inst.SelectedPersons = make([]int64, len(r.persons))
		for j, p := range r.persons {
			r.inst.SelectedPersons[j] = p.ID
		}
		insts[i] = r.inst
	}
	if _, err := tx.NewInsert().Model(&insts).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("registrations: %w", err)
	}
	for i := range rs {
		rs[i].inst.ID = insts[i].ID
	}
	if err := seedOrders(ctx, tx, s, c, rs, now); err != nil {
		return 0, 0, err
	}
	return len(all), len(rs), nil
}

// seedOrders adds the committed registrations' orders with their price
// lines, memberships, payment attempts and the payments' events.
func seedOrders(ctx context.Context, tx bun.Tx, s *clubSetup, c fedClub, rs []*fedRegistration, now time.Time) error {
	var orders []engine.Order
	var committed []*fedRegistration
	var memberships []engine.Membership
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for _, r := range rs {
		if r.inst.Status != engine.StateDone && r.inst.Status != engine.StateCompleted && r.inst.Status != engine.StateCancelled {
			continue
		}
		memberType := engine.MemberNew
		if r.renewal {
			memberType = engine.MemberRenewal
		}
		people := make([]registration.PricedPerson, len(r.persons))
		for j, p := range r.persons {
			t := &s.adult
			if definition.AgeAt(p.DateOfBirth, r.period.StartDate) < 18 {
				t = &s.youth
			}
			people[j] = registration.PricedPerson{Person: p, Type: t, MemberType: memberType}
		}
		at := *r.inst.EndTime
		q, err := registration.PriceRegistration(r.period, nil, people, s.rules[r.period.ID], at)
		if err != nil {
			return fmt.Errorf("price registration of %s: %w", r.inst.UserKey, err)
		}
		o := engine.Order{ProcessInstanceID: r.inst.ID, OrganisationID: s.org, PeriodID: r.period.ID, UserKey: r.inst.UserKey,
			TotalMinor: q.TotalMinor, Currency: q.Currency, CreatedAt: at, PayReference: engine.NewReference("PO-"), PaymentMethod: c.provider}
		ms := engine.MembershipPending
		switch r.inst.Status {
		case engine.StateDone:
			o.Status = engine.OrderUnpaid
		case engine.StateCompleted:
			o.Status, o.PaidAt, ms = engine.OrderPaid, new(at.Add(10*time.Minute)), engine.MembershipActive
		case engine.StateCancelled:
			o.Status, ms = engine.OrderCancelled, engine.MembershipCancelled
		}
		if r.mandate != nil {
			o.DebitMandateID, o.DebitDueOn = &r.mandate.ID, &today
		}
		o.Lines = make([]engine.OrderLine, len(q.Lines))
		for j, l := range q.Lines {
			o.Lines[j] = engine.OrderLine{LineNo: j + 1, PersonID: l.PersonID, Kind: l.Kind, Code: l.Code, Description: l.Description, AmountMinor: l.AmountMinor, Currency: q.Currency}
		}
		for _, pp := range people {
			m := engine.Membership{PersonID: pp.Person.ID, PeriodID: r.period.ID, MembershipTypeID: pp.Type.ID, MemberType: pp.MemberType,
				Status: ms, ProcessInstanceID: &r.inst.ID, CreatedAt: at}
			if ms == engine.MembershipActive {
				m.ActivatedAt = o.PaidAt
			}
			memberships = append(memberships, m)
		}
		orders = append(orders, o)
		committed = append(committed, r)
	}
	if len(orders) == 0 {
		return nil
	}
	if _, err := tx.NewInsert().Model(&orders).Exec(ctx); err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	var lines []engine.OrderLine
	var pays []engine.Payment
	var events []engine.PaymentEvent
	for i := range orders {
		o := &orders[i]
		committed[i].order = o
		for _, l := range o.Lines {
			l.OrderID = o.ID
			lines = append(lines, l)
		}
		p, ev := attemptOf(o, c, now)
		if p != nil {
			pays = append(pays, *p)
		}
		if ev != nil {
			events = append(events, *ev)
		}
	}
	if _, err := tx.NewInsert().Model(&memberships).Exec(ctx); err != nil {
		return fmt.Errorf("memberships: %w", err)
	}
	if _, err := tx.NewInsert().Model(&lines).Exec(ctx); err != nil {
		return fmt.Errorf("order lines: %w", err)
	}
	if len(pays) > 0 {
		if _, err := tx.NewInsert().Model(&pays).Exec(ctx); err != nil {
			return fmt.Errorf("payments: %w", err)
		}
	}
	if len(events) > 0 {
		if _, err := tx.NewInsert().Model(&events).Exec(ctx); err != nil {
			return fmt.Errorf("payment events: %w", err)
		}
	}
	return nil
}

// attemptOf is the payment attempt an order has, as the engine opens it:
// a paid order's succeeded attempt and the provider's event that settled
// it; an unpaid bank-transfer order's open transfer (its RF reference); a
// direct-debit order's pending debit. Others' unpaid orders have none yet
// (the member has not followed the pay link), nor have cancelled ones.
func attemptOf(o *engine.Order, c fedClub, now time.Time) (*engine.Payment, *engine.PaymentEvent) {
	provider := c.provider
	if provider == "" {
		provider = payment.TestGatewayProvider
	}
	p := &engine.Payment{OrderID: o.ID, Provider: provider, Reference: engine.NewReference("PR-"), AmountMinor: o.TotalMinor,
		Currency: o.Currency, PaymentURL: "/pay/" + o.PayReference, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt}
	if provider == payment.BankTransferProvider {
		rf, err := banking.CreditorReference(o.PayReference)
		if err == nil {
			p.ProviderID = ptr(string(rf))
		}
	}
	switch o.Status {
	case engine.OrderUnpaid:
		if provider == payment.TestGatewayProvider {
			return nil, nil
		}
		p.Status = engine.PaymentPending
		return p, nil
	case engine.OrderPaid:
		p.Status, p.UpdatedAt = engine.PaymentSucceeded, *o.PaidAt
		tx := "TX-" + strings.TrimPrefix(p.Reference, "PR-")
		p.TransactionID = &tx
		eventType := "test.return"
		if provider == payment.BankTransferProvider {
			eventType = payment.BankCaptureEvent
		}
		amount, currency := o.TotalMinor, o.Currency
		return p, &engine.PaymentEvent{Provider: provider, EventID: &tx, EventType: eventType, Reference: p.Reference, Outcome: engine.OutcomeSuccess,
			AmountMinor: &amount, Currency: &currency, CreatedAt: *o.PaidAt}
	}
	return nil, nil
}

// seasonTexts name a season in each language, as the demo's.
func seasonTexts(from, to int) engine.Texts {
	return demodata.DemoTexts(fmt.Sprintf("Season %d/%d", from, to), fmt.Sprintf("Saison %d/%d", from, to), fmt.Sprintf("Saison %d/%d", from, to))
}

// ptr is a pointer to a copy of v (staticcheck v0.6.1 does not read Go
// 1.26's new(expr) of a variable as a use of it).
func ptr[T any](v T) *T { return &v }
