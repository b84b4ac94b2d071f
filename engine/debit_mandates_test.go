package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/registration"
)

// TestGiveMandate: a direct-debit order's member gives the mandate; an
// invalid IBAN, an account outside SEPA, a bad BIC and a missing consent
// are each named by their field and store nothing; a valid mandate gets a
// reference of the allowed set, unique per creditor, and its text in the
// registration's language with every element the rulebook requires.
func TestGiveMandate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := directDebitFixture(t, db, 5)
		commitDebit := func() engine.Order { return f.commitDirectDebit(engine.DemoUserKey, alex, robin) }
		order := commitDebit()
		for _, tc := range []struct {
			name   string
			in     directdebit.MandateInput
			fields []string
		}{
			{"bad check digits", directdebit.MandateInput{Holder: "Alex Example", IBAN: "DE00 3704 0044 0532 0130 00", Consent: true}, []string{"iban"}},
			{"not a SEPA country", directdebit.MandateInput{Holder: "Alex Example", IBAN: "BR15 0000 0000 0000 1093 2840 814P 2", Consent: true}, []string{"iban"}},
			{"no consent", directdebit.MandateInput{Holder: "Alex Example", IBAN: "DE89 3704 0044 0532 0130 00"}, []string{"consent"}},
			{"no holder, bad BIC", directdebit.MandateInput{IBAN: "DE89 3704 0044 0532 0130 00", BIC: "NOPE", Consent: true}, []string{"holder", "bic"}},
		} {
			_, err := directdebit.Of(f.svc).GiveMandate(f.ctx, order.PayReference, tc.in)
			if got := fieldsOf(t, err); !equalStrings(got, tc.fields) {
				t.Errorf("%s: fields %v, want %v", tc.name, got, tc.fields)
			}
		}
		if n, err := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(f.ctx); err != nil || n != 0 {
			t.Fatalf("mandates after refusals: %d %v", n, err)
		}
		m, err := directdebit.Of(f.svc).GiveMandate(f.ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "de89 3704 0044 0532 0130 00",
			BIC: "cobadeffxxx", Consent: true, Language: "de"})
		if err != nil {
			t.Fatal(err)
		}
		if err := banking.CheckMandateReference(m.Reference); err != nil || len(m.Reference) > 35 || m.IBAN != demoIBAN || m.BIC != "COBADEFFXXX" {
			t.Fatalf("mandate %+v: %v", m, err)
		}
		for _, want := range []string{"TV Demo 1848 e.V.", testCreditorID, m.Reference, "Ich ermächtige", "Kreditinstitut an", "acht Wochen", "5 Kalendertage"} {
			if !strings.Contains(m.Text, want) {
				t.Errorf("mandate text lacks %q: %s", want, m.Text)
			}
		}
		if m.Language != "de" || m.TextVersion != directdebit.MandateTextVersion || m.SignedAt.IsZero() {
			t.Fatalf("mandate %+v", m)
		}
		page, err := directdebit.Of(f.svc).DebitPageFor(f.ctx, order.PayReference)
		if err != nil || page.Mandate == nil || page.Mandate.ID != m.ID || page.Terms.CreditorID != testCreditorID {
			t.Fatalf("debit page %+v %v", page, err)
		}
		if _, err := directdebit.Of(f.svc).GiveMandate(f.ctx, order.PayReference, directdebit.MandateInput{Holder: "A", IBAN: demoIBAN, Consent: true}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a second mandate for the order: %v", err)
		}
		en, _ := directdebit.MandateText("en", directdebit.MandateTerms{CreditorName: "C", CreditorID: testCreditorID, Reference: "R-1", PrenotificationDays: 14})
		fr, _ := directdebit.MandateText("fr", directdebit.MandateTerms{CreditorName: "C", CreditorID: testCreditorID, Reference: "R-1", PrenotificationDays: 14})
		if !strings.Contains(en, "eight weeks") || !strings.Contains(en, "authorise (A)") || strings.Contains(en, "calendar days") ||
			!strings.Contains(fr, "huit semaines") || !strings.Contains(fr, "R-1") {
			t.Fatalf("texts:\n%s\n%s", en, fr)
		}
	})
}

func intp(n int) *int { return &n }

// directDebitClub is the service of a seeded database whose club 1
// offers direct debit beside bank transfer (dd, a stand-in provider named
// direct_debit), with its account and Creditor Identifier.
func directDebitClub(tb testing.TB, db *bun.DB, opts ...engine.ServiceOption) (svc *engine.Service, dd namedFake) {
	tb.Helper()
	dd = namedFake{&fakeProvider{retrieve: map[string]engine.PaymentConfirmation{}}, payment.DirectDebitProvider}
	svc = engine.NewService(db, &fakeProvider{retrieve: map[string]engine.PaymentConfirmation{}}, append(opts,
		payment.WithPaymentMethodProviders(func(_ int64, m string) engine.PaymentProvider {
			if m == payment.DirectDebitProvider {
				return dd
			}
			return nil
		}))...)
	if _, err := settings.Of(svc).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{BankCreditorName: str("TV Demo 1848 e.V."),
		BankIBAN: str(demoIBAN), Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider}, DebitCreditorID: str(testCreditorID)}); err != nil {
		tb.Fatal(err)
	}
	return svc, dd
}

// directDebitFixture is the demo database (two households) of
// directDebitClub, with a pre-notification period of prenotificationDays
// (0: the default).
func directDebitFixture(t *testing.T, db *bun.DB, prenotificationDays int, opts ...engine.ServiceOption) *fixture {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 2, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	svc, _ := directDebitClub(t, db, opts...)
	f := &fixture{t: t, ctx: context.Background(), db: db, svc: svc}
	if prenotificationDays > 0 {
		if _, err := settings.Of(f.svc).SetPaymentSettings(f.ctx, 1, settings.PaymentSettingsChange{DebitPrenotificationDays: intp(prenotificationDays)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// commitDirectDebit registers persons of a household to the review and
// commits choosing direct debit: the unpaid order.
func (f *fixture) commitDirectDebit(userKey string, persons ...int64) engine.Order {
	f.t.Helper()
	r := f.start(userKey, persons...)
	last := r.advanceTo(demoSteps)
	if _, err := registration.Of(f.svc).Next(f.ctx, r.userKey, registration.NextInput{ProcessID: r.pid, Step: last.Step, People: demoAnswers(last.Step, r.persons),
		PaymentMethod: "direct_debit"}); err != nil {
		f.t.Fatal(err)
	}
	return f.orders(r.id)[0]
}

// TestMandateOutsideEEANeedsBIC: the EPC rulebook asks for the debtor's
// BIC when the account is in a SEPA country outside the EEA (CH, GB, MC,
// ...): a mandate (or a change of its account) without one is refused at
// the BIC field and nothing is stored; with the BIC it is given.
func TestMandateOutsideEEANeedsBIC(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := directDebitFixture(t, db, 0)
		order := f.commitDirectDebit(engine.DemoUserKey, alex, robin)
		for _, iban := range []string{"CH93 0076 2011 6238 5295 7", "GB29 NWBK 6016 1331 9268 19"} {
			_, err := directdebit.Of(f.svc).GiveMandate(f.ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: iban, Consent: true, Language: "en"})
			if got := fieldsOf(t, err); !equalStrings(got, []string{"bic"}) {
				t.Errorf("%s without a BIC: fields %v (%v), want bic", iban, got, err)
			}
		}
		if n, err := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(f.ctx); err != nil || n != 0 {
			t.Fatalf("mandates after refusals: %d %v", n, err)
		}
		if o := f.orders(order.ProcessInstanceID)[0]; o.DebitMandateID != nil || o.DebitDueOn != nil {
			t.Fatalf("a refused mandate linked the order: %+v", o)
		}
		m, err := directdebit.Of(f.svc).GiveMandate(f.ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "CH93 0076 2011 6238 5295 7",
			BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
		if err != nil || m.IBAN != "CH9300762011623852957" || m.BIC != "UBSWCHZH80A" {
			t.Fatalf("mandate with its BIC: %+v %v", m, err)
		}
		// Changing the account to another outside the EEA asks for its BIC too.
		_, err = directdebit.Of(f.svc).AmendMandate(f.ctx, order.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example",
			IBAN: "GB29 NWBK 6016 1331 9268 19", Consent: true, Language: "en"})
		if got := fieldsOf(t, err); !equalStrings(got, []string{"bic"}) {
			t.Fatalf("account change to GB without a BIC: fields %v (%v), want bic", got, err)
		}
		var stored directdebit.DebitMandate
		if err := db.NewSelect().Model(&stored).Where("id = ?", m.ID).Scan(f.ctx); err != nil || stored.IBAN != m.IBAN || stored.BIC != m.BIC || stored.PreviousIBAN != "" {
			t.Fatalf("a refused change was stored: %+v %v", stored, err)
		}
	})
}
