package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Provider accounts. An organisation may change its Stripe keys (a new
// account, or rolled keys) while checkouts made with the earlier ones are
// still open or paid: each payment records the account that made it
// (Payment.Account), the earlier credentials are kept sealed as retired
// accounts of the organisation, and everything done with a payment later
// (retrieval, refund, expiry, reconciliation) goes to the provider built
// from its own account's credentials. Events are verified against the
// current and the retired webhook secrets of the organisation.

// AccountHolder is a provider bound to one account of its provider (a
// Stripe account's keys); providers without accounts (bank transfer, the
// test gateway) do not implement it.
type AccountHolder interface {
	// Account identifies the credentials (AccountOf), never them.
	Account() string
}

// AccountOf is the account identifier of a provider's credentials: a
// fingerprint of the secret key (its SHA-256, shortened), which names the
// credentials without revealing them.
func AccountOf(secretKey string) string {
	if secretKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(secretKey))
	return "key:" + hex.EncodeToString(sum[:8])
}

// accountOf is a provider's account, "" for one without accounts.
func accountOf(p engine.PaymentProvider) string {
	if a, ok := p.(AccountHolder); ok {
		return a.Account()
	}
	return ""
}

// WithRetiredPaymentProviders sets where an organisation's providers of
// earlier credentials come from (engine/payproviders builds them from the
// retired accounts settings.Service.OrganisationPaymentConfigs lists).
func WithRetiredPaymentProviders(retired func(organisationID int64) []engine.PaymentProvider) engine.ServiceOption {
	return func(s *engine.Service) { s.RetiredProviders = retired }
}

// ProviderOf is the provider that made an attempt: the organisation's
// current one when it is of the attempt's provider and account, else a
// retired one of that account, else the environment's of that account.
// An attempt of no account (made before accounts were recorded, or by a
// provider without accounts) goes to the organisation's provider of its
// name, as does one whose credentials are no longer known.
func (s *Service) ProviderOf(organisationID int64, p *engine.Payment) engine.PaymentProvider {
	current := s.ProviderForMethod(organisationID, p.Provider)
	if current.Name() == p.Provider && accountOf(current) == p.Account {
		return current
	}
	if p.Account != "" {
		if s.RetiredProviders != nil {
			for _, r := range s.RetiredProviders(organisationID) {
				if r.Name() == p.Provider && accountOf(r) == p.Account {
					return r
				}
			}
		}
		if s.Payments != nil && s.Payments.Name() == p.Provider && accountOf(s.Payments) == p.Account {
			return s.Payments
		}
		s.Log.Warn("the account that made a payment is no longer known; asking the organisation's current one",
			"reference", p.Reference, "provider", p.Provider, "account", p.Account)
	}
	return s.providerNamed(organisationID, p.Provider)
}

// eventProviders are the providers whose webhook secrets may have signed
// an organisation's events: its current provider first, then its retired
// ones (events of checkouts made before it changed its keys).
func (s *Service) eventProviders(orgID int64) []engine.PaymentProvider {
	var out []engine.PaymentProvider
	if p := s.ownProvider(orgID); p != nil {
		out = append(out, p)
	}
	if s.RetiredProviders != nil {
		out = append(out, s.RetiredProviders(orgID)...)
	}
	return out
}

// RetiredPaymentAccount is an organisation's earlier provider credentials,
// sealed as the current ones are.
type RetiredPaymentAccount struct {
	bun.BaseModel             `bun:"table:organisation_retired_payment_accounts"`
	ID                        int64     `bun:"id,pk,autoincrement"`
	OrganisationID            int64     `bun:"organisation_id,notnull"`
	Provider                  string    `bun:"provider,notnull"`
	Account                   string    `bun:"account,notnull"`
	StripeSecretKeySealed     string    `bun:"stripe_secret_key_sealed,notnull"`
	StripeWebhookSecretSealed string    `bun:"stripe_webhook_secret_sealed,notnull"`
	RetiredAt                 time.Time `bun:"retired_at,notnull"`
}

// RetireStripeCredentials keeps an organisation's Stripe credentials as
// they were before a change (old; next is the settings after it), in the
// change's transaction, when the change replaces the key or the webhook
// secret: checkouts made with them stay reachable, their events
// verifiable. Credentials already kept (the same sealed pair) are not kept
// twice.
func (s *Service) RetireStripeCredentials(ctx context.Context, tx bun.Tx, old, next *PaymentSettings) error {
	if old.StripeSecretKeySealed == "" {
		return nil
	}
	key, err := s.OpenSecret(old.OrganisationID, "stripe_secret_key", old.StripeSecretKeySealed)
	if err != nil {
		// Credentials no key opens cannot be used again anyway.
		s.Log.WarnContext(ctx, "earlier Stripe credentials cannot be opened; not kept", "organisation", old.OrganisationID, "err", err)
		return nil
	}
	// The same key and secret given again (sealed anew) retire nothing.
	newKey, kerr := s.OpenSecret(next.OrganisationID, "stripe_secret_key", next.StripeSecretKeySealed)
	oldHook, oerr := s.OpenSecret(old.OrganisationID, "stripe_webhook_secret", old.StripeWebhookSecretSealed)
	newHook, nerr := s.OpenSecret(next.OrganisationID, "stripe_webhook_secret", next.StripeWebhookSecretSealed)
	if kerr == nil && oerr == nil && nerr == nil && newKey == key && newHook == oldHook {
		return nil
	}
	exists, err := tx.NewSelect().Model((*RetiredPaymentAccount)(nil)).
		Where("organisation_id = ? AND stripe_secret_key_sealed = ? AND stripe_webhook_secret_sealed = ?",
			old.OrganisationID, old.StripeSecretKeySealed, old.StripeWebhookSecretSealed).Exists(ctx)
	if err != nil || exists {
		return err
	}
	r := &RetiredPaymentAccount{OrganisationID: old.OrganisationID, Provider: StripeProvider, Account: AccountOf(key),
		StripeSecretKeySealed: old.StripeSecretKeySealed, StripeWebhookSecretSealed: old.StripeWebhookSecretSealed, RetiredAt: next.UpdatedAt}
	if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
		return fmt.Errorf("keep earlier Stripe credentials: %w", err)
	}
	return nil
}

// OpenSecret opens a sealed payment secret of an organisation's field.
func (s *Service) OpenSecret(orgID int64, field, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if s.Sealer == nil {
		return "", fmt.Errorf("%s: no PORTAL_SESSION_KEY to open it", field)
	}
	pt, err := s.Sealer.Open(sealed, SecretAAD(orgID, field))
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return string(pt), nil
}
