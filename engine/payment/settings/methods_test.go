package settings_test

import (
	"testing"
	"time"

	"portal/engine/payment/settings"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/registration"
)

// TestPaymentMethodSettingsChecked: the methods and direct-debit settings
// are checked as a whole, each problem named by its field, nothing
// changed; a valid list makes its first method the provider; a provider
// set alone (a client that knows no methods) moves to the front or
// becomes the only method.
func TestPaymentMethodSettingsChecked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, _ := enginetest.OnlineFixture(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		bank := settings.PaymentSettingsChange{BankCreditorName: enginetest.Str("TV Demo 1848 e.V."), BankIBAN: enginetest.Str(enginetest.DemoIBAN)}
		with := func(c settings.PaymentSettingsChange) settings.PaymentSettingsChange {
			c.BankCreditorName, c.BankIBAN = bank.BankCreditorName, bank.BankIBAN
			return c
		}
		list := func(m ...string) *[]string { return &m }
		days := func(n int) *int { return &n }
		for _, tc := range []struct {
			name   string
			change settings.PaymentSettingsChange
			fields []string
		}{
			{"unknown method", with(settings.PaymentSettingsChange{Methods: list("bank_transfer", "paypal")}), []string{"methods"}},
			{"a method twice", with(settings.PaymentSettingsChange{Methods: list("bank_transfer", "bank_transfer")}), []string{"methods"}},
			{"direct debit without creditor identifier", with(settings.PaymentSettingsChange{Methods: list("bank_transfer", "direct_debit")}), []string{"debitCreditorId"}},
			{"direct debit without an account", settings.PaymentSettingsChange{Methods: list("bank_transfer", "direct_debit"), DebitCreditorID: enginetest.Str(enginetest.TestCreditorID)}, []string{"bankCreditorName", "bankIban"}},
			{"direct debit as the only method without creditor identifier", with(settings.PaymentSettingsChange{Methods: list("direct_debit")}), []string{"debitCreditorId"}},
			{"invalid creditor identifier", with(settings.PaymentSettingsChange{Methods: list("bank_transfer", "direct_debit"), DebitCreditorID: enginetest.Str("DE97ZZZ09999999999")}),
				[]string{"debitCreditorId"}},
			{"stripe among the methods without keys", with(settings.PaymentSettingsChange{Methods: list("bank_transfer", "stripe")}),
				[]string{"stripeSecretKey", "stripeWebhookSecret"}},
			{"pre-notification too long", with(settings.PaymentSettingsChange{DebitPrenotificationDays: days(15)}), []string{"debitPrenotificationDays"}},
			{"pre-notification zero", with(settings.PaymentSettingsChange{DebitPrenotificationDays: days(0)}), []string{"debitPrenotificationDays"}},
			{"unknown file version", with(settings.PaymentSettingsChange{DebitFileVersion: enginetest.Str("pain.008.003.02")}), []string{"debitFileVersion"}},
			{"provider not the first method", with(settings.PaymentSettingsChange{Provider: enginetest.Str("direct_debit"), Methods: list("bank_transfer", "direct_debit"),
				DebitCreditorID: enginetest.Str(enginetest.TestCreditorID)}), []string{"provider"}},
		} {
			_, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, tc.change)
			if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, tc.fields) {
				t.Errorf("%s: fields %v, want %v", tc.name, got, tc.fields)
			}
		}
		if v, err := settings.Of(f.Svc).PaymentSettings(f.Ctx, 1); err != nil || v.UpdatedAt != nil || len(v.Methods) != 0 ||
			v.DebitPrenotificationDays != 14 || v.DebitFileVersion != payment.DebitFileV08 {
			t.Fatalf("after refused changes: %+v %v, want nothing stored and the defaults", v, err)
		}
		if m, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, engine.DemoPeriodID); err != nil || !enginetest.EqualStrings(m, []string{"fake"}) {
			t.Fatalf("methods without settings: %v %v, want the environment's provider", m, err)
		}

		v, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, with(settings.PaymentSettingsChange{Methods: list("bank_transfer", " direct_debit "),
			DebitCreditorID: enginetest.Str("de98 zzz0 9999 9999 99"), DebitPrenotificationDays: days(5), DebitFileVersion: enginetest.Str(payment.DebitFileV02)}))
		if err != nil {
			t.Fatal(err)
		}
		if v.Provider != "bank_transfer" || !enginetest.EqualStrings(v.Methods, []string{"bank_transfer", "direct_debit"}) || v.DebitCreditorID != enginetest.TestCreditorID ||
			v.DebitPrenotificationDays != 5 || v.DebitFileVersion != payment.DebitFileV02 {
			t.Fatalf("stored %+v", v)
		}
		if m, _ := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, engine.DemoPeriodID); !enginetest.EqualStrings(m, []string{"bank_transfer", "direct_debit"}) {
			t.Fatalf("methods %v", m)
		}
		// Direct debit may be the default provider (API 3.0.0): it moves to
		// the front, and may be the only method.
		if v, err = settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Provider: enginetest.Str("direct_debit")}); err != nil ||
			v.Provider != "direct_debit" || !enginetest.EqualStrings(v.Methods, []string{"direct_debit", "bank_transfer"}) {
			t.Fatalf("direct debit as the provider: %+v %v", v, err)
		}
		if v, err = settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Methods: list("direct_debit")}); err != nil ||
			v.Provider != "direct_debit" || len(v.Methods) != 1 {
			t.Fatalf("direct debit as the only method: %+v %v", v, err)
		}
		if m, _ := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, engine.DemoPeriodID); !enginetest.EqualStrings(m, []string{"direct_debit"}) {
			t.Fatalf("members are offered %v, want direct debit only", m)
		}
		// One that is not is the only method, as before methods.
		if v, err = settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Provider: enginetest.Str("bank_transfer"), Methods: list()}); err != nil ||
			v.Provider != "bank_transfer" || len(v.Methods) != 1 {
			t.Fatalf("methods cleared: %+v %v", v, err)
		}
		cfgs, err := settings.Of(f.Svc).OrganisationPaymentConfigs(f.Ctx)
		if err != nil || len(cfgs) != 1 || !enginetest.EqualStrings(cfgs[0].Methods, []string{"bank_transfer"}) || cfgs[0].CreditorID != enginetest.TestCreditorID {
			t.Fatalf("configs %+v %v", cfgs, err)
		}
	})
}

// TestMemberChoosesPaymentMethod: the member's method is checked against
// the club's, stored on the order and used for its attempts; a method the
// club does not offer changes nothing; the pay link offers the methods
// again and a new choice closes the open attempt of the old one.
func TestMemberChoosesPaymentMethod(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		byMethod := map[string]enginetest.NamedFake{}
		for _, m := range []string{"bank_transfer", "direct_debit"} {
			byMethod[m] = enginetest.NamedFake{FakeProvider: &enginetest.FakeProvider{Retrievals: map[string]engine.PaymentConfirmation{}}, ProviderName: m}
		}
		f, env := enginetest.OnlineFixture(t, db, payment.WithPaymentProviders(func(org int64) engine.PaymentProvider {
			if org == 1 {
				return byMethod["bank_transfer"]
			}
			return nil
		}), payment.WithPaymentMethodProviders(func(org int64, m string) engine.PaymentProvider {
			if p, ok := byMethod[m]; ok && org == 1 {
				return p
			}
			return nil
		}))
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{BankCreditorName: enginetest.Str("TV Demo 1848 e.V."), BankIBAN: enginetest.Str(enginetest.DemoIBAN),
			Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: enginetest.Str(enginetest.TestCreditorID)}); err != nil {
			t.Fatal(err)
		}

		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		last := r.AdvanceTo(enginetest.DemoSteps)
		in := registration.NextInput{ProcessID: r.PID, Step: last.Step, People: enginetest.DemoAnswers(last.Step, r.Persons), PaymentMethod: "stripe"}
		_, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, in)
		if e, ok := engine.AsError(err); !ok || e.Code != engine.CodeInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "paymentMethod" {
			t.Fatalf("a method the club does not offer: %v, want invalid naming paymentMethod", err)
		}
		if o := f.Orders(r.ID); len(o) != 0 {
			t.Fatalf("orders after a refused method: %d", len(o))
		}
		in.PaymentMethod = "direct_debit"
		var done *registration.Form
		done, err = registration.Of(f.Svc).Next(f.Ctx, r.UserKey, in)
		if err != nil || done.State != engine.StateDone {
			t.Fatalf("commit with direct debit: %v", err)
		}
		order := f.Orders(r.ID)[0]
		if order.PaymentMethod != "direct_debit" {
			t.Fatalf("order's method %q", order.PaymentMethod)
		}
		ps := f.Payments(r.ID)
		if len(ps) != 1 || ps[0].Provider != "direct_debit" || len(byMethod["direct_debit"].Created) != 1 || len(env.Created) != 0 {
			t.Fatalf("attempts %+v; direct debit checkouts %d, environment's %d", ps, len(byMethod["direct_debit"].Created), len(env.Created))
		}

		choice, err := payment.Of(f.Svc).PayLinkMethods(f.Ctx, order.PayReference)
		if err != nil || !enginetest.EqualStrings(choice.Methods, []string{"bank_transfer", "direct_debit"}) || choice.Current != "direct_debit" {
			t.Fatalf("pay link choice %+v %v", choice, err)
		}
		if _, err := payment.Of(f.Svc).ChoosePaymentMethod(f.Ctx, order.PayReference, "paypal"); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("choosing an unknown method: %v", err)
		}
		p, err := payment.Of(f.Svc).ChoosePaymentMethod(f.Ctx, order.PayReference, "bank_transfer")
		if err != nil || p.Provider != "bank_transfer" {
			t.Fatalf("choose bank transfer: %+v %v", p, err)
		}
		if !enginetest.Contains(byMethod["direct_debit"].Expired, ps[0].Reference) {
			t.Fatalf("the direct debit attempt was not closed: %v", byMethod["direct_debit"].Expired)
		}
		ps = f.Payments(r.ID)
		if len(ps) != 2 || ps[0].Status != engine.PaymentCancelled || ps[1].Status != engine.PaymentPending || ps[1].Provider != "bank_transfer" {
			t.Fatalf("attempts after the new choice: %+v", ps)
		}
		if o := f.Orders(r.ID)[0]; o.PaymentMethod != "" {
			t.Fatalf("order's method %q, want \"\" (the default)", o.PaymentMethod)
		}
		// The same choice again keeps the open attempt.
		if again, err := payment.Of(f.Svc).ChoosePaymentMethod(f.Ctx, order.PayReference, "bank_transfer"); err != nil || again.Reference != p.Reference {
			t.Fatalf("same choice again: %+v %v", again, err)
		}

		// A club with one method: no choice, its provider, as before.
		if err := organisation.SeedDemoOrganisations(f.Ctx, db, clock.Now()); err != nil {
			t.Fatal(err)
		}
		if m, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, organisation.DemoSecondOrgID, organisation.DemoSecondPeriodID); err != nil || !enginetest.EqualStrings(m, []string{"bank_transfer"}) {
			t.Fatalf("second club's methods %v %v", m, err)
		}
		if _, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, organisation.DemoSecondPeriodID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("methods of another club's period: %v, want not found", err)
		}
	})
}

// TestDirectDebitOnlyInEuro: SEPA direct debits are in euro. A club whose
// season is in another currency cannot offer direct debit (the settings
// name methods and nothing changes), and a period in another currency
// never offers it to its members: the commit refuses it, naming
// paymentMethod, and commits nothing; the pay link of an order that chose
// it before (a club that offered it before the rule) offers the other
// methods and pays the default way, never a dead end.
func TestDirectDebitOnlyInEuro(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 0) // club 1 offers direct debit; its season is in euro
		// Its season is in Swiss francs now (the demo tennis club's is).
		if _, err := db.NewUpdate().Model((*engine.MembershipPeriod)(nil)).Set("currency = ?", "CHF").
			Where("organisation_id = ? AND status = ?", 1, engine.PeriodOpen).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		before, err := settings.Of(f.Svc).PaymentSettings(f.Ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Methods: &[]string{"bank_transfer", "direct_debit"},
			DebitCreditorID: enginetest.Str(enginetest.TestCreditorID)})
		if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, []string{"methods"}) {
			t.Fatalf("direct debit for a club in CHF: fields %v (%v), want methods", got, err)
		}
		if after, err := settings.Of(f.Svc).PaymentSettings(f.Ctx, 1); err != nil || !after.UpdatedAt.Equal(*before.UpdatedAt) {
			t.Fatalf("a refused change was stored: %+v %v", after, err)
		}
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Methods: &[]string{"bank_transfer"}}); err != nil {
			t.Fatalf("bank transfer alone for a club in CHF: %v", err)
		}
		// Offered before the rule (stored as it was then): the members of
		// the CHF period are not offered it all the same.
		if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("methods = ?", "bank_transfer,direct_debit").
			Where("organisation_id = ?", 1).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if m, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, engine.DemoPeriodID); err != nil || !enginetest.EqualStrings(m, []string{"bank_transfer"}) {
			t.Fatalf("methods of the CHF period: %v %v, want bank transfer alone", m, err)
		}

		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		last := r.AdvanceTo(enginetest.DemoSteps)
		in := registration.NextInput{ProcessID: r.PID, Step: last.Step, People: enginetest.DemoAnswers(last.Step, r.Persons), PaymentMethod: "direct_debit"}
		_, err = registration.Of(f.Svc).Next(f.Ctx, r.UserKey, in)
		if e, ok := engine.AsError(err); !ok || e.Code != engine.CodeInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "paymentMethod" {
			t.Fatalf("direct debit chosen in a CHF period: %v, want invalid naming paymentMethod", err)
		}
		if o := f.Orders(r.ID); len(o) != 0 {
			t.Fatalf("orders after a refused method: %d", len(o))
		}
		in.PaymentMethod = "bank_transfer"
		if done, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, in); err != nil || done.State != engine.StateDone {
			t.Fatalf("commit with bank transfer: %v", err)
		}
		order := f.Orders(r.ID)[0]
		if order.Currency != "CHF" {
			t.Fatalf("order in %s, want CHF", order.Currency)
		}

		// An order that chose direct debit before the rule, its attempt
		// closed: the pay link offers bank transfer and pays by it.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("payment_method = ?", "direct_debit").Where("id = ?", order.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", engine.PaymentCancelled).Where("order_id = ?", order.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		choice, err := payment.Of(f.Svc).PayLinkMethods(f.Ctx, order.PayReference)
		if err != nil || !enginetest.EqualStrings(choice.Methods, []string{"bank_transfer"}) || choice.Current != "bank_transfer" {
			t.Fatalf("pay link of a CHF order: %+v %v, want bank transfer alone", choice, err)
		}
		if _, err := payment.Of(f.Svc).ChoosePaymentMethod(f.Ctx, order.PayReference, "direct_debit"); engine.ErrorCode(err) != engine.CodeInvalid {
			t.Fatalf("direct debit chosen on the pay link of a CHF order: %v, want invalid", err)
		}
		p, err := payment.Of(f.Svc).FollowPayLink(f.Ctx, order.PayReference)
		if err != nil || p.Provider == payment.DirectDebitProvider || p.Currency != "CHF" {
			t.Fatalf("pay link of a CHF order that chose direct debit: %+v %v, want an attempt of the default method", p, err)
		}

		// A club with a season in euro beside may offer it: to that
		// period's members only.
		euro := &engine.MembershipPeriod{OrganisationID: 1, Name: "Summer camp", NameTexts: engine.Texts{"en": "Summer camp"},
			StartDate: time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC), EndDate: time.Date(2027, 8, 31, 0, 0, 0, 0, time.UTC),
			Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"}
		if _, err := db.NewInsert().Model(euro).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{Methods: &[]string{"bank_transfer", "direct_debit"}}); err != nil {
			t.Fatalf("direct debit for a club with a period in euro: %v", err)
		}
		if m, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, euro.ID); err != nil || !enginetest.EqualStrings(m, []string{"bank_transfer", "direct_debit"}) {
			t.Fatalf("methods of the euro period: %v %v", m, err)
		}
		if m, err := payment.Of(f.Svc).PaymentMethods(f.Ctx, 1, engine.DemoPeriodID); err != nil || !enginetest.EqualStrings(m, []string{"bank_transfer"}) {
			t.Fatalf("methods of the CHF period beside it: %v %v", m, err)
		}
	})
}
