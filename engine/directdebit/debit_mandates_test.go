package directdebit_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
)

// TestGiveMandate: a direct-debit order's member gives the mandate; an
// invalid IBAN, an account outside SEPA, a bad BIC and a missing consent
// are each named by their field and store nothing; a valid mandate gets a
// reference of the allowed set, unique per creditor, and its text in the
// registration's language with every element the rulebook requires.
func TestGiveMandate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 5)
		commitDebit := func() engine.Order { return f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin) }
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
			_, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, tc.in)
			if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, tc.fields) {
				t.Errorf("%s: fields %v, want %v", tc.name, got, tc.fields)
			}
		}
		if n, err := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(f.Ctx); err != nil || n != 0 {
			t.Fatalf("mandates after refusals: %d %v", n, err)
		}
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "de89 3704 0044 0532 0130 00",
			BIC: "cobadeffxxx", Consent: true, Language: "de"})
		if err != nil {
			t.Fatal(err)
		}
		if err := banking.CheckMandateReference(m.Reference); err != nil || len(m.Reference) > 35 || m.IBAN != enginetest.DemoIBAN || m.BIC != "COBADEFFXXX" {
			t.Fatalf("mandate %+v: %v", m, err)
		}
		for _, want := range []string{"TV Demo 1848 e.V.", enginetest.TestCreditorID, m.Reference, "Ich ermächtige", "Kreditinstitut an", "acht Wochen", "5 Kalendertage"} {
			if !strings.Contains(m.Text, want) {
				t.Errorf("mandate text lacks %q: %s", want, m.Text)
			}
		}
		if m.Language != "de" || m.TextVersion != directdebit.MandateTextVersion || m.SignedAt.IsZero() {
			t.Fatalf("mandate %+v", m)
		}
		page, err := directdebit.Of(f.Svc).DebitPageFor(f.Ctx, order.PayReference)
		if err != nil || page.Mandate == nil || page.Mandate.ID != m.ID || page.Terms.CreditorID != enginetest.TestCreditorID {
			t.Fatalf("debit page %+v %v", page, err)
		}
		if _, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "A", IBAN: enginetest.DemoIBAN, Consent: true}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a second mandate for the order: %v", err)
		}
		en, _ := directdebit.MandateText("en", directdebit.MandateTerms{CreditorName: "C", CreditorID: enginetest.TestCreditorID, Reference: "R-1", PrenotificationDays: 14})
		fr, _ := directdebit.MandateText("fr", directdebit.MandateTerms{CreditorName: "C", CreditorID: enginetest.TestCreditorID, Reference: "R-1", PrenotificationDays: 14})
		if !strings.Contains(en, "eight weeks") || !strings.Contains(en, "authorise (A)") || strings.Contains(en, "calendar days") ||
			!strings.Contains(fr, "huit semaines") || !strings.Contains(fr, "R-1") {
			t.Fatalf("texts:\n%s\n%s", en, fr)
		}
	})
}

// TestMandateOutsideEEANeedsBIC: the EPC rulebook asks for the debtor's
// BIC when the account is in a SEPA country outside the EEA (CH, GB, MC,
// ...): a mandate (or a change of its account) without one is refused at
// the BIC field and nothing is stored; with the BIC it is given.
func TestMandateOutsideEEANeedsBIC(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.DirectDebitFixture(t, db, 0)
		order := f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		for _, iban := range []string{"CH93 0076 2011 6238 5295 7", "GB29 NWBK 6016 1331 9268 19"} {
			_, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: iban, Consent: true, Language: "en"})
			if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, []string{"bic"}) {
				t.Errorf("%s without a BIC: fields %v (%v), want bic", iban, got, err)
			}
		}
		if n, err := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(f.Ctx); err != nil || n != 0 {
			t.Fatalf("mandates after refusals: %d %v", n, err)
		}
		if o := f.Orders(order.ProcessInstanceID)[0]; o.DebitMandateID != nil || o.DebitDueOn != nil {
			t.Fatalf("a refused mandate linked the order: %+v", o)
		}
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: "CH93 0076 2011 6238 5295 7",
			BIC: "UBSWCHZH80A", Consent: true, Language: "en"})
		if err != nil || m.IBAN != "CH9300762011623852957" || m.BIC != "UBSWCHZH80A" {
			t.Fatalf("mandate with its BIC: %+v %v", m, err)
		}
		// Changing the account to another outside the EEA asks for its BIC too.
		_, err = directdebit.Of(f.Svc).AmendMandate(f.Ctx, order.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example",
			IBAN: "GB29 NWBK 6016 1331 9268 19", Consent: true, Language: "en"})
		if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, []string{"bic"}) {
			t.Fatalf("account change to GB without a BIC: fields %v (%v), want bic", got, err)
		}
		var stored directdebit.DebitMandate
		if err := db.NewSelect().Model(&stored).Where("id = ?", m.ID).Scan(f.Ctx); err != nil || stored.IBAN != m.IBAN || stored.BIC != m.BIC || stored.PreviousIBAN != "" {
			t.Fatalf("a refused change was stored: %+v %v", stored, err)
		}
	})
}
