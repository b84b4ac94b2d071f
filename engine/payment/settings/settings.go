// Package settings changes an organisation's own payment settings (which
// provider and methods its members pay by, its Stripe keys, sealed before
// they are stored, its bank account and direct debit details) and opens
// them for the provider directory that builds its providers. The stored
// row and how payments read it stay in engine/payment.
package settings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
)

// Service is the payment settings over the engine's centre.
type Service struct{ *engine.Service }

// Of returns the payment settings' service over the centre c.
func Of(c *engine.Service) *Service { return &Service{c} }

// PaymentSettingsChange is a partial update of an organisation's payment
// settings: nil fields stay as they are. The secrets come in clear and are
// sealed here; "" clears a field, and Provider "" returns the organisation
// to the environment's provider.
type PaymentSettingsChange struct {
	Provider            *string
	StripeSecretKey     *string
	StripeWebhookSecret *string
	BankCreditorName    *string
	BankIBAN            *string
	BankBIC             *string
	BankCreditorAddress *string
	// Methods replaces the methods the members choose from, the default
	// first (which becomes Provider); an empty list offers Provider alone.
	Methods                  *[]string
	DebitCreditorID          *string
	DebitPrenotificationDays *int
	DebitFileVersion         *string
	// DebitCollectionDay is the day of the month (1 to 28) the club
	// collects; 0 for the first business day the pre-notification allows.
	DebitCollectionDay *int
	// DebitReturnFeeMinor is the bank's fee for a returned debit, added
	// to the order it returned (0: none).
	DebitReturnFeeMinor *int64
}

// PaymentSettingsView is what staff see of an organisation's payment
// settings: the secrets only as whether they are set.
type PaymentSettingsView struct {
	// Provider is the organisation's own choice; "" uses the environment's.
	Provider               string
	StripeSecretKeySet     bool
	StripeWebhookSecretSet bool
	BankCreditorName       string
	BankIBAN               string
	BankBIC                string
	BankCreditorAddress    string
	// Methods are the methods the members choose from, the default first
	// (empty: the environment's provider alone).
	Methods                  []string
	DebitCreditorID          string
	DebitPrenotificationDays int
	DebitFileVersion         string
	DebitCollectionDay       int
	DebitReturnFeeMinor      int64
	UpdatedAt                *time.Time
}

func paymentSettingsView(ps *payment.PaymentSettings) *PaymentSettingsView {
	v := &PaymentSettingsView{Provider: ps.Provider, StripeSecretKeySet: ps.StripeSecretKeySealed != "",
		StripeWebhookSecretSet: ps.StripeWebhookSecretSealed != "", BankCreditorName: ps.BankCreditorName,
		BankIBAN: ps.BankIBAN, BankBIC: ps.BankBIC, BankCreditorAddress: ps.BankCreditorAddress,
		Methods: ps.MethodList(), DebitCreditorID: ps.DebitCreditorID, DebitPrenotificationDays: ps.DebitPrenotificationDays,
		DebitFileVersion: ps.DebitFileVersion, DebitCollectionDay: ps.DebitCollectionDay, DebitReturnFeeMinor: ps.DebitReturnFeeMinor}
	if v.Methods == nil {
		v.Methods = []string{}
	}
	if v.DebitFileVersion == "" {
		v.DebitFileVersion = payment.DebitFileV08
	}
	if v.DebitPrenotificationDays == 0 {
		v.DebitPrenotificationDays = payment.DefaultPrenotificationDays
	}
	if !ps.UpdatedAt.IsZero() {
		at := ps.UpdatedAt
		v.UpdatedAt = &at
	}
	return v
}

// PaymentSettings returns an organisation's own payment settings (all
// empty when it has none: the environment's apply).
func (s *Service) PaymentSettings(ctx context.Context, orgID int64) (_ *PaymentSettingsView, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if _, err := engine.LoadOrganisation(ctx, s.DB(), orgID); err != nil {
		return nil, err
	}
	ps, err := payment.LoadPaymentSettings(ctx, s.DB(), orgID)
	if err != nil {
		return nil, err
	}
	return paymentSettingsView(ps), nil
}

// SetPaymentSettings applies a change to an organisation's payment
// settings, in one transaction, after checking the settings as they will
// be: a provider this portal offers, a Stripe account's two keys for
// stripe, a valid account (name, IBAN with its check digits and length,
// BIC, the address a Swiss account needs) for bank_transfer or whenever
// bank details are given, and for methods that offer direct_debit a
// Creditor Identifier and a season in euro (a club whose periods are all
// in another currency cannot offer it). Every problem is named by its
// field and nothing changes.
func (s *Service) SetPaymentSettings(ctx context.Context, orgID int64, c PaymentSettingsChange) (_ *PaymentSettingsView, err error) {
	return s.setPaymentSettings(ctx, nil, orgID, c)
}

// StaffSetPaymentSettings is SetPaymentSettings by a staff member, audited
// in its transaction.
func (s *Service) StaffSetPaymentSettings(ctx context.Context, actor engine.Actor, orgID int64, c PaymentSettingsChange) (*PaymentSettingsView, error) {
	return s.setPaymentSettings(ctx, &actor, orgID, c)
}

// paymentSettingsAuditView is what the audit log keeps of payment
// settings: the secrets only as fingerprints (secretAuditValue).
func paymentSettingsAuditView(ps *payment.PaymentSettings) map[string]any {
	return map[string]any{"provider": ps.Provider, "stripeSecretKey": engine.SecretAuditValue(ps.StripeSecretKeySealed),
		"stripeWebhookSecret": engine.SecretAuditValue(ps.StripeWebhookSecretSealed), "bankCreditorName": ps.BankCreditorName,
		"bankIban": ps.BankIBAN, "bankBic": ps.BankBIC, "bankCreditorAddress": ps.BankCreditorAddress,
		"methods": ps.Methods, "debitCreditorId": ps.DebitCreditorID, "debitPrenotificationDays": ps.DebitPrenotificationDays,
		"debitFileVersion": ps.DebitFileVersion, "debitCollectionDay": ps.DebitCollectionDay, "debitReturnFee": engine.FormatAmount(ps.DebitReturnFeeMinor)}
}

// setPaymentSettings is SetPaymentSettings, audited when actor is set.
func (s *Service) setPaymentSettings(ctx context.Context, actor *engine.Actor, orgID int64, c PaymentSettingsChange) (_ *PaymentSettingsView, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	var view *PaymentSettingsView
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := engine.LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		ps, err := payment.LoadPaymentSettings(ctx, tx, orgID)
		if err != nil {
			return err
		}
		existed := !ps.UpdatedAt.IsZero()
		before, audited := *ps, paymentSettingsAuditView(ps)
		// Whether the club may offer direct debit at all is asked when the
		// methods are set: an unrelated change (the account, a key) of a
		// club that offered it before its season moved to another
		// currency is not refused for it (its members are not offered it:
		// payment.MethodTakes).
		debitProblem := ""
		if c.Methods != nil {
			if debitProblem, err = payment.DirectDebitCurrencyProblem(ctx, tx, orgID); err != nil {
				return err
			}
		}
		if err := s.applyPaymentSettings(ps, c, debitProblem); err != nil {
			return err
		}
		ps.OrganisationID, ps.UpdatedAt = orgID, s.Clock()
		if before.StripeSecretKeySealed != ps.StripeSecretKeySealed || before.StripeWebhookSecretSealed != ps.StripeWebhookSecretSealed {
			before.OrganisationID = orgID
			if err := payment.Of(s.Service).RetireStripeCredentials(ctx, tx, &before, ps); err != nil {
				return err
			}
		}
		if existed {
			_, err = tx.NewUpdate().Model(ps).WherePK().Exec(ctx)
		} else {
			_, err = tx.NewInsert().Model(ps).Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("store payment settings: %w", err)
		}
		view = paymentSettingsView(ps)
		if actor == nil {
			return nil
		}
		return s.AppendAudit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "payment_settings.update",
			TargetType: "organisation", TargetID: fmt.Sprint(orgID), Before: audited, After: paymentSettingsAuditView(ps)})
	})
	if err != nil {
		return nil, err
	}
	if s.SettingsChanged != nil {
		s.SettingsChanged(orgID)
	}
	return view, nil
}

// applyPaymentSettings merges a change into ps, checking the result;
// debitProblem says why the organisation cannot offer direct debit ("" when
// it may: payment.DirectDebitCurrencyProblem), refused at the methods
// when they offer it.
func (s *Service) applyPaymentSettings(ps *payment.PaymentSettings, c PaymentSettingsChange, debitProblem string) error {
	var fields []engine.FieldError
	bad := func(field, msg string) { fields = append(fields, engine.FieldError{Field: field, Message: msg}) }
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&ps.Provider, c.Provider)
	applyMethods(ps, c, bad)
	set(&ps.BankCreditorName, c.BankCreditorName)
	set(&ps.BankBIC, c.BankBIC)
	set(&ps.BankCreditorAddress, c.BankCreditorAddress)
	if c.BankIBAN != nil {
		ps.BankIBAN = strings.ToUpper(strings.Join(strings.Fields(*c.BankIBAN), ""))
	}
	// The keys are checked in clear, then sealed.
	stripeKey, stripeKeySet := "", ps.StripeSecretKeySealed != ""
	if c.StripeSecretKey != nil {
		stripeKey, stripeKeySet = strings.TrimSpace(*c.StripeSecretKey), strings.TrimSpace(*c.StripeSecretKey) != ""
		if stripeKey != "" && (!(strings.HasPrefix(stripeKey, "sk_") || strings.HasPrefix(stripeKey, "rk_")) || !engine.Printable(stripeKey, 300)) {
			bad("stripeSecretKey", "must be a Stripe secret key: sk_live_..., sk_test_... or a restricted rk_...")
		}
	}
	hookSecret, hookSecretSet := "", ps.StripeWebhookSecretSealed != ""
	if c.StripeWebhookSecret != nil {
		hookSecret, hookSecretSet = strings.TrimSpace(*c.StripeWebhookSecret), strings.TrimSpace(*c.StripeWebhookSecret) != ""
		if hookSecret != "" && (!strings.HasPrefix(hookSecret, "whsec_") || !engine.Printable(hookSecret, 300)) {
			bad("stripeWebhookSecret", "must be the signing secret of a Stripe webhook endpoint: whsec_...")
		}
	}
	if (stripeKey != "" || hookSecret != "") && s.Sealer == nil {
		bad("stripeSecretKey", "this server has no PORTAL_SESSION_KEY to keep the keys encrypted with")
	}
	bankGiven := ps.BankCreditorName != "" || ps.BankIBAN != "" || ps.BankBIC != "" || ps.BankCreditorAddress != ""
	applyDebitSettings(ps, c, bad)
	needBank := false
	for _, m := range append([]string{ps.Provider}, ps.MethodList()...) {
		switch m {
		case "":
		case payment.BankTransferProvider:
			needBank = true
		case payment.DirectDebitProvider:
			needBank = true
			if debitProblem != "" {
				bad("methods", debitProblem)
			}
			if ps.DebitCreditorID == "" && !slices.ContainsFunc(fields, func(f engine.FieldError) bool { return f.Field == "debitCreditorId" }) {
				bad("debitCreditorId", "is required with the method direct_debit")
			}
		case payment.StripeProvider:
			if !stripeKeySet {
				bad("stripeSecretKey", "is required with the provider stripe")
			}
			if !hookSecretSet {
				bad("stripeWebhookSecret", "is required with the provider stripe")
			}
		case payment.TestGatewayProvider:
			if !s.TestPayments {
				bad("provider", "the test gateway runs only on a development portal (an http loopback PORTAL_BASE_URL)")
			}
		default:
			if m == ps.Provider {
				bad("provider", "must be stripe, bank_transfer or \"\" (the portal's default provider)")
			} else {
				bad("methods", "may name stripe, bank_transfer and direct_debit")
			}
		}
	}
	fields = dedupeFields(fields)
	if needBank || bankGiven {
		if _, err := bankCreditorOf(ps); err != nil {
			fields = append(fields, bankFieldErrors(err)...)
		}
	}
	if len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Some payment settings are not valid.", Fields: fields}
	}
	if c.StripeSecretKey != nil {
		ps.StripeSecretKeySealed = s.sealSecret(ps.OrganisationID, "stripe_secret_key", stripeKey)
	}
	if c.StripeWebhookSecret != nil {
		ps.StripeWebhookSecretSealed = s.sealSecret(ps.OrganisationID, "stripe_webhook_secret", hookSecret)
	}
	return nil
}

func (s *Service) sealSecret(orgID int64, field, secret string) string {
	if secret == "" {
		return ""
	}
	return s.Sealer.Seal([]byte(secret), payment.SecretAAD(orgID, field))
}

// applyMethods merges a change of the methods into ps: a list given makes
// its first method the provider; a provider given alone moves to the
// front of the list when it is in it and otherwise becomes the only method
// (what a client that knows no methods asks for).
func applyMethods(ps *payment.PaymentSettings, c PaymentSettingsChange, bad func(field, msg string)) {
	if c.Methods == nil {
		if c.Provider == nil {
			return
		}
		list := ps.MethodList()
		i := slices.Index(list, ps.Provider)
		if ps.Provider == "" || i < 0 {
			ps.Methods = ""
			return
		}
		list = append([]string{ps.Provider}, slices.Delete(list, i, i+1)...)
		ps.Methods = strings.Join(list, ",")
		return
	}
	var list []string
	for _, m := range *c.Methods {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
			bad("methods", "a method may not be empty")
			return
		case slices.Contains(list, m):
			bad("methods", "names "+m+" twice")
			return
		}
		list = append(list, m)
	}
	if len(list) == 0 {
		ps.Methods = ""
		return
	}
	if c.Provider != nil && ps.Provider != list[0] {
		bad("provider", "must be the first of the methods (the default one)")
		return
	}
	ps.Provider = list[0]
	ps.Methods = strings.Join(list, ",")
	if len(list) == 1 {
		ps.Methods = "" // one method is the provider alone, as before methods
	}
}

// applyDebitSettings merges and checks the direct-debit settings: a
// Creditor Identifier as the rulebook defines it, a pre-notification
// period of 1 to 14 days (a shorter one is stated in the mandate text) and
// a pain.008 version the portal writes.
func applyDebitSettings(ps *payment.PaymentSettings, c PaymentSettingsChange, bad func(field, msg string)) {
	if c.DebitCreditorID != nil {
		ps.DebitCreditorID = ""
		if raw := strings.TrimSpace(*c.DebitCreditorID); raw != "" {
			id, err := banking.ParseCreditorID(raw)
			if err != nil {
				bad("debitCreditorId", err.Error())
			} else {
				ps.DebitCreditorID = id
			}
		}
	}
	if ps.DebitPrenotificationDays == 0 {
		ps.DebitPrenotificationDays = payment.DefaultPrenotificationDays
	}
	if c.DebitPrenotificationDays != nil {
		ps.DebitPrenotificationDays = *c.DebitPrenotificationDays
		if ps.DebitPrenotificationDays < 1 || ps.DebitPrenotificationDays > payment.DefaultPrenotificationDays {
			bad("debitPrenotificationDays", "must be 1 to 14 calendar days (14 unless the club states a shorter period)")
		}
	}
	if c.DebitFileVersion != nil {
		ps.DebitFileVersion = strings.TrimSpace(*c.DebitFileVersion)
		if ps.DebitFileVersion == payment.DebitFileV08 {
			ps.DebitFileVersion = ""
		}
		if ps.DebitFileVersion != "" && ps.DebitFileVersion != payment.DebitFileV02 {
			bad("debitFileVersion", "must be pain.008.001.08 or pain.008.001.02")
		}
	}
	if c.DebitCollectionDay != nil {
		ps.DebitCollectionDay = *c.DebitCollectionDay
		if ps.DebitCollectionDay < 0 || ps.DebitCollectionDay > 28 {
			bad("debitCollectionDay", "must be a day of the month from 1 to 28, or 0 for the first business day the pre-notification allows")
		}
	}
	if c.DebitReturnFeeMinor != nil {
		ps.DebitReturnFeeMinor = *c.DebitReturnFeeMinor
		if ps.DebitReturnFeeMinor < 0 || ps.DebitReturnFeeMinor > 10000 {
			bad("debitReturnFeeMinor", "must be an amount from 0.00 to 100.00 (0 to 10000 in minor units)")
		}
	}
}

// dedupeFields keeps the first error of each field and message (a
// provider checked as the default and again among the methods).
func dedupeFields(fields []engine.FieldError) []engine.FieldError {
	var out []engine.FieldError
	for _, f := range fields {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// bankCreditorOf reads the stored bank details as banking's creditor,
// checked by banking's own rules.
func bankCreditorOf(ps *payment.PaymentSettings) (banking.Creditor, error) {
	c := banking.Creditor{Name: ps.BankCreditorName, IBAN: banking.IBAN(ps.BankIBAN), BIC: ps.BankBIC}
	var errs []error
	if ps.BankCreditorAddress != "" {
		a, err := banking.ParseAddress(ps.BankCreditorAddress)
		if err != nil {
			errs = append(errs, &banking.FieldError{Field: "creditor address", Problem: err.Error()})
		} else {
			c.Address = &a
		}
	}
	// Validate checks every field on its own, so that settings with
	// several mistakes are told all of them at once.
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return banking.Creditor{}, errors.Join(errs...)
	}
	c.IBAN, _ = banking.ParseIBAN(ps.BankIBAN) // valid: Validate parsed it
	if c.BIC != "" {
		c.BIC, _ = banking.ParseBIC(c.BIC)
	}
	return c, nil
}

// bankFieldNames maps banking's field names to the settings' own.
var bankFieldNames = map[string]string{
	"creditor name": "bankCreditorName", "IBAN": "bankIban", "BIC": "bankBic", "creditor address": "bankCreditorAddress",
}

// bankFieldErrors names banking's validation errors by the settings' fields.
func bankFieldErrors(err error) []engine.FieldError {
	var out []engine.FieldError
	var walk func(error)
	walk = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		var fe *banking.FieldError
		if errors.As(err, &fe) {
			name := fe.Field
			for prefix, field := range bankFieldNames {
				if strings.HasPrefix(fe.Field, prefix) {
					name = field
				}
			}
			out = append(out, engine.FieldError{Field: name, Message: fe.Problem})
			return
		}
		out = append(out, engine.FieldError{Field: "bankIban", Message: err.Error()})
	}
	walk(err)
	return out
}

// OrganisationPaymentConfig is an organisation's own payment settings in
// clear, for building its provider; only the provider directory asks.
type OrganisationPaymentConfig struct {
	OrganisationID      int64
	Provider            string
	StripeSecretKey     string
	StripeWebhookSecret string
	// Retired are the organisation's earlier Stripe credentials, newest
	// first, whose checkouts may still be open or paid (engine/payment/accounts.go).
	Retired []RetiredStripeCredentials
	// Methods are the methods the members choose from, Provider first.
	Methods []string
	// Creditor is the bank account; its IBAN is "" when none is set.
	Creditor banking.Creditor
	// CreditorID is the SEPA Creditor Identifier (direct debit).
	CreditorID string
	UpdatedAt  time.Time
	// Err says why the settings could not be used (a secret no key opens,
	// bank details no longer valid): the organisation then has no provider.
	Err error
}

// RetiredStripeCredentials are earlier Stripe credentials, in clear.
type RetiredStripeCredentials struct {
	SecretKey, WebhookSecret string
}

// OrganisationPaymentConfigs lists the organisations that chose a
// provider of their own, with their secrets opened.
func (s *Service) OrganisationPaymentConfigs(ctx context.Context) (_ []OrganisationPaymentConfig, err error) {
	var rows []payment.PaymentSettings
	if err := s.DB().NewSelect().Model(&rows).Where("provider <> ''").Order("organisation_id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payment settings: %w", err)
	}
	var retired []payment.RetiredPaymentAccount
	if err := s.DB().NewSelect().Model(&retired).Order("organisation_id ASC", "id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load retired payment accounts: %w", err)
	}
	retiredOf := map[int64][]payment.RetiredPaymentAccount{}
	for _, r := range retired {
		retiredOf[r.OrganisationID] = append(retiredOf[r.OrganisationID], r)
	}
	out := make([]OrganisationPaymentConfig, 0, len(rows))
	for _, ps := range rows {
		cfg := OrganisationPaymentConfig{OrganisationID: ps.OrganisationID, Provider: ps.Provider, Methods: ps.MethodList(),
			CreditorID: ps.DebitCreditorID, UpdatedAt: ps.UpdatedAt}
		var errs []error
		open := func(field, sealed string) string {
			if sealed == "" {
				return ""
			}
			if s.Sealer == nil {
				errs = append(errs, fmt.Errorf("%s: no PORTAL_SESSION_KEY to open it", field))
				return ""
			}
			pt, err := s.Sealer.Open(sealed, payment.SecretAAD(ps.OrganisationID, field))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", field, err))
			}
			return string(pt)
		}
		cfg.StripeSecretKey = open("stripe_secret_key", ps.StripeSecretKeySealed)
		cfg.StripeWebhookSecret = open("stripe_webhook_secret", ps.StripeWebhookSecretSealed)
		for _, r := range retiredOf[ps.OrganisationID] {
			key, kerr := payment.Of(s.Service).OpenSecret(ps.OrganisationID, "stripe_secret_key", r.StripeSecretKeySealed)
			hook, herr := payment.Of(s.Service).OpenSecret(ps.OrganisationID, "stripe_webhook_secret", r.StripeWebhookSecretSealed)
			if kerr != nil || herr != nil || key == "" {
				continue // credentials no key opens are of no use; the current ones still work
			}
			cfg.Retired = append(cfg.Retired, RetiredStripeCredentials{SecretKey: key, WebhookSecret: hook})
		}
		if len(retiredOf[ps.OrganisationID]) > 0 {
			// A retirement changes what the directory builds: it must rebuild.
			if at := retiredOf[ps.OrganisationID][0].RetiredAt; at.After(cfg.UpdatedAt) {
				cfg.UpdatedAt = at
			}
		}
		if ps.BankIBAN != "" {
			c, err := bankCreditorOf(&ps)
			if err != nil {
				errs = append(errs, fmt.Errorf("bank details: %w", err))
			}
			cfg.Creditor = c
		}
		cfg.Err = errors.Join(errs...)
		out = append(out, cfg)
	}
	return out, nil
}
