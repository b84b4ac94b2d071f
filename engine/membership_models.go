package engine

import (
	"time"

	"github.com/uptrace/bun"
)

// Organisation is a club or federation that runs membership periods.
// A request resolves to one organisation (organisations.go), the one word
// the portal uses for what others call a tenant, which scopes everything it may see.
type Organisation struct {
	bun.BaseModel   `bun:"table:organisations"`
	ID              int64  `bun:"id,pk,autoincrement"`
	Name            string `bun:"name,notnull"`
	Slug            string `bun:"slug,notnull"`
	ContactEmail    string `bun:"contact_email,notnull"`
	LogoURL         string `bun:"logo_url,notnull"`
	AccentColour    string `bun:"accent_colour,notnull"`
	DefaultLanguage string `bun:"default_language,notnull"`
	// EnabledLanguages are the languages offered to its members, as
	// comma-separated codes out of Languages (EnabledLanguageList).
	EnabledLanguages string `bun:"enabled_languages,notnull"`
	// RegistrationSystemID is what the hash login tells the admin backend
	// this organisation is; "" tells it nothing.
	RegistrationSystemID string `bun:"registration_system_id,notnull"`
	// HashSecretSealed is the organisation's own hash-link secret, sealed
	// by the caller with the session key; "" means the environment's.
	// The engine never sees it in clear.
	HashSecretSealed string `bun:"hash_secret_sealed,notnull"`
	// HashLinksOff refuses the spec's never-expiring hash links once the
	// organisation's external system sends the portal's invitation links.
	HashLinksOff bool `bun:"hash_links_off,notnull"`
	// InvitationExpiryDays is how long a new invitation stays valid;
	// 0: DefaultInvitationExpiry.
	InvitationExpiryDays int `bun:"invitation_expiry_days,notnull"`
	// TimeZone is the club's IANA time zone (Europe/Berlin, the default):
	// its "today" for a capture booked without a date (Today).
	TimeZone  string    `bun:"time_zone,notnull,default:'Europe/Berlin'"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	// Hostnames are the hosts that resolve to it (organisation_hosts).
	Hostnames []string `bun:"-"`
}

// Person is someone who can hold a membership.
type Person struct {
	bun.BaseModel  `bun:"table:persons"`
	ID             int64     `bun:"id,pk,autoincrement"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	FirstName      string    `bun:"first_name,notnull"`
	LastName       string    `bun:"last_name,notnull"`
	DateOfBirth    time.Time `bun:"date_of_birth,notnull,type:date"`
	Email          string    `bun:"email,notnull"`
	// ExternalID is the external system's own id of the person, the key of
	// the admin API's person import; nil for persons made otherwise.
	ExternalID *string   `bun:"external_id"`
	CreatedAt  time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	// ErasedAt is when the person's data was erased (engine/privacy/personal_erasure.go):
	// the row stays for the books with its names replaced.
	ErasedAt *time.Time `bun:"erased_at"`
}

// UserPerson links a user key (the identity of a hash link) to a person it may register.
type UserPerson struct {
	bun.BaseModel  `bun:"table:user_persons"`
	UserKey        string `bun:"user_key,pk"`
	PersonID       int64  `bun:"person_id,pk"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
}

// MembershipType is a category of membership; the age at the period's start decides it.
type MembershipType struct {
	bun.BaseModel  `bun:"table:membership_types"`
	ID             int64  `bun:"id,pk,autoincrement"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
	Code           string `bun:"code,notnull"`
	Name           string `bun:"name,notnull"`
	// NameTexts are the name per language (club_texts.go); Name is the
	// default language's.
	NameTexts Texts `bun:"name_texts,notnull"`
	MinAge    *int  `bun:"min_age"`
	MaxAge    *int  `bun:"max_age"`
}

// Period statuses.
const (
	PeriodOpen   = "open"
	PeriodClosed = "closed"
)

// MembershipPeriod is a season members register for.
type MembershipPeriod struct {
	bun.BaseModel  `bun:"table:membership_periods"`
	ID             int64  `bun:"id,pk,autoincrement"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
	Name           string `bun:"name,notnull"`
	// NameTexts are the name per language (club_texts.go); Name is the
	// default language's.
	NameTexts     Texts     `bun:"name_texts,notnull"`
	StartDate     time.Time `bun:"start_date,notnull,type:date"`
	EndDate       time.Time `bun:"end_date,notnull,type:date"`
	Status        string    `bun:"status,notnull"`
	Currency      string    `bun:"currency,notnull"`
	DefinitionKey string    `bun:"definition_key,notnull"`
}

// AcceptsRegistrations reports whether members may register for the period at now.
func (p *MembershipPeriod) AcceptsRegistrations(now time.Time) bool {
	lastDay := p.EndDate.AddDate(0, 0, 1)
	return p.Status == PeriodOpen && now.Before(lastDay)
}

// PriceRuleKind says what a price rule does (and what an order line
// it priced is).
type PriceRuleKind string

// Price rule kinds.
const (
	RuleMembershipFee PriceRuleKind = "MEMBERSHIP_FEE"
	RuleMemberType    PriceRuleKind = "MEMBER_TYPE"
	RuleEarlyBird     PriceRuleKind = "EARLY_BIRD"
	RuleLateFee       PriceRuleKind = "LATE_FEE"
	RuleFamily        PriceRuleKind = "FAMILY"
	RuleAdminFee      PriceRuleKind = "ADMIN_FEE"
)

// Member types, decided per person at commit.
const (
	MemberNew      = "NEW"
	MemberRenewal  = "RENEWAL"
	MemberTransfer = "TRANSFER"
)

// PriceRule is one piece of a period's pricing. Exactly one of AmountMinor
// and PercentBP is set; a percentage applies to the person's membership fee.
type PriceRule struct {
	bun.BaseModel `bun:"table:price_rules"`
	ID            int64         `bun:"id,pk,autoincrement"`
	PeriodID      int64         `bun:"period_id,notnull"`
	Code          string        `bun:"code,notnull"`
	Kind          PriceRuleKind `bun:"kind,notnull"`
	Label         string        `bun:"label,notnull"`
	// LabelTexts are the label per language (club_texts.go); Label is
	// the default language's.
	LabelTexts       Texts      `bun:"label_texts,notnull"`
	MembershipTypeID *int64     `bun:"membership_type_id"`
	MemberType       *string    `bun:"member_type"`
	MinPersons       *int       `bun:"min_persons"`
	ValidFrom        *time.Time `bun:"valid_from"`
	ValidUntil       *time.Time `bun:"valid_until"`
	AmountMinor      *int64     `bun:"amount_minor"`
	PercentBP        *int       `bun:"percent_bp"`
}

// MembershipStatus is the stored status of a membership.
type MembershipStatus string

// Membership statuses.
const (
	MembershipPending   MembershipStatus = "Pending Payment"
	MembershipActive    MembershipStatus = "Active"
	MembershipCancelled MembershipStatus = "Cancelled"
)

// Membership links a person to a period.
type Membership struct {
	bun.BaseModel     `bun:"table:memberships"`
	ID                int64            `bun:"id,pk,autoincrement"`
	PersonID          int64            `bun:"person_id,notnull"`
	PeriodID          int64            `bun:"period_id,notnull"`
	MembershipTypeID  int64            `bun:"membership_type_id,notnull"`
	MemberType        string           `bun:"member_type,notnull"`
	Status            MembershipStatus `bun:"status,notnull"`
	ProcessInstanceID *int64           `bun:"process_instance_id"`
	CreatedAt         time.Time        `bun:"created_at,notnull"`
	ActivatedAt       *time.Time       `bun:"activated_at"`
}

// OrderStatus is the stored status of an order.
type OrderStatus string

// Order statuses.
const (
	OrderUnpaid    OrderStatus = "Unpaid"
	OrderPaid      OrderStatus = "Paid"
	OrderCancelled OrderStatus = "Cancelled"
)

// Order is what a committed registration costs.
type Order struct {
	bun.BaseModel     `bun:"table:orders"`
	ID                int64       `bun:"id,pk,autoincrement"`
	ProcessInstanceID int64       `bun:"process_instance_id,notnull"`
	OrganisationID    int64       `bun:"organisation_id,notnull"`
	PeriodID          int64       `bun:"period_id,notnull"`
	UserKey           string      `bun:"user_key,notnull"`
	Status            OrderStatus `bun:"status,notnull"`
	TotalMinor        int64       `bun:"total_minor,notnull"`
	Currency          string      `bun:"currency,notnull"`
	CreatedAt         time.Time   `bun:"created_at,notnull"`
	PaidAt            *time.Time  `bun:"paid_at"`
	// PayReference is the order's stable payment reference, the one the pay
	// link {base}/pay/{reference} carries across attempts.
	PayReference string `bun:"pay_reference,nullzero"`
	// PaymentMethod is the method the member chose (a provider's name);
	// "" for the club's default. Its attempts are made with that method.
	PaymentMethod string `bun:"payment_method,notnull"`
	// DebitMandateID is the SEPA mandate a direct-debit order is
	// collected under (engine/directdebit/debit_mandates.go); nil before one is given.
	DebitMandateID *int64 `bun:"debit_mandate_id"`
	// DebitDueOn is the date a direct-debit order is to be collected
	// (engine/payment/debit_collection.go), set when its mandate is given; nil before.
	DebitDueOn *time.Time `bun:"debit_due_on,type:date"`
	// DebitProblem says in words why a collection run could not put the
	// order's debit into its file (engine/directdebit/debit_runs.go), and
	// DebitProblemRunID which run left it out (nil when no run could be
	// written); "" once a run takes it or its mandate is given, kept or
	// changed again.
	DebitProblem      string      `bun:"debit_problem,notnull"`
	DebitProblemRunID *int64      `bun:"debit_problem_run_id"`
	Lines             []OrderLine `bun:"rel:has-many,join:id=order_id"`
}

// LineKind is what an order line is for: the kind of the price rule that
// made it (PriceRuleKind), or a fee added to the order later
// (DebitReturnFeeKind).
type LineKind string

// OrderLine is one frozen price component of an order.
type OrderLine struct {
	bun.BaseModel `bun:"table:order_lines"`
	ID            int64    `bun:"id,pk,autoincrement"`
	OrderID       int64    `bun:"order_id,notnull"`
	LineNo        int      `bun:"line_no,notnull"`
	PersonID      *int64   `bun:"person_id"`
	Kind          LineKind `bun:"kind,notnull"`
	Code          string   `bun:"code,notnull"`
	Description   string   `bun:"description,notnull"`
	AmountMinor   int64    `bun:"amount_minor,notnull"`
	Currency      string   `bun:"currency,notnull"`
}

// PaymentStatus is the stored status of a payment attempt.
type PaymentStatus string

// Payment statuses.
const (
	PaymentPending   PaymentStatus = "PENDING"
	PaymentSucceeded PaymentStatus = "SUCCEEDED"
	PaymentFailed    PaymentStatus = "FAILED"
	PaymentCancelled PaymentStatus = "CANCELLED"
)

// Payment is one attempt to pay an order at a payment provider.
type Payment struct {
	bun.BaseModel `bun:"table:payments"`
	ID            int64         `bun:"id,pk,autoincrement"`
	OrderID       int64         `bun:"order_id,notnull"`
	Provider      string        `bun:"provider,notnull"`
	Reference     string        `bun:"reference,notnull"`
	AmountMinor   int64         `bun:"amount_minor,notnull"`
	Currency      string        `bun:"currency,notnull"`
	Status        PaymentStatus `bun:"status,notnull"`
	TransactionID *string       `bun:"transaction_id"`
	PaymentURL    string        `bun:"payment_url,notnull"`
	CreatedAt     time.Time     `bun:"created_at,notnull"`
	UpdatedAt     time.Time     `bun:"updated_at,notnull"`
	// ProviderID is the provider's id of the checkout (a Stripe Checkout Session id).
	ProviderID *string `bun:"provider_id"`
	// Account is the provider account that made the attempt
	// (PaymentAccount of its credentials; "" for providers without
	// accounts): its retrieval, refund and expiry go there.
	Account string `bun:"account,notnull"`
	// ExpiresAt is when the checkout stops taking payments; nil: never.
	ExpiresAt *time.Time `bun:"expires_at"`
	// ConfirmingAt is when the provider reported the payment as processing
	// (an asynchronous method such as SEPA debit confirms later).
	ConfirmingAt *time.Time `bun:"confirming_at"`
	// Problem describes a confirmation that did not match the attempt
	// (amount or currency); such an attempt never completes an order.
	Problem         string  `bun:"problem,notnull"`
	PaidAmountMinor *int64  `bun:"paid_amount_minor"`
	PaidCurrency    *string `bun:"paid_currency"`
	// RefundStatus is "" (none), "DUE" (a second payment of a paid or
	// cancelled order, to be refunded) or "DONE" (refunded: RefundID).
	RefundStatus RefundStatus `bun:"refund_status,notnull"`
	RefundID     *string      `bun:"refund_id"`
	// RefundManual: the refund due is a transfer staff make (the money
	// came by bank transfer); RefundedAt and RefundNote record when they
	// marked it paid back (MarkRefundPaidBack) and their note.
	RefundManual bool       `bun:"refund_manual,notnull"`
	RefundedAt   *time.Time `bun:"refunded_at"`
	RefundNote   string     `bun:"refund_note,notnull"`
}

// RefundStatus is the stored refund state of a payment attempt; "" is
// none.
type RefundStatus string

// Refund statuses of a payment attempt.
const (
	RefundDue  RefundStatus = "DUE"
	RefundDone RefundStatus = "DONE"
)

// PaymentEvent is one confirmation of an attempt as a provider sent it (a
// webhook event, with its id stored once) or as we retrieved it.
type PaymentEvent struct {
	bun.BaseModel `bun:"table:payment_events"`
	ID            int64          `bun:"id,pk,autoincrement"`
	Provider      string         `bun:"provider,notnull"`
	EventID       *string        `bun:"event_id"`
	EventType     string         `bun:"event_type,notnull"`
	Reference     string         `bun:"reference,notnull"`
	Outcome       PaymentOutcome `bun:"outcome,notnull"`
	AmountMinor   *int64         `bun:"amount_minor"`
	Currency      *string        `bun:"currency"`
	Note          string         `bun:"note,notnull"`
	CreatedAt     time.Time      `bun:"created_at,notnull"`
}

// MessageKind says what an outbox message is (the welcome, the unpaid
// reminder, ...); the job that sends it has the same kind.
type MessageKind string

// OutboxMessage is a message to send, recorded with the change it announces.
type OutboxMessage struct {
	bun.BaseModel `bun:"table:outbox_messages"`
	ID            int64       `bun:"id,pk,autoincrement"`
	Kind          MessageKind `bun:"kind,notnull"`
	DedupKey      string      `bun:"dedup_key,notnull"`
	Recipient     string      `bun:"recipient,notnull"`
	Payload       string      `bun:"payload,notnull"`
	CreatedAt     time.Time   `bun:"created_at,notnull"`
	SentAt        *time.Time  `bun:"sent_at"`
	// OrderID and InstanceID are the order ("…:order:ID", "…:order:ID:…")
	// and the registration ("…:instance:ID:…") the key names, nil when it
	// names none: generated by the database from the key (migration
	// 20270121000031), so only read, and indexed, where LIKE on the key was not.
	OrderID    *int64 `bun:"order_id,scanonly"`
	InstanceID *int64 `bun:"instance_id,scanonly"`
}

// OutboxJob is the payload of a job delivering an outbox message.
type OutboxJob struct {
	Message string `json:"message"` // the message's dedup key
}

// Person statuses as the form shows them.
const (
	PersonAvailable      = "Available"
	PersonPendingPayment = "Pending Payment"
	PersonRegistered     = "Registered"
)
