package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// An organisation's own payment settings: which provider its members pay
// through, its Stripe account's keys and its bank account. An
// organisation without them pays through the environment's provider
// (PORTAL_PAYMENT_PROVIDER and its settings). The Stripe keys are sealed
// before they are stored and never leave the engine in clear except
// towards the provider directory that builds the organisation's provider
// (engine/payment/settings changes them and opens them for it).

// Names of the payment providers an organisation may choose.
const (
	StripeProvider      = "stripe"
	TestGatewayProvider = "test"
	// DirectDebitProvider is SEPA Direct Debit from the member's account
	// to the club's own (issue 29): the club collects by a pain.008 file.
	DirectDebitProvider = "direct_debit"
)

// DefaultPrenotificationDays is the SEPA pre-notification period a club
// gives unless it states a shorter one (the EPC SDD Core rulebook's 14
// calendar days).
const DefaultPrenotificationDays = 14

// Versions of the pain.008 collection file a club's bank accepts.
const (
	DebitFileV08 = "pain.008.001.08"
	DebitFileV02 = "pain.008.001.02"
)

// PaymentSettings is an organisation's stored payment settings row.
type PaymentSettings struct {
	bun.BaseModel             `bun:"table:organisation_payment_settings"`
	OrganisationID            int64  `bun:"organisation_id,pk"`
	Provider                  string `bun:"provider,notnull"`
	StripeSecretKeySealed     string `bun:"stripe_secret_key_sealed,notnull"`
	StripeWebhookSecretSealed string `bun:"stripe_webhook_secret_sealed,notnull"`
	BankCreditorName          string `bun:"bank_creditor_name,notnull"`
	BankIBAN                  string `bun:"bank_iban,notnull"`
	BankBIC                   string `bun:"bank_bic,notnull"`
	// BankCreditorAddress is street;number;postcode;town;country, as
	// PORTAL_BANK_CREDITOR_ADDRESS; "" for none.
	BankCreditorAddress string `bun:"bank_creditor_address,notnull"`
	// Methods are the payment methods the members choose from,
	// comma-separated, the default first; "" offers Provider alone.
	Methods string `bun:"methods,notnull"`
	// DebitCreditorID is the club's SEPA Creditor Identifier (direct debit).
	DebitCreditorID string `bun:"debit_creditor_id,notnull"`
	// DebitPrenotificationDays is how many calendar days before a
	// collection the member is told of it (14 unless the club states less).
	DebitPrenotificationDays int `bun:"debit_prenotification_days,notnull"`
	// DebitFileVersion is the pain.008 version of the collection files;
	// "" for DebitFileV08.
	DebitFileVersion string `bun:"debit_file_version,notnull"`
	// DebitCollectionDay is the day of the month the club collects (1 to
	// 28); 0 collects on the first TARGET business day the
	// pre-notification period allows (debitDueDate).
	DebitCollectionDay int `bun:"debit_collection_day,notnull"`
	// DebitReturnFeeMinor is the fee the club's bank charges for a
	// returned debit, added to the order it returned; 0 for none.
	DebitReturnFeeMinor int64     `bun:"debit_return_fee_minor,notnull"`
	UpdatedAt           time.Time `bun:"updated_at,notnull"`
}

// MethodList is the payment methods the settings offer, the default
// first; nil when the organisation pays through the environment's provider.
func (ps *PaymentSettings) MethodList() []string {
	if ps.Methods != "" {
		return strings.Split(ps.Methods, ",")
	}
	if ps.Provider != "" {
		return []string{ps.Provider}
	}
	return nil
}

// WithTestPayments allows organisations to choose the test gateway; only
// a portal on an http loopback address does (as PORTAL_PAYMENT_PROVIDER=test).
func WithTestPayments(allowed bool) engine.ServiceOption {
	return func(svc *engine.Service) { svc.TestPayments = allowed }
}

// WithPaymentSettingsChanged is told the organisation whose payment
// settings were just changed, so that its provider is rebuilt at once.
func WithPaymentSettingsChanged(fn func(organisationID int64)) engine.ServiceOption {
	return func(svc *engine.Service) { svc.SettingsChanged = fn }
}

// SecretAAD binds a sealed payment secret to its organisation and field.
func SecretAAD(orgID int64, field string) []byte {
	return []byte("organisation:" + strconv.FormatInt(orgID, 10) + ":" + field)
}

// LoadPaymentSettings loads an organisation's row; an empty one (zero
// UpdatedAt) when it has none.
func LoadPaymentSettings(ctx context.Context, db bun.IDB, orgID int64) (*PaymentSettings, error) {
	ps := &PaymentSettings{OrganisationID: orgID}
	err := db.NewSelect().Model(ps).WherePK().Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load payment settings: %w", err)
	}
	if err != nil {
		return &PaymentSettings{OrganisationID: orgID}, nil
	}
	return ps, nil
}
