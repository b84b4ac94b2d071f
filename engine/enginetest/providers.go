package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata"
	"portal/engine/jobs"
	"portal/engine/payment"
)

// NamedFake is a fakeProvider under another name: one per payment method.
type NamedFake struct {
	*FakeProvider
	ProviderName string
}

func (n NamedFake) Name() string { return n.ProviderName }

// FakeProvider is a provider with state of its own, standing in for one
// whose events the tests write (the Stripe adapter's requests are tested
// against stripe-mock in engine/stripepay). Its events are JSON
// confirmations, "signed" by the signature "good".
type FakeProvider struct {
	Mu         sync.Mutex
	Down       bool
	Lifetime   time.Duration
	Created    []engine.CheckoutRequest
	Expired    []string
	Refunds    []engine.RefundRequest
	Retrievals map[string]engine.PaymentConfirmation
}

func (p *FakeProvider) Name() string { return "fake" }

func (p *FakeProvider) CreateCheckout(_ context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.Down {
		return engine.Checkout{}, errors.New("fake provider down")
	}
	p.Created = append(p.Created, req)
	exp := req.ExpiresAt
	if p.Lifetime != 0 {
		exp = clock.Now().Add(p.Lifetime)
	}
	return engine.Checkout{ProviderID: "cs_" + req.Reference, URL: "https://pay.fake/" + req.Reference, ExpiresAt: exp}, nil
}

func (p *FakeProvider) Retrieve(_ context.Context, pay engine.Payment) (engine.PaymentConfirmation, error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if c, ok := p.Retrievals[pay.Reference]; ok {
		return c, nil
	}
	return engine.PaymentConfirmation{Reference: pay.Reference, Outcome: engine.OutcomeOpen}, nil
}

func (p *FakeProvider) Expire(_ context.Context, pay engine.Payment) error {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.Expired = append(p.Expired, pay.Reference)
	return nil
}

func (p *FakeProvider) Refund(_ context.Context, req engine.RefundRequest) (string, error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.Down {
		return "", errors.New("fake provider down")
	}
	p.Refunds = append(p.Refunds, req)
	return "re_" + req.Reference, nil
}

func (p *FakeProvider) ParseEvent(payload []byte, signature string) (*engine.PaymentConfirmation, error) {
	if signature != "good" {
		return nil, engine.ErrForgedEvent
	}
	var c engine.PaymentConfirmation
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// SetDown makes the provider unavailable (down) or available again.
func (p *FakeProvider) SetDown(down bool) { p.Mu.Lock(); p.Down = down; p.Mu.Unlock() }

// OnlineFixture is a fixture whose service pays at a fakeProvider.
func OnlineFixture(t *testing.T, db *bun.DB, opts ...engine.ServiceOption) (*Fixture, *FakeProvider) {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 2, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	fp := &FakeProvider{Retrievals: map[string]engine.PaymentConfirmation{}}
	return &Fixture{T: t, Ctx: context.Background(), DB: db, Svc: engine.NewService(db, fp, opts...)}, fp
}

// Event delivers a "signed" event to the service.
func (f *Fixture) Event(c engine.PaymentConfirmation) *payment.PaymentResult {
	f.T.Helper()
	payload, _ := json.Marshal(c)
	res, err := payment.Of(f.Svc).ReceivePaymentEvent(f.Ctx, "fake", payload, "good")
	if err != nil {
		f.T.Fatalf("event %s %s: %v", c.EventID, c.Outcome, err)
	}
	return res
}

// RunJobs runs the due jobs with the payment jobs' handlers of the
// fixture's service (a refund), failures included, and returns how many ran.
func (f *Fixture) RunJobs() int {
	f.T.Helper()
	r := jobs.New(f.DB, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	payment.Of(f.Svc).SchedulePayments(r, clock.Now)
	n, err := r.Work(f.Ctx, 100)
	if err != nil {
		f.T.Fatalf("run jobs: %v", err)
	}
	return n
}
