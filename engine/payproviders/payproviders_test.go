package payproviders_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"portal/engine/payment/settings"

	"portal/engine"
	"portal/engine/payproviders"
)

// named is a provider that only has a name.
type named struct {
	engine.PaymentProvider
	name string
}

func (n *named) Name() string { return n.name }

// TestDirectory: organisations without settings get nil (the
// environment's provider), a provider is built once per version of the
// settings and rebuilt after Invalidate when they changed, unusable
// settings give a provider that refuses every call, and a failed read
// keeps the previous providers.
func TestDirectory(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	configs := []settings.OrganisationPaymentConfig{{OrganisationID: 1, Provider: "stripe", UpdatedAt: at},
		{OrganisationID: 2, Provider: "stripe", UpdatedAt: at, Err: errors.New("key cannot be opened")}}
	var loadErr error
	loads, builds := 0, 0
	dir := payproviders.New(func(context.Context) ([]settings.OrganisationPaymentConfig, error) {
		loads++
		return configs, loadErr
	}, func(c settings.OrganisationPaymentConfig) (engine.PaymentProvider, error) {
		builds++
		return &named{name: c.Provider}, nil
	}, slog.New(slog.DiscardHandler), time.Hour)

	first := dir.Provider(1)
	if first == nil || first.Name() != "stripe" || dir.Provider(3) != nil {
		t.Fatalf("providers %v, %v", first, dir.Provider(3))
	}
	broken := dir.Provider(2)
	if broken == nil || broken.Name() != "stripe" {
		t.Fatalf("unusable settings: %v", broken)
	}
	if _, err := broken.CreateCheckout(context.Background(), engine.CheckoutRequest{}); err == nil {
		t.Fatal("a provider of unusable settings made a checkout")
	}
	if loads != 1 || builds != 1 {
		t.Fatalf("%d loads, %d builds; want 1 and 1", loads, builds)
	}
	dir.Invalidate(1)
	if dir.Provider(1) != first || builds != 1 {
		t.Fatalf("unchanged settings rebuilt (%d builds)", builds)
	}
	configs[0].UpdatedAt = at.Add(time.Minute)
	dir.Invalidate(1)
	if p := dir.Provider(1); p == first || builds != 2 {
		t.Fatalf("changed settings not rebuilt (%d builds)", builds)
	}
	loadErr = errors.New("database down")
	kept := dir.Provider(1)
	dir.Invalidate(1)
	if dir.Provider(1) != kept {
		t.Fatal("a failed read dropped the providers")
	}
}

// TestDirectoryMethods: an organisation's other payment methods get a
// provider each, built from its settings with that method; a method it
// does not offer is nil (the engine falls back to its default); a method
// that cannot be built refuses every call.
func TestDirectoryMethods(t *testing.T) {
	at := time.Date(2026, 12, 27, 10, 0, 0, 0, time.UTC)
	configs := []settings.OrganisationPaymentConfig{{OrganisationID: 1, Provider: "bank_transfer", Methods: []string{"bank_transfer", "direct_debit", "stripe"}, UpdatedAt: at}}
	dir := payproviders.New(func(context.Context) ([]settings.OrganisationPaymentConfig, error) { return configs, nil },
		func(c settings.OrganisationPaymentConfig) (engine.PaymentProvider, error) {
			if c.Provider == "stripe" {
				return nil, errors.New("no keys")
			}
			return &named{name: c.Provider}, nil
		}, slog.New(slog.DiscardHandler), time.Hour)
	if p := dir.Method(1, "bank_transfer"); p == nil || p != dir.Provider(1) {
		t.Fatalf("the default method is not the organisation's provider: %v", p)
	}
	if p := dir.Method(1, "direct_debit"); p == nil || p.Name() != "direct_debit" {
		t.Fatalf("direct debit: %v", p)
	}
	broken := dir.Method(1, "stripe")
	if broken == nil || broken.Name() != "stripe" {
		t.Fatalf("unbuildable method: %v", broken)
	}
	if _, err := broken.CreateCheckout(context.Background(), engine.CheckoutRequest{}); err == nil {
		t.Fatal("an unbuildable method made a checkout")
	}
	if dir.Method(1, "test") != nil || dir.Method(2, "direct_debit") != nil {
		t.Fatal("a method not offered has a provider")
	}
}
