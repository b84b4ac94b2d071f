package engine_test

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
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
)

// The demo persons linked to engine.DemoUserKey, by their first names.
const (
	alex  = enginetest.Alex
	sam   = enginetest.Sam
	robin = enginetest.Robin
	jamie = enginetest.Jamie
)

// countRows counts model's rows matching where (enginetest.CountRows).
var countRows = enginetest.CountRows

// testGatewayURLs are the test gateway's addresses as the HTTP layer builds
// them for the base URL http://portal.test.
var testGatewayURLs = payment.TestGatewayURLs{
	PayURL:    func(reference string) string { return "http://portal.test/dev/pay/" + url.PathEscape(reference) },
	ReturnURL: "http://portal.test/membership/payment-return",
}

// demoSteps is the number of questions of the demo definition (of its
// longest path: transfer_club is asked only after a yes to transfer,
// guardian_consent only of juniors).
const demoSteps = 8

// fixture is a seeded database with its service and the payment gateway the
// service was made with; its helpers fail the test on any error.
type fixture struct {
	t   *testing.T
	ctx context.Context
	db  *bun.DB
	svc *engine.Service
	gw  *payment.TestGateway
}

func newFixture(t *testing.T, db *bun.DB) *fixture {
	t.Helper()
	svc, gw := seededWithGateway(t, db)
	return &fixture{t: t, ctx: context.Background(), db: db, svc: svc, gw: gw}
}

// load returns the user key's registration form for the demo period.
func (f *fixture) load(userKey string) (*registration.Form, bool) {
	f.t.Helper()
	form, created, err := registration.Of(f.svc).LoadMembershipForm(f.ctx, userKey, engine.DemoPeriodID, nil)
	if err != nil {
		f.t.Fatalf("load form of %q: %v", userKey, err)
	}
	return form, created
}

// run is one registration of a user key, walked through the demo definition.
type run struct {
	f       *fixture
	userKey string
	pid     string
	id      int64
	persons []int64
	form    *registration.Form // the last form the service returned
}

// start loads the user key's registration and selects persons: the run is at step 1.
func (f *fixture) start(userKey string, persons ...int64) *run {
	f.t.Helper()
	form, _ := f.load(userKey)
	r := &run{f: f, userKey: userKey, pid: form.ProcessIDString(), id: form.ProcessID, persons: persons, form: form}
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		in[i] = registration.PersonInput{ID: id}
	}
	r.next(in)
	return r
}

// next submits the run's current step and fails the test on an error.
func (r *run) next(in []registration.PersonInput) *registration.Form {
	r.f.t.Helper()
	form, err := registration.Of(r.f.svc).Next(r.f.ctx, r.userKey, registration.NextInput{ProcessID: r.pid, Step: r.form.Step, People: in})
	if err != nil {
		r.f.t.Fatalf("step %d: %v", r.form.Step, err)
	}
	r.form = form
	return form
}

// advanceTo answers the demo questions validly until the run is at step.
func (r *run) advanceTo(step int) *registration.Form {
	r.f.t.Helper()
	for r.form.Step < step {
		r.next(demoAnswers(r.form.Step, r.persons))
	}
	if r.form.Step != step {
		r.f.t.Fatalf("run is at step %d, want %d", r.form.Step, step)
	}
	return r.form
}

// commit answers every remaining question: the run is DONE with an order.
func (r *run) commit() *registration.Form {
	r.f.t.Helper()
	form := r.advanceTo(demoSteps + 1)
	if form.State != engine.StateDone {
		r.f.t.Fatalf("after the last question: state %s, want DONE", form.State)
	}
	return form
}

// demoAnswers are valid answers to a question of the demo definition: the
// first person takes the insurance and is the main contact.
func demoAnswers(step int, persons []int64) []registration.PersonInput {
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		first := map[bool]string{true: "1", false: "0"}[i == 0]
		var a *string
		switch step {
		case 1: // emergency_phone
			a = str("0612345678")
		case 2: // shirt_size
			a = str("M")
		case 3: // insurance
			a = str(first)
		case 4: // transfer: no answer means 0, so transfer_club is left out
		case 5: // transfer_club, when someone transfers
			a = str("Old Club")
		case 6: // guardian_consent: adults are hidden, their answers ignored
			a = str("1")
		case 7: // main_contact
			a = str(first)
		case 8: // terms
			a = str("1")
		}
		in[i] = registration.PersonInput{ID: id, Answer: a}
	}
	return in
}

// attemptOf reads the payment reference from a payment URL. The stable pay
// link carries the order's reference: following it (as a browser would)
// gives the open attempt's reference, which returns and events name.
func (f *fixture) attemptOf(paymentURL string) string {
	f.t.Helper()
	u, err := url.Parse(paymentURL)
	if err != nil {
		f.t.Fatalf("payment url %q: %v", paymentURL, err)
	}
	ref := u.Query().Get("reference")
	if ref == "" {
		f.t.Fatalf("payment url %q has no reference", paymentURL)
	}
	if !strings.HasPrefix(ref, "PO-") {
		return ref
	}
	p, err := payment.Of(f.svc).FollowPayLink(f.ctx, ref)
	if err != nil {
		f.t.Fatalf("follow the pay link %q: %v", paymentURL, err)
	}
	return p.Reference
}

// orderRefOf reads the order's reference from a stable pay link.
func (f *fixture) orderRefOf(paymentURL string) string {
	f.t.Helper()
	u, err := url.Parse(paymentURL)
	if err != nil || !strings.HasPrefix(u.Query().Get("reference"), "PO-") {
		f.t.Fatalf("payment url %q is not a stable pay link (%v)", paymentURL, err)
	}
	return u.Query().Get("reference")
}

// paymentReturn is what the browser brings back from the test gateway: the
// query of its signed return address, with the attempt's amount (or the
// demo total for an unknown reference).
func (f *fixture) paymentReturn(reference string, status engine.PaymentOutcome, transactionID string) engine.PaymentReturn {
	f.t.Helper()
	amount, currency := int64(100), "EUR"
	if v, err := payment.Of(f.svc).PaymentForPage(f.ctx, reference); err == nil {
		amount, currency = v.Payment.AmountMinor, v.Payment.Currency
	}
	return f.signedReturn(reference, status, transactionID, amount, currency)
}

// signedReturn is a validly signed return with the amount given.
func (f *fixture) signedReturn(reference string, status engine.PaymentOutcome, transactionID string, amountMinor int64, currency string) engine.PaymentReturn {
	f.t.Helper()
	u, err := url.Parse(f.gw.ReturnURL(reference, string(status), transactionID, amountMinor, currency))
	if err != nil {
		f.t.Fatalf("return url: %v", err)
	}
	q := u.Query()
	return engine.PaymentReturn{Reference: q.Get("reference"), Status: q.Get("status"), TransactionID: q.Get("transactionId"),
		Amount: q.Get("amount"), Currency: q.Get("currency"), Signature: q.Get("signature")}
}

// pay applies a signed payment return with a transaction id of its own.
func (f *fixture) pay(reference string, status engine.PaymentOutcome) *payment.PaymentResult {
	f.t.Helper()
	res, err := payment.Of(f.svc).CompletePayment(f.ctx, f.paymentReturn(reference, status, "tx-"+string(status)+"-"+reference))
	if err != nil {
		f.t.Fatalf("payment return %s for %s: %v", status, reference, err)
	}
	return res
}

// wantCode fails the test unless err is an engine error with code.
func wantCode(t *testing.T, err error, code engine.Code) *engine.Error {
	t.Helper()
	if got := engine.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %s), want code %s", err, got, code)
	}
	e, _ := engine.AsError(err)
	return e
}

// instance loads a process instance row.
func (f *fixture) instance(id int64) engine.ProcessInstance {
	f.t.Helper()
	var inst engine.ProcessInstance
	if err := f.db.NewSelect().Model(&inst).Where("id = ?", id).Scan(f.ctx); err != nil {
		f.t.Fatalf("load instance %d: %v", id, err)
	}
	return inst
}

// memberships loads the memberships an instance created, by person.
func (f *fixture) memberships(instanceID int64) []engine.Membership {
	f.t.Helper()
	var ms []engine.Membership
	if err := f.db.NewSelect().Model(&ms).Where("process_instance_id = ?", instanceID).Order("person_id ASC", "id ASC").Scan(f.ctx); err != nil {
		f.t.Fatalf("load memberships: %v", err)
	}
	return ms
}

// orders loads the orders of an instance with their lines.
func (f *fixture) orders(instanceID int64) []engine.Order {
	f.t.Helper()
	var ords []engine.Order
	err := f.db.NewSelect().Model(&ords).Where("process_instance_id = ?", instanceID).
		Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") }).
		Order("id ASC").Scan(f.ctx)
	if err != nil {
		f.t.Fatalf("load orders: %v", err)
	}
	return ords
}

// payments loads the payment attempts of an instance's orders.
func (f *fixture) payments(instanceID int64) []engine.Payment {
	f.t.Helper()
	var ps []engine.Payment
	err := f.db.NewSelect().Model(&ps).
		Where("order_id IN (?)", f.db.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("process_instance_id = ?", instanceID)).
		Order("id ASC").Scan(f.ctx)
	if err != nil {
		f.t.Fatalf("load payments: %v", err)
	}
	return ps
}

// count counts the rows of model's table that match where.
func (f *fixture) count(model any, where string, args ...any) int {
	f.t.Helper()
	n, err := f.db.NewSelect().Model(model).Where(where, args...).Count(f.ctx)
	if err != nil {
		f.t.Fatalf("count %T: %v", model, err)
	}
	return int(n)
}

// dbState is every row a registration writes, printed, so that "nothing
// changed" can be checked by comparing two states.
type dbState map[string][]string

func (f *fixture) state() dbState {
	f.t.Helper()
	s := dbState{}
	var insts []engine.ProcessInstance
	var data []engine.ProcessData
	var ms []engine.Membership
	var ords []engine.Order
	var ls []engine.OrderLine
	var ps []engine.Payment
	var out []engine.OutboxMessage
	for _, m := range []any{&insts, &data, &ms, &ords, &ls, &ps, &out} {
		if err := f.db.NewSelect().Model(m).Order("id ASC").Scan(f.ctx); err != nil {
			f.t.Fatalf("snapshot %T: %v", m, err)
		}
	}
	for _, i := range insts {
		s["instances"] = append(s["instances"], fmt.Sprintf("%d %s %s step=%s persons=%v v%d end=%v",
			i.ID, i.UserKey, i.Status, deref(i.CurrentStepID), i.SelectedPersons, i.Version, i.EndTime != nil))
	}
	for _, d := range data {
		s["process_data"] = append(s["process_data"], fmt.Sprintf("%d inst=%d step=%s person=%s %s=%s",
			d.ID, d.InstanceID, deref(d.StepID), deref(d.PersonID), d.DataKey, d.DataValue))
	}
	for _, m := range ms {
		s["memberships"] = append(s["memberships"], fmt.Sprintf("%d person=%d period=%d type=%d %s %s inst=%s",
			m.ID, m.PersonID, m.PeriodID, m.MembershipTypeID, m.MemberType, m.Status, deref(m.ProcessInstanceID)))
	}
	for _, o := range ords {
		s["orders"] = append(s["orders"], fmt.Sprintf("%d inst=%d %s %d paid=%v", o.ID, o.ProcessInstanceID, o.Status, o.TotalMinor, o.PaidAt != nil))
	}
	for _, l := range ls {
		s["order_lines"] = append(s["order_lines"], fmt.Sprintf("%d order=%d %s %d", l.ID, l.OrderID, l.Code, l.AmountMinor))
	}
	for _, p := range ps {
		s["payments"] = append(s["payments"], fmt.Sprintf("%d order=%d %s %s tx=%s", p.ID, p.OrderID, p.Reference, p.Status, deref(p.TransactionID)))
	}
	for _, m := range out {
		s["outbox"] = append(s["outbox"], fmt.Sprintf("%d %s", m.ID, m.DedupKey))
	}
	return s
}

// assertUnchanged fails the test for every table whose rows differ between two states.
func assertUnchanged(t *testing.T, before, after dbState) {
	t.Helper()
	for _, table := range []string{"instances", "process_data", "memberships", "orders", "order_lines", "payments", "outbox"} {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s changed:\nbefore %q\nafter  %q", table, before[table], after[table])
		}
	}
}

func deref[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// personIDs lists the ids of a form's persons, in order.
func personIDs(form *registration.Form) []int64 {
	ids := make([]int64, len(form.People))
	for i, p := range form.People {
		ids[i] = p.ID
	}
	return ids
}

// formAnswers maps a form's persons to their pre-filled answers ("<nil>" for none).
func formAnswers(form *registration.Form) map[int64]string {
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

// together runs f(0) … f(n-1) in n goroutines released at the same moment,
// so that they race, and returns when every one has returned.
func together(n int, f func(i int)) {
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
