// Package payproviders keeps the payment provider of every organisation
// that chose one of its own (settings.Service.OrganisationPaymentConfigs): built
// from its settings, rebuilt when they change, and handed to the engine
// through engine.WithPaymentProviders. Organisations without settings of
// their own get nil, which the engine reads as the environment's provider.
package payproviders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"portal/engine/payment/settings"

	"portal/engine"
	"portal/engine/banktransfer"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/stripepay"
)

// DefaultRefresh is how long the directory trusts its copy of the
// settings: a change made on this instance applies at once (Invalidate),
// one made elsewhere (another instance, the command line) within this time.
const DefaultRefresh = 10 * time.Second

// loadTimeout bounds one read of the settings.
const loadTimeout = 5 * time.Second

// Loader reads the organisations' own payment settings, secrets opened.
type Loader func(ctx context.Context) ([]settings.OrganisationPaymentConfig, error)

// Builder makes the provider of one organisation's settings.
type Builder func(settings.OrganisationPaymentConfig) (engine.PaymentProvider, error)

// Directory is the organisations' own providers. It is safe for
// concurrent use.
type Directory struct {
	load    Loader
	build   Builder
	log     *slog.Logger
	refresh time.Duration

	mu     sync.Mutex
	loaded time.Time
	byOrg  map[int64]built
}

// built is one organisation's provider and the settings it was built
// from, with the providers of its retired credentials.
type built struct {
	updated  time.Time
	provider engine.PaymentProvider
	retired  []engine.PaymentProvider
	// methods are the providers of the organisation's other payment
	// methods, by name (the default one is provider).
	methods map[string]engine.PaymentProvider
}

// New returns a directory that reads the settings with load and builds
// providers with build; refresh 0 is DefaultRefresh.
func New(load Loader, build Builder, log *slog.Logger, refresh time.Duration) *Directory {
	if refresh == 0 {
		refresh = DefaultRefresh
	}
	if log == nil {
		log = slog.Default()
	}
	return &Directory{load: load, build: build, log: log, refresh: refresh, byOrg: map[int64]built{}}
}

// Provider is the provider of an organisation's own settings; nil when it
// has none, so that the environment's applies. Settings that cannot be
// used (a key no session key opens) give a provider that refuses every
// call: the club's money never goes to another account, registrations
// commit with their payment link to follow ("payment generation failed").
func (d *Directory) Provider(orgID int64) engine.PaymentProvider {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded.IsZero() || time.Since(d.loaded) >= d.refresh {
		d.reload()
	}
	return d.byOrg[orgID].provider
}

// Method is the provider of one of an organisation's payment methods
// (engine.WithPaymentMethodProviders); nil when it does not offer it.
func (d *Directory) Method(orgID int64, name string) engine.PaymentProvider {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded.IsZero() || time.Since(d.loaded) >= d.refresh {
		d.reload()
	}
	b := d.byOrg[orgID]
	if b.provider != nil && b.provider.Name() == name {
		return b.provider
	}
	return b.methods[name]
}

// Retired are the providers of an organisation's earlier Stripe
// credentials (engine.WithRetiredPaymentProviders): payments made with them
// are refunded and retrieved there, their events verified with their
// webhook secrets.
func (d *Directory) Retired(orgID int64) []engine.PaymentProvider {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded.IsZero() || time.Since(d.loaded) >= d.refresh {
		d.reload()
	}
	return d.byOrg[orgID].retired
}

// Invalidate makes the next call read the settings again (its argument is
// the organisation whose settings changed: payment.WithPaymentSettingsChanged).
func (d *Directory) Invalidate(int64) {
	d.mu.Lock()
	d.loaded = time.Time{}
	d.mu.Unlock()
}

// reload reads the settings and builds the providers whose settings
// changed; a failed read keeps the previous ones until the next interval.
func (d *Directory) reload() {
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	d.loaded = time.Now()
	configs, err := d.load(ctx)
	if err != nil {
		d.log.Warn("payment settings could not be read; keeping the previous providers", "err", err)
		return
	}
	next := make(map[int64]built, len(configs))
	for _, c := range configs {
		if old, ok := d.byOrg[c.OrganisationID]; ok && old.updated.Equal(c.UpdatedAt) {
			next[c.OrganisationID] = old
			continue
		}
		b := built{updated: c.UpdatedAt}
		if c.Err == nil {
			b.provider, err = d.build(c)
		} else {
			err = c.Err
		}
		if err != nil {
			b.provider = unusable{name: c.Provider}
			d.log.Error("an organisation's payment settings cannot be used; its members cannot pay until they are fixed",
				"organisation", c.OrganisationID, "provider", c.Provider, "err", err)
		}
		for _, m := range c.Methods {
			if m == c.Provider {
				continue
			}
			if b.methods == nil {
				b.methods = map[string]engine.PaymentProvider{}
			}
			other := c
			other.Provider = m
			p, err := d.build(other)
			if c.Err != nil {
				p, err = nil, c.Err
			}
			if err != nil {
				p = unusable{name: m}
				d.log.Error("an organisation's payment method cannot be used; its members cannot pay with it until it is fixed",
					"organisation", c.OrganisationID, "method", m, "err", err)
			}
			b.methods[m] = p
		}
		for _, r := range c.Retired {
			old := c
			old.Provider, old.StripeSecretKey, old.StripeWebhookSecret, old.Retired = payment.StripeProvider, r.SecretKey, r.WebhookSecret, nil
			p, err := d.build(old)
			if err != nil {
				d.log.Warn("earlier Stripe credentials of an organisation cannot be used", "organisation", c.OrganisationID, "err", err)
				continue
			}
			b.retired = append(b.retired, p)
		}
		next[c.OrganisationID] = b
	}
	d.byOrg = next
}

// errUnusable is every answer of a provider whose settings cannot be used.
var errUnusable = errors.New("the organisation's payment settings cannot be used (see the log); set them again")

// unusable stands for a provider whose settings cannot be used.
type unusable struct{ name string }

func (u unusable) Name() string { return u.name }
func (unusable) CreateCheckout(context.Context, engine.CheckoutRequest) (engine.Checkout, error) {
	return engine.Checkout{}, errUnusable
}
func (unusable) Retrieve(context.Context, engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{}, errUnusable
}
func (unusable) Expire(context.Context, engine.Payment) error { return errUnusable }
func (unusable) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", errUnusable
}

// Options are what the providers of the organisations share with the
// environment's: the Stripe API's address, the test gateway (nil where it
// may not run) and the portal's pay link, which a bank transfer's page is.
type Options struct {
	StripeAPIURL string
	TestGateway  engine.PaymentProvider
	PayLink      func(orderReference string, amountMinor int64) string
}

// Build returns the Builder of the providers the portal offers: Stripe
// with the organisation's own keys, bank transfer to its own account, and
// direct debit to it, and the test gateway where it may run.
func Build(o Options) Builder {
	return func(c settings.OrganisationPaymentConfig) (engine.PaymentProvider, error) {
		switch c.Provider {
		case stripepay.Name:
			return stripepay.New(stripepay.Config{SecretKey: c.StripeSecretKey, WebhookSecret: c.StripeWebhookSecret, APIURL: o.StripeAPIURL})
		case banktransfer.Name:
			return banktransfer.New(c.Creditor, o.PayLink)
		case directdebit.Name:
			return directdebit.New(c.Creditor, c.CreditorID, o.PayLink)
		case payment.TestGatewayProvider:
			if o.TestGateway == nil {
				return nil, errors.New("the test gateway runs only on an http loopback PORTAL_BASE_URL")
			}
			return o.TestGateway, nil
		}
		return nil, fmt.Errorf("unknown payment provider %q", c.Provider)
	}
}
