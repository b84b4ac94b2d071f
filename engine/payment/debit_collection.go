package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
)

// Collecting SEPA direct debits (issue 29): the unpaid orders whose
// mandate is given fall due on a collection day; a collection run gathers
// the due debits of a club into one pain.008 file for its bank; marking
// the run sent settles their payments like every other method; a return
// in the bank statement takes one back (engine/directdebit/debit_returns.go).

// DebitRunStatus is where a collection run stands.
type DebitRunStatus string

// The states of a collection run.
const (
	// DebitRunPrepared: the file is written and may be downloaded (again,
	// unchanged) and cancelled as a whole.
	DebitRunPrepared DebitRunStatus = "prepared"
	// DebitRunSent: staff handed the file to the bank (or its due date
	// passed); its payments are settled as paid.
	DebitRunSent DebitRunStatus = "sent"
	// DebitRunCancelled: the file was withdrawn before it was sent; its
	// debits are due again for the next run.
	DebitRunCancelled DebitRunStatus = "cancelled"
)

// DebitRun is one collection file of a club.
type DebitRun struct {
	bun.BaseModel  `bun:"table:debit_runs"`
	ID             int64          `bun:"id,pk,autoincrement"`
	OrganisationID int64          `bun:"organisation_id,notnull"`
	MessageID      string         `bun:"message_id,notnull"`
	FileVersion    string         `bun:"file_version,notnull"`
	UntilOn        time.Time      `bun:"until_on,notnull,type:date"`
	Status         DebitRunStatus `bun:"status,notnull"`
	DebitCount     int            `bun:"debit_count,notnull"`
	TotalMinor     int64          `bun:"total_minor,notnull"`
	Currency       string         `bun:"currency,notnull"`
	// File is the pain.008 document exactly as first written.
	File        []byte     `bun:"file,notnull"`
	CreatedBy   string     `bun:"created_by,notnull"`
	CreatedAt   time.Time  `bun:"created_at,notnull"`
	SentAt      *time.Time `bun:"sent_at"`
	CancelledAt *time.Time `bun:"cancelled_at"`
}

// DebitStatus is where one debit of a run stands.
type DebitStatus string

// The states of a debit.
const (
	DebitInRun     DebitStatus = "in_run"
	DebitCollected DebitStatus = "collected"
	DebitReturned  DebitStatus = "returned"
	DebitCancelled DebitStatus = "cancelled"
)

// Debit is one order's payment collected under a mandate in a run.
type Debit struct {
	bun.BaseModel  `bun:"table:debits"`
	ID             int64  `bun:"id,pk,autoincrement"`
	RunID          int64  `bun:"run_id,notnull"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
	OrderID        int64  `bun:"order_id,notnull"`
	PaymentID      int64  `bun:"payment_id,notnull"`
	MandateID      int64  `bun:"mandate_id,notnull"`
	EndToEndID     string `bun:"end_to_end_id,notnull"`
	AmountMinor    int64  `bun:"amount_minor,notnull"`
	Currency       string `bun:"currency,notnull"`
	// DueOn is the requested collection date written in the file.
	DueOn    time.Time            `bun:"due_on,notnull,type:date"`
	Sequence banking.SequenceType `bun:"sequence_type,notnull"`
	// Amended says the file stated the mandate's amendment with this debit.
	Amended    bool        `bun:"amended,notnull"`
	Status     DebitStatus `bun:"status,notnull"`
	ReturnCode string      `bun:"return_code,notnull"`
	ReturnedAt *time.Time  `bun:"returned_at"`
}

// DebitDueDate is the date an order whose mandate is given on day now is
// collected: not before the club's pre-notification period (calendar
// days, 14 unless it states less) has passed, on the club's collection
// day of the month when it has one (1 to 28), and always a TARGET
// business day (the next one when that day is not), since SEPA debits
// settle only on those.
func DebitDueDate(now time.Time, prenotificationDays, collectionDay int) time.Time {
	if prenotificationDays <= 0 {
		prenotificationDays = DefaultPrenotificationDays
	}
	earliest := DateOf(now).AddDate(0, 0, prenotificationDays)
	due := earliest
	if collectionDay >= 1 && collectionDay <= 28 {
		due = time.Date(earliest.Year(), earliest.Month(), collectionDay, 0, 0, 0, 0, time.UTC)
		if due.Before(earliest) {
			due = due.AddDate(0, 1, 0)
		}
	}
	return banking.NextTARGETBusinessDay(due)
}

// DateOf is the calendar date of t (in t's location), at midnight UTC:
// the form the debits' dates are stored and compared in.
func DateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// DebitDueFor is DebitDueDate with an organisation's settings.
func DebitDueFor(ctx context.Context, db bun.IDB, orgID int64, now time.Time) (time.Time, error) {
	ps, err := LoadPaymentSettings(ctx, db, orgID)
	if err != nil {
		return time.Time{}, err
	}
	return DebitDueDate(now, ps.DebitPrenotificationDays, ps.DebitCollectionDay), nil
}

// debitReturnedFor reports whether an attempt's debit came back: such an
// attempt never succeeds again (a run marked sent after the return, or a
// replayed settlement, changes nothing).
func debitReturnedFor(ctx context.Context, db bun.IDB, p *engine.Payment) (bool, error) {
	if p.Provider != DirectDebitProvider || p.Status != engine.PaymentFailed {
		return false, nil
	}
	returned, err := db.NewSelect().Model((*Debit)(nil)).Where("payment_id = ? AND status = ?", p.ID, DebitReturned).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("look for a returned debit: %w", err)
	}
	return returned, nil
}
