// Package enginetest walks the demo registration through the engine's
// public API for tests outside the engine (message jobs, pages): seed the
// demo data, register persons, commit, pay.
package enginetest

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/payment"
	"portal/engine/registration"
)

// The demo persons linked to engine.DemoUserKey.
const (
	Alex  int64 = 1 // adult, held an adult membership last season: renews
	Sam   int64 = 2 // adult, new
	Robin int64 = 3 // junior, new
	Jamie int64 = 4 // junior, already registered for the demo period
)

// Demo is a seeded demo database with a service and its test gateway.
type Demo struct {
	T   testing.TB
	DB  *bun.DB
	Svc *engine.Service
	GW  *payment.TestGateway
	// Language is the language the member registers in (the messages'
	// and the order lines'); "" for the club's default.
	Language string
	// Period is the period Commit registers for; 0 for the demo period.
	Period int64
	// attempts remembers the attempt each pay link was paid with, so that
	// Pay can replay a return (a paid order's link no longer opens one).
	attempts map[string]*engine.Payment
}

// Seed loads the demo data into db.
func Seed(t testing.TB, db *bun.DB, opts ...engine.ServiceOption) *Demo {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 0, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	gw := payment.NewTestGateway(payment.TestGatewayURLs{
		PayURL:    func(ref string) string { return "https://portal.test/pay/" + ref },
		ReturnURL: "https://portal.test/membership/payment-return",
	})
	return &Demo{T: t, DB: db, Svc: engine.NewService(db, gw, opts...), GW: gw}
}

// Commit registers persons of the demo user with valid answers and commits:
// the registration is DONE with an unpaid order. It returns the final form.
func (d *Demo) Commit(persons ...int64) *registration.Form {
	d.T.Helper()
	return d.CommitAs(engine.DemoUserKey, persons...)
}

// CommitAs is Commit for another user key of the demo (demo-1 ...).
func (d *Demo) CommitAs(userKey string, persons ...int64) *registration.Form {
	d.T.Helper()
	return d.CommitPayingBy("", userKey, persons...)
}

// CommitPayingBy is CommitAs with the payment method the member chooses
// on the review page ("" for the club's default).
func (d *Demo) CommitPayingBy(method, userKey string, persons ...int64) *registration.Form {
	d.T.Helper()
	ctx := context.Background()
	if d.Language != "" {
		ctx = engine.WithLanguage(ctx, d.Language)
	}
	period := d.Period
	if period == 0 {
		period = engine.DemoPeriodID
	}
	form, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, userKey, period, nil)
	if err != nil {
		d.T.Fatal(err)
	}
	pid := form.ProcessIDString()
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		in[i] = registration.PersonInput{ID: id}
	}
	for form.State != engine.StateDone {
		if form.Step > 0 {
			if form.Question == nil {
				d.T.Fatalf("step %d in state %s has no question", form.Step, form.State)
			}
			in = Answers(form.Question.Name, persons)
		}
		if form, err = registration.Of(d.Svc).Next(ctx, userKey, registration.NextInput{ProcessID: pid, Step: form.Step, People: in, PaymentMethod: method}); err != nil {
			d.T.Fatalf("step %d: %v", form.Step, err)
		}
	}
	return form
}

// Pay completes the payment of a committed form with outcome success; a
// second call replays the same signed return.
func (d *Demo) Pay(form *registration.Form) *payment.PaymentResult {
	d.T.Helper()
	return d.PayWith(form, engine.OutcomeSuccess)
}

// PayWith returns from the test gateway with outcome (failed, cancelled,
// success) for the form's current attempt.
func (d *Demo) PayWith(form *registration.Form, outcome engine.PaymentOutcome) *payment.PaymentResult {
	d.T.Helper()
	u, err := url.Parse(form.PaymentURL)
	if err != nil {
		d.T.Fatal(err)
	}
	// The stable pay link names the order; following it (as a browser
	// would) opens the checkout of its current attempt, which the test
	// gateway's signed return then settles.
	p := d.attempts[form.PaymentURL]
	if p == nil {
		if p, err = payment.Of(d.Svc).FollowPayLink(context.Background(), u.Query().Get("reference")); err != nil {
			d.T.Fatalf("follow the pay link %s: %v", form.PaymentURL, err)
		}
		if d.attempts == nil {
			d.attempts = map[string]*engine.Payment{}
		}
		d.attempts[form.PaymentURL] = p
	}
	ref := p.Reference
	back, err := url.Parse(d.GW.ReturnURL(ref, string(outcome), "tx-"+ref, p.AmountMinor, p.Currency))
	if err != nil {
		d.T.Fatal(err)
	}
	q := back.Query()
	res, err := payment.Of(d.Svc).CompletePayment(context.Background(), engine.PaymentReturn{Reference: q.Get("reference"), Status: q.Get("status"),
		TransactionID: q.Get("transactionId"), Amount: q.Get("amount"), Currency: q.Get("currency"), Signature: q.Get("signature")})
	if err != nil {
		d.T.Fatalf("pay %s: %v", ref, err)
	}
	return res
}

// Answers are valid answers to a question of the demo definition: the
// first person takes the insurance and is the main contact.
func Answers(question string, persons []int64) []registration.PersonInput {
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		first := "0"
		if i == 0 {
			first = "1"
		}
		var a *string
		switch question {
		case "emergency_phone":
			a = ptr("0612345678")
		case "shirt_size":
			a = ptr("M")
		case "insurance", "main_contact":
			a = ptr(first)
		case "guardian_consent", "terms":
			a = ptr("1")
		}
		in[i] = registration.PersonInput{ID: id, Answer: a}
	}
	return in
}

func ptr(s string) *string { return &s }

// NextPeriodID is the period OpenNextPeriod adds.
const NextPeriodID = 3

// OpenNextPeriod adds the demo period's successor: the following year,
// open, on the same registration definition, with the demo period's price
// rules. It returns the new period.
func (d *Demo) OpenNextPeriod() engine.MembershipPeriod {
	d.T.Helper()
	ctx := context.Background()
	var cur engine.MembershipPeriod
	if err := d.DB.NewSelect().Model(&cur).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
		d.T.Fatal(err)
	}
	start := cur.EndDate.AddDate(0, 0, 1)
	next := engine.MembershipPeriod{ID: NextPeriodID, OrganisationID: cur.OrganisationID, Name: fmt.Sprintf("Season %d/%d", start.Year(), start.Year()+1),
		StartDate: start, EndDate: start.AddDate(1, 0, -1), Status: engine.PeriodOpen, Currency: cur.Currency, DefinitionKey: cur.DefinitionKey}
	if _, err := d.DB.NewInsert().Model(&next).Exec(ctx); err != nil {
		d.T.Fatal(err)
	}
	var rules []engine.PriceRule
	if err := d.DB.NewSelect().Model(&rules).Where("period_id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
		d.T.Fatal(err)
	}
	for i := range rules {
		rules[i].ID, rules[i].PeriodID = 0, NextPeriodID
	}
	if len(rules) > 0 {
		if _, err := d.DB.NewInsert().Model(&rules).Exec(ctx); err != nil {
			d.T.Fatal(err)
		}
	}
	return next
}
