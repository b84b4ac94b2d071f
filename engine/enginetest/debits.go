package enginetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/registration"
)

// DirectDebitClub is the service of a seeded database whose club 1
// offers direct debit beside bank transfer (dd, a stand-in provider named
// direct_debit), with its account and Creditor Identifier.
func DirectDebitClub(tb testing.TB, db *bun.DB, opts ...engine.ServiceOption) (svc *engine.Service, dd NamedFake) {
	tb.Helper()
	dd = NamedFake{FakeProvider: &FakeProvider{Retrievals: map[string]engine.PaymentConfirmation{}}, ProviderName: payment.DirectDebitProvider}
	svc = engine.NewService(db, &FakeProvider{Retrievals: map[string]engine.PaymentConfirmation{}}, append(opts,
		payment.WithPaymentMethodProviders(func(_ int64, m string) engine.PaymentProvider {
			if m == payment.DirectDebitProvider {
				return dd
			}
			return nil
		}))...)
	if _, err := settings.Of(svc).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{BankCreditorName: Str("TV Demo 1848 e.V."),
		BankIBAN: Str(DemoIBAN), Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider}, DebitCreditorID: Str(TestCreditorID)}); err != nil {
		tb.Fatal(err)
	}
	return svc, dd
}

// DirectDebitFixture is the demo database (two households) of
// directDebitClub, with a pre-notification period of prenotificationDays
// (0: the default).
func DirectDebitFixture(t *testing.T, db *bun.DB, prenotificationDays int, opts ...engine.ServiceOption) *Fixture {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 2, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	svc, _ := DirectDebitClub(t, db, opts...)
	f := &Fixture{T: t, Ctx: context.Background(), DB: db, Svc: svc}
	if prenotificationDays > 0 {
		if _, err := settings.Of(f.Svc).SetPaymentSettings(f.Ctx, 1, settings.PaymentSettingsChange{DebitPrenotificationDays: PtrTo(prenotificationDays)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// CommitDirectDebit registers persons of a household to the review and
// commits choosing direct debit: the unpaid order.
func (f *Fixture) CommitDirectDebit(userKey string, persons ...int64) engine.Order {
	f.T.Helper()
	r := f.Start(userKey, persons...)
	last := r.AdvanceTo(DemoSteps)
	if _, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: last.Step, People: DemoAnswers(last.Step, r.Persons),
		PaymentMethod: "direct_debit"}); err != nil {
		f.T.Fatal(err)
	}
	return f.Orders(r.ID)[0]
}

// DebitFixture is a club collecting by direct debit to demoIBAN, with a
// return fee of fee cents, and members demo households.
type DebitFixture struct {
	*Fixture
	DD   NamedFake
	IBAN banking.IBAN
}

func NewDebitFixture(t *testing.T, db *bun.DB, members int, fee int64) *DebitFixture {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, members, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	svc, dd := DirectDebitClub(t, db)
	f := &DebitFixture{Fixture: &Fixture{T: t, Ctx: context.Background(), DB: db, Svc: svc}, DD: dd}
	if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("debit_return_fee_minor = ?", fee).
		Where("organisation_id = 1").Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.IBAN, err = banking.ParseIBAN(DemoIBAN); err != nil {
		t.Fatal(err)
	}
	return f
}

// DebitMember is one household's committed direct-debit registration.
type DebitMember struct {
	Instance int64
	Order    engine.Order
	Mandate  *directdebit.DebitMandate
	Payment  engine.Payment
	Debit    payment.Debit
}

// CommitDebit commits a registration of key paid by direct debit in the
// registration's language and gives its mandate.
func (f *DebitFixture) CommitDebit(key, language string) *DebitMember {
	f.T.Helper()
	form, _ := f.Load(key)
	r := f.Start(key, form.People[0].ID)
	last := r.AdvanceTo(DemoSteps)
	if _, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: last.Step, People: DemoAnswers(last.Step, r.Persons),
		PaymentMethod: payment.DirectDebitProvider}); err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.DB.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = ?", language).Where("id = ?", r.ID).Exec(f.Ctx); err != nil {
		f.T.Fatal(err)
	}
	order := f.Orders(r.ID)[0]
	m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Account Holder", IBAN: "DE89 3704 0044 0532 0130 00",
		Consent: true, Language: language})
	if err != nil {
		f.T.Fatal(err)
	}
	ps := f.Payments(r.ID)
	if len(ps) != 1 || ps[0].Provider != payment.DirectDebitProvider || ps[0].Status != engine.PaymentPending {
		f.T.Fatalf("%s: attempts %+v, want one pending direct debit", key, ps)
	}
	return &DebitMember{Instance: r.ID, Order: f.Orders(r.ID)[0], Mandate: m, Payment: ps[0]}
}

// Collect puts the members' debits in one run with status and, for a
// collected debit, settles its attempt as paid the way a run marked sent
// does (through the settlement every method uses).
func (f *DebitFixture) Collect(status payment.DebitStatus, members ...*DebitMember) {
	f.T.Helper()
	now := clock.Now().UTC()
	run := &payment.DebitRun{OrganisationID: 1, MessageID: fmt.Sprintf("RUN-%d", now.UnixNano()), FileVersion: "pain.008.001.08", UntilOn: now,
		Status: payment.DebitRunPrepared, DebitCount: len(members), Currency: "EUR", File: []byte("<Document/>"), CreatedBy: "test", CreatedAt: now}
	if status == payment.DebitCollected {
		run.Status, run.SentAt = payment.DebitRunSent, &now
	}
	if _, err := f.DB.NewInsert().Model(run).Exec(f.Ctx); err != nil {
		f.T.Fatal(err)
	}
	for _, m := range members {
		m.Debit = payment.Debit{RunID: run.ID, OrganisationID: 1, OrderID: m.Order.ID, PaymentID: m.Payment.ID, MandateID: m.Mandate.ID,
			EndToEndID: fmt.Sprintf("E2E-%d", m.Order.ID), AmountMinor: m.Payment.AmountMinor, Currency: "EUR", DueOn: now,
			Sequence: banking.SequenceFirst, Status: status}
		if _, err := f.DB.NewInsert().Model(&m.Debit).Exec(f.Ctx); err != nil {
			f.T.Fatal(err)
		}
		if status != payment.DebitCollected {
			continue
		}
		f.DD.Mu.Lock()
		f.DD.Retrievals[m.Payment.Reference] = engine.PaymentConfirmation{Reference: m.Payment.Reference, Outcome: engine.OutcomeSuccess,
			AmountMinor: m.Payment.AmountMinor, Currency: "EUR", EventID: "collected:" + m.Debit.EndToEndID, EventType: "direct_debit.collected"}
		f.DD.Mu.Unlock()
		if res, err := payment.Of(f.Svc).PaymentState(f.Ctx, m.Payment.Reference); err != nil || res.Outcome != engine.OutcomeSuccess {
			f.T.Fatalf("settle the collected debit: %+v %v", res, err)
		}
	}
}

// ImportStatement imports st to the club's account, failing the test on an error.
func (f *DebitFixture) ImportStatement(st banking.Statement, opt engine.StatementOptions) *bankstatement.StatementImport {
	f.T.Helper()
	opt.Account, opt.Organisation = f.IBAN, 1
	rep, err := bankstatement.Of(f.Svc).ImportStatement(f.Ctx, st, opt)
	if err != nil {
		f.T.Fatalf("import: %v", err)
	}
	return rep
}

// TestCreditorID is the club's SEPA Creditor Identifier in the direct-debit tests.
const TestCreditorID = "DE98ZZZ09999999999"
