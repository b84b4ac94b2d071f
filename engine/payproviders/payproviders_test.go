package payproviders_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

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
	configs := []engine.OrganisationPaymentConfig{{OrganisationID: 1, Provider: "stripe", UpdatedAt: at},
		{OrganisationID: 2, Provider: "stripe", UpdatedAt: at, Err: errors.New("key cannot be opened")}}
	var loadErr error
	loads, builds := 0, 0
	dir := payproviders.New(func(context.Context) ([]engine.OrganisationPaymentConfig, error) {
		loads++
		return configs, loadErr
	}, func(c engine.OrganisationPaymentConfig) (engine.PaymentProvider, error) {
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
