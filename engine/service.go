// Package engine is the membership registration domain: process definitions
// and instances, answer validation, pricing, memberships, orders and
// payments, stored with bun on PostgreSQL or SQLite. It knows nothing of HTTP.
package engine

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// Service runs registrations. It is safe for concurrent use.
type Service struct {
	db       *bun.DB
	payments PaymentProvider
	// pickProvider chooses an organisation's provider; nil: payments for all.
	pickProvider func(organisationID int64) PaymentProvider
	// pickMethod finds the provider of one of an organisation's payment
	// methods (payment_methods.go); nil: its provider for every method.
	pickMethod func(organisationID int64, method string) PaymentProvider
	// retiredProviders are an organisation's providers of earlier
	// credentials (payment_accounts.go); nil: none.
	retiredProviders func(organisationID int64) []PaymentProvider
	links            PaymentLinks
	// reconcileAfter: a pending attempt older than this is asked about on load.
	reconcileAfter time.Duration
	// publicURL: the portal's public address (WithPublicURL), for each
	// organisation's payment addresses; "" uses the links' own base.
	publicURL string
	// sealer seals the organisations' payment secrets; testPayments lets
	// them choose the test gateway; settingsChanged hears of a change to
	// an organisation's payment settings (payment_settings.go).
	Sealer          SecretSealer
	PrivateWebhooks bool            // WithPrivateWebhookAddresses
	WebhookNetworks WebhookNetworks // WithWebhookNetworks
	testPayments    bool
	settingsChanged func(organisationID int64)
	defs            definitionCache
	prepared        *preparedStatements // the question step's statements on PostgreSQL (question_step.go)
	now             func() time.Time
	Log             *slog.Logger
}

// ServiceOption configures a Service.
type ServiceOption func(*Service)

// WithClock replaces the clock (tests use it for pricing windows).
func WithClock(now func() time.Time) ServiceOption { return func(s *Service) { s.now = now } }

// WithLogger sets the logger for events worth an operator's attention.
func WithLogger(l *slog.Logger) ServiceOption { return func(s *Service) { s.Log = l } }

// NewService returns a Service on db that takes payments through payments.
func NewService(db *bun.DB, payments PaymentProvider, opts ...ServiceOption) *Service {
	s := &Service{db: db, payments: payments, links: defaultPaymentLinks(), reconcileAfter: DefaultReconcileAfter, now: time.Now, Log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	s.prepared = newPreparedStatements(db)
	return s
}

// DB returns the service's database, for health checks.
func (s *Service) DB() *bun.DB { return s.db }

// clock is the engine's one source of time: every time written or compared
// in a transaction comes from here, and store functions take it as a
// parameter, so WithClock moves all of them together.
func (s *Service) Clock() time.Time { return s.now().UTC() }

// parseProcessID reads a process id; anything malformed is simply not found.
func parseProcessID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, Errorf(CodeNotFound, "process instance not found")
	}
	return id, nil
}

// loadOpen loads an instance of userKey that is neither committed nor
// finished, with its definition version.
func (s *Service) loadOpen(ctx context.Context, db bun.IDB, userKey, processID string) (*ProcessInstance, *definition, error) {
	inst, err := loadInstance(ctx, db, userKey, processID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOpen(inst); err != nil {
		return nil, nil, err
	}
	def, err := s.defs.get(ctx, db, inst.DefinitionID)
	if err != nil {
		return nil, nil, err
	}
	return inst, def, nil
}

// answersOf indexes answers by step and person.
func answersOf(rows []ProcessData) map[int64]map[int64]string {
	out := map[int64]map[int64]string{}
	for _, r := range rows {
		if r.DataKey != DataAnswer || r.StepID == nil || r.PersonID == nil {
			continue
		}
		if out[*r.StepID] == nil {
			out[*r.StepID] = map[int64]string{}
		}
		out[*r.StepID][*r.PersonID] = r.DataValue
	}
	return out
}

// loadUnfinished loads an instance of userKey that is not finished
// (completed, cancelled, failed); a finished one is a conflict: "this
// registration is already completed" and then refusal, such as " and
// cannot be reset".
func loadUnfinished(ctx context.Context, db bun.IDB, userKey, processID, refusal string) (*ProcessInstance, error) {
	inst, err := loadInstance(ctx, db, userKey, processID)
	if err != nil {
		return nil, err
	}
	if finished(inst.Status) {
		return nil, Errorf(CodeConflict, "this registration is already %s%s", stateWord(inst.Status), refusal)
	}
	return inst, nil
}
