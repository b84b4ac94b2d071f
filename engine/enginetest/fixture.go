package enginetest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/payment"
	"portal/engine/registration"
)

// Quote is the price quote of the run's registration.
func (f *Fixture) Quote(r *Run) registration.Quote {
	f.T.Helper()
	q, err := registration.Of(f.Svc).Quote(f.Ctx, r.UserKey, r.PID)
	if err != nil {
		f.T.Fatalf("quote: %v", err)
	}
	return q
}

// PtrTo returns a pointer to a copy of v.
func PtrTo[T any](v T) *T { return &v }

// Seeded returns a service on a database with the demo data.
func Seeded(t *testing.T, db *bun.DB) *engine.Service {
	t.Helper()
	svc, _ := SeededWithGateway(t, db)
	return svc
}

// SeededWithGateway is seeded, and also returns the payment gateway the
// service was made with, for tests that sign payment returns.
func SeededWithGateway(t *testing.T, db *bun.DB) (*engine.Service, *payment.TestGateway) {
	t.Helper()
	now := clock.Now().UTC()
	if err := demodata.SeedDemo(context.Background(), db, 2, now); err != nil {
		t.Fatalf("seed: %v", err)
	}
	gw := payment.NewTestGateway(TestGatewayURLs)
	return engine.NewService(db, gw), gw
}

// Str returns a pointer to s.
func Str(s string) *string { return &s }

// OtherOrganisation adds a second organisation with an open period (10) and
// a closed one (11) that no demo user key has persons in.
func OtherOrganisation(t testing.TB, db *bun.DB) {
	t.Helper()
	now := clock.Now().UTC()
	rows := []any{
		&engine.Organisation{ID: 2, Name: "Hillside Hockey Club"},
		&engine.MembershipPeriod{ID: 10, OrganisationID: 2, Name: "Hillside Open Season", StartDate: now.AddDate(0, -1, 0),
			EndDate: now.AddDate(0, 6, 0), Status: engine.PeriodOpen, Currency: "EUR", DefinitionKey: "membership"},
		&engine.MembershipPeriod{ID: 11, OrganisationID: 2, Name: "Hillside Closed Season", StartDate: now.AddDate(-1, -1, 0),
			EndDate: now.AddDate(0, -1, 0), Status: engine.PeriodClosed, Currency: "EUR", DefinitionKey: "membership"},
		&engine.Person{ID: 50, OrganisationID: 2, FirstName: "Kim", LastName: "Hill", DateOfBirth: now.AddDate(-30, 0, 0)},
		&engine.UserPerson{UserKey: "hillside", PersonID: 50, OrganisationID: 2},
	}
	for _, row := range rows {
		if _, err := db.NewInsert().Model(row).Exec(t.Context()); err != nil {
			t.Fatalf("insert %T: %v", row, err)
		}
	}
}

// TestGatewayURLs are the test gateway's addresses as the HTTP layer builds
// them for the base URL http://portal.test.
var TestGatewayURLs = payment.TestGatewayURLs{
	PayURL:    func(reference string) string { return "http://portal.test/dev/pay/" + url.PathEscape(reference) },
	ReturnURL: "http://portal.test/membership/payment-return",
}

// DemoSteps is the number of questions of the demo definition (of its
// longest path: transfer_club is asked only after a yes to transfer,
// guardian_consent only of juniors).
const DemoSteps = 8

// Fixture is a seeded database with its service and the payment gateway the
// service was made with; its helpers fail the test on any error.
type Fixture struct {
	T   *testing.T
	Ctx context.Context
	DB  *bun.DB
	Svc *engine.Service
	GW  *payment.TestGateway
}

// NewFixture seeds db with the demo data and returns its fixture.
func NewFixture(t *testing.T, db *bun.DB) *Fixture {
	t.Helper()
	svc, gw := SeededWithGateway(t, db)
	return &Fixture{T: t, Ctx: context.Background(), DB: db, Svc: svc, GW: gw}
}

// Run is one registration of a user key, walked through the demo definition.
type Run struct {
	F       *Fixture
	UserKey string
	PID     string
	ID      int64
	Persons []int64
	Form    *registration.Form // the last form the service returned
}

// DemoAnswers are valid answers to a question of the demo definition: the
// first person takes the insurance and is the main contact.
func DemoAnswers(step int, persons []int64) []registration.PersonInput {
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		first := map[bool]string{true: "1", false: "0"}[i == 0]
		var a *string
		switch step {
		case 1: // emergency_phone
			a = Str("0612345678")
		case 2: // shirt_size
			a = Str("M")
		case 3: // insurance
			a = Str(first)
		case 4: // transfer: no answer means 0, so transfer_club is left out
		case 5: // transfer_club, when someone transfers
			a = Str("Old Club")
		case 6: // guardian_consent: adults are hidden, their answers ignored
			a = Str("1")
		case 7: // main_contact
			a = Str(first)
		case 8: // terms
			a = Str("1")
		}
		in[i] = registration.PersonInput{ID: id, Answer: a}
	}
	return in
}

// WantCode fails the test unless err is an engine error with code.
func WantCode(t *testing.T, err error, code engine.Code) *engine.Error {
	t.Helper()
	if got := engine.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %s), want code %s", err, got, code)
	}
	e, _ := engine.AsError(err)
	return e
}

// DBState is every row a registration writes, printed, so that "nothing
// changed" can be checked by comparing two states.
type DBState map[string][]string

// AssertUnchanged fails the test for every table whose rows differ between two states.
func AssertUnchanged(t *testing.T, before, after DBState) {
	t.Helper()
	for _, table := range []string{"instances", "process_data", "memberships", "orders", "order_lines", "payments", "outbox"} {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s changed:\nbefore %q\nafter  %q", table, before[table], after[table])
		}
	}
}

// Deref prints *p, or nil.
func Deref[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// PersonIDs lists the ids of a form's persons, in order.
func PersonIDs(form *registration.Form) []int64 {
	ids := make([]int64, len(form.People))
	for i, p := range form.People {
		ids[i] = p.ID
	}
	return ids
}

// FormAnswers maps a form's persons to their pre-filled answers ("<nil>" for none).
func FormAnswers(form *registration.Form) map[int64]string {
	out := map[int64]string{}
	for _, p := range form.People {
		if p.Answer != nil {
			out[p.ID] = *p.Answer
		} else {
			out[p.ID] = "<nil>"
		}
	}
	return out
}

// Together runs f(0) … f(n-1) in n goroutines released at the same moment,
// so that they race, and returns when every one has returned.
func Together(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// EqualStrings reports whether a and b hold the same strings in the same order.
func EqualStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Contains reports whether list holds s.
func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FieldsOf is the fields a validation error names, failing the test on any other error.
func FieldsOf(t *testing.T, err error) []string {
	t.Helper()
	e, ok := engine.AsError(err)
	if !ok || e.Code != engine.CodeValidation {
		t.Fatalf("want a validation error, got %v", err)
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

// Load returns the user key's registration form for the demo period.
func (f *Fixture) Load(userKey string) (*registration.Form, bool) {
	f.T.Helper()
	form, created, err := registration.Of(f.Svc).LoadMembershipForm(f.Ctx, userKey, engine.DemoPeriodID, nil)
	if err != nil {
		f.T.Fatalf("load form of %q: %v", userKey, err)
	}
	return form, created
}

// Start loads the user key's registration and selects persons: the run is at step 1.
func (f *Fixture) Start(userKey string, persons ...int64) *Run {
	f.T.Helper()
	form, _ := f.Load(userKey)
	r := &Run{F: f, UserKey: userKey, PID: form.ProcessIDString(), ID: form.ProcessID, Persons: persons, Form: form}
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		in[i] = registration.PersonInput{ID: id}
	}
	r.Next(in)
	return r
}

// Next submits the run's current step and fails the test on an error.
func (r *Run) Next(in []registration.PersonInput) *registration.Form {
	r.F.T.Helper()
	form, err := registration.Of(r.F.Svc).Next(r.F.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: r.Form.Step, People: in})
	if err != nil {
		r.F.T.Fatalf("step %d: %v", r.Form.Step, err)
	}
	r.Form = form
	return form
}

// AdvanceTo answers the demo questions validly until the run is at step.
func (r *Run) AdvanceTo(step int) *registration.Form {
	r.F.T.Helper()
	for r.Form.Step < step {
		r.Next(DemoAnswers(r.Form.Step, r.Persons))
	}
	if r.Form.Step != step {
		r.F.T.Fatalf("run is at step %d, want %d", r.Form.Step, step)
	}
	return r.Form
}

// Commit answers every remaining question: the run is DONE with an order.
func (r *Run) Commit() *registration.Form {
	r.F.T.Helper()
	form := r.AdvanceTo(DemoSteps + 1)
	if form.State != engine.StateDone {
		r.F.T.Fatalf("after the last question: state %s, want DONE", form.State)
	}
	return form
}

// AttemptOf reads the payment reference from a payment URL. The stable pay
// link carries the order's reference: following it (as a browser would)
// gives the open attempt's reference, which returns and events name.
func (f *Fixture) AttemptOf(paymentURL string) string {
	f.T.Helper()
	u, err := url.Parse(paymentURL)
	if err != nil {
		f.T.Fatalf("payment url %q: %v", paymentURL, err)
	}
	ref := u.Query().Get("reference")
	if ref == "" {
		f.T.Fatalf("payment url %q has no reference", paymentURL)
	}
	if !strings.HasPrefix(ref, "PO-") {
		return ref
	}
	p, err := payment.Of(f.Svc).FollowPayLink(f.Ctx, ref)
	if err != nil {
		f.T.Fatalf("follow the pay link %q: %v", paymentURL, err)
	}
	return p.Reference
}

// OrderRefOf reads the order's reference from a stable pay link.
func (f *Fixture) OrderRefOf(paymentURL string) string {
	f.T.Helper()
	u, err := url.Parse(paymentURL)
	if err != nil || !strings.HasPrefix(u.Query().Get("reference"), "PO-") {
		f.T.Fatalf("payment url %q is not a stable pay link (%v)", paymentURL, err)
	}
	return u.Query().Get("reference")
}

// PaymentReturn is what the browser brings back from the test gateway: the
// query of its signed return address, with the attempt's amount (or the
// demo total for an unknown reference).
func (f *Fixture) PaymentReturn(reference string, status engine.PaymentOutcome, transactionID string) engine.PaymentReturn {
	f.T.Helper()
	amount, currency := int64(100), "EUR"
	if v, err := payment.Of(f.Svc).PaymentForPage(f.Ctx, reference); err == nil {
		amount, currency = v.Payment.AmountMinor, v.Payment.Currency
	}
	return f.SignedReturn(reference, status, transactionID, amount, currency)
}

// SignedReturn is a validly signed return with the amount given.
func (f *Fixture) SignedReturn(reference string, status engine.PaymentOutcome, transactionID string, amountMinor int64, currency string) engine.PaymentReturn {
	f.T.Helper()
	u, err := url.Parse(f.GW.ReturnURL(reference, string(status), transactionID, amountMinor, currency))
	if err != nil {
		f.T.Fatalf("return url: %v", err)
	}
	q := u.Query()
	return engine.PaymentReturn{Reference: q.Get("reference"), Status: q.Get("status"), TransactionID: q.Get("transactionId"),
		Amount: q.Get("amount"), Currency: q.Get("currency"), Signature: q.Get("signature")}
}

// Pay applies a signed payment return with a transaction id of its own.
func (f *Fixture) Pay(reference string, status engine.PaymentOutcome) *payment.PaymentResult {
	f.T.Helper()
	res, err := payment.Of(f.Svc).CompletePayment(f.Ctx, f.PaymentReturn(reference, status, "tx-"+string(status)+"-"+reference))
	if err != nil {
		f.T.Fatalf("payment return %s for %s: %v", status, reference, err)
	}
	return res
}

// Instance loads a process instance row.
func (f *Fixture) Instance(id int64) engine.ProcessInstance {
	f.T.Helper()
	var inst engine.ProcessInstance
	if err := f.DB.NewSelect().Model(&inst).Where("id = ?", id).Scan(f.Ctx); err != nil {
		f.T.Fatalf("load instance %d: %v", id, err)
	}
	return inst
}

// Memberships loads the memberships an instance created, by person.
func (f *Fixture) Memberships(instanceID int64) []engine.Membership {
	f.T.Helper()
	var ms []engine.Membership
	if err := f.DB.NewSelect().Model(&ms).Where("process_instance_id = ?", instanceID).Order("person_id ASC", "id ASC").Scan(f.Ctx); err != nil {
		f.T.Fatalf("load memberships: %v", err)
	}
	return ms
}

// Orders loads the orders of an instance with their lines.
func (f *Fixture) Orders(instanceID int64) []engine.Order {
	f.T.Helper()
	var ords []engine.Order
	err := f.DB.NewSelect().Model(&ords).Where("process_instance_id = ?", instanceID).
		Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") }).
		Order("id ASC").Scan(f.Ctx)
	if err != nil {
		f.T.Fatalf("load orders: %v", err)
	}
	return ords
}

// Payments loads the payment attempts of an instance's orders.
func (f *Fixture) Payments(instanceID int64) []engine.Payment {
	f.T.Helper()
	var ps []engine.Payment
	err := f.DB.NewSelect().Model(&ps).
		Where("order_id IN (?)", f.DB.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("process_instance_id = ?", instanceID)).
		Order("id ASC").Scan(f.Ctx)
	if err != nil {
		f.T.Fatalf("load payments: %v", err)
	}
	return ps
}

// Count counts the rows of model's table that match where.
func (f *Fixture) Count(model any, where string, args ...any) int {
	f.T.Helper()
	n, err := f.DB.NewSelect().Model(model).Where(where, args...).Count(f.Ctx)
	if err != nil {
		f.T.Fatalf("count %T: %v", model, err)
	}
	return int(n)
}

func (f *Fixture) State() DBState {
	f.T.Helper()
	s := DBState{}
	var insts []engine.ProcessInstance
	var data []engine.ProcessData
	var ms []engine.Membership
	var ords []engine.Order
	var ls []engine.OrderLine
	var ps []engine.Payment
	var out []engine.OutboxMessage
	for _, m := range []any{&insts, &data, &ms, &ords, &ls, &ps, &out} {
		if err := f.DB.NewSelect().Model(m).Order("id ASC").Scan(f.Ctx); err != nil {
			f.T.Fatalf("snapshot %T: %v", m, err)
		}
	}
	for _, i := range insts {
		s["instances"] = append(s["instances"], fmt.Sprintf("%d %s %s step=%s persons=%v v%d end=%v",
			i.ID, i.UserKey, i.Status, Deref(i.CurrentStepID), i.SelectedPersons, i.Version, i.EndTime != nil))
	}
	for _, d := range data {
		s["process_data"] = append(s["process_data"], fmt.Sprintf("%d inst=%d step=%s person=%s %s=%s",
			d.ID, d.InstanceID, Deref(d.StepID), Deref(d.PersonID), d.DataKey, d.DataValue))
	}
	for _, m := range ms {
		s["memberships"] = append(s["memberships"], fmt.Sprintf("%d person=%d period=%d type=%d %s %s inst=%s",
			m.ID, m.PersonID, m.PeriodID, m.MembershipTypeID, m.MemberType, m.Status, Deref(m.ProcessInstanceID)))
	}
	for _, o := range ords {
		s["orders"] = append(s["orders"], fmt.Sprintf("%d inst=%d %s %d paid=%v", o.ID, o.ProcessInstanceID, o.Status, o.TotalMinor, o.PaidAt != nil))
	}
	for _, l := range ls {
		s["order_lines"] = append(s["order_lines"], fmt.Sprintf("%d order=%d %s %d", l.ID, l.OrderID, l.Code, l.AmountMinor))
	}
	for _, p := range ps {
		s["payments"] = append(s["payments"], fmt.Sprintf("%d order=%d %s %s tx=%s", p.ID, p.OrderID, p.Reference, p.Status, Deref(p.TransactionID)))
	}
	for _, m := range out {
		s["outbox"] = append(s["outbox"], fmt.Sprintf("%d %s", m.ID, m.DedupKey))
	}
	return s
}
