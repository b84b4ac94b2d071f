// Package engine is the membership registration domain: process definitions
// and instances, answer validation, pricing, memberships, orders and
// payments, stored with bun on PostgreSQL or SQLite. It knows nothing of HTTP.
package engine

import (
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/clock"
)

// Service runs registrations. It is safe for concurrent use.
type Service struct {
	db       *bun.DB
	Payments PaymentProvider
	// pickProvider chooses an organisation's provider; nil: payments for all.
	PickProvider func(organisationID int64) PaymentProvider
	// pickMethod finds the provider of one of an organisation's payment
	// methods (engine/payment/methods.go); nil: its provider for every method.
	PickMethod func(organisationID int64, method string) PaymentProvider
	// retiredProviders are an organisation's providers of earlier
	// credentials (engine/payment/accounts.go); nil: none.
	RetiredProviders func(organisationID int64) []PaymentProvider
	Links            PaymentLinks
	// reconcileAfter: a pending attempt older than this is asked about on load.
	ReconcileAfter time.Duration
	// publicURL: the portal's public address (WithPublicURL), for each
	// organisation's payment addresses; "" uses the links' own base.
	publicURL string
	// sealer seals the organisations' payment secrets; testPayments lets
	// them choose the test gateway; settingsChanged hears of a change to
	// an organisation's payment settings (engine/payment/settings.go).
	Sealer          SecretSealer
	PrivateWebhooks bool            // WithPrivateWebhookAddresses
	WebhookNetworks WebhookNetworks // WithWebhookNetworks
	TestPayments    bool
	SettingsChanged func(organisationID int64)
	// subjects holds the state subjects keep for the service's life
	// (SubjectState).
	subjects sync.Map
	Prepared *preparedStatements // the question step's statements on PostgreSQL (engine/registration/question_step.go)
	now      func() time.Time
	Log      *slog.Logger
}

// ServiceOption configures a Service.
type ServiceOption func(*Service)

// WithClock replaces the clock (tests use it for pricing windows).
func WithClock(now func() time.Time) ServiceOption { return func(s *Service) { s.now = now } }

// WithLogger sets the logger for events worth an operator's attention.
func WithLogger(l *slog.Logger) ServiceOption { return func(s *Service) { s.Log = l } }

// NewService returns a Service on db that takes payments through payments.
func NewService(db *bun.DB, payments PaymentProvider, opts ...ServiceOption) *Service {
	s := &Service{db: db, Payments: payments, Links: defaultPaymentLinks(), ReconcileAfter: DefaultReconcileAfter, now: clock.Now, Log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	s.Prepared = newPreparedStatements(db)
	return s
}

// DB returns the service's database, for health checks.
func (s *Service) DB() *bun.DB { return s.db }

// Clock is the engine's one source of time: every time written or compared
// in a transaction comes from here, and store functions take it as a
// parameter, so WithClock moves all of them together.
func (s *Service) Clock() time.Time { return s.now().UTC() }

// SubjectState is what a subject keeps for the life of the service, such
// as engine/definition's cache of parsed definitions: the value stored
// under key, made by init on first use. Each subject's key is a type of
// its own, so no two share a slot.
func (s *Service) SubjectState(key any, init func() any) any {
	if v, ok := s.subjects.Load(key); ok {
		return v
	}
	v, _ := s.subjects.LoadOrStore(key, init())
	return v
}
