package staff

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/message"
	"portal/engine/payment"
)

// The treasurer's list of who still owes money: every committed
// registration whose newest order is unpaid, with what is still owed
// after the parts that arrived, the RF reference members write on their
// transfer, how long it has been unpaid and what the member was sent.

// OpenPaymentSort orders the open payments.
type OpenPaymentSort string

// Orders of the open payments list.
const (
	SortOldest    OpenPaymentSort = "oldest"    // longest unpaid first (the default)
	SortNewest    OpenPaymentSort = "newest"    // most recently committed first
	SortOwed      OpenPaymentSort = "owed"      // largest amount owed first
	SortReminders OpenPaymentSort = "reminders" // most reminders first
)

// OpenPaymentSorts lists the orders as pages offer them.
var OpenPaymentSorts = []OpenPaymentSort{SortOldest, SortNewest, SortOwed, SortReminders}

// OpenPaymentQuery selects the open payments of one organisation.
type OpenPaymentQuery struct {
	OrganisationID int64
	// PeriodID narrows to one period; 0: all.
	PeriodID int64
	// MinDays > 0 narrows to orders unpaid for more than this many days.
	MinDays int
	// MinReminders > 0 narrows to orders reminded at least this often.
	MinReminders int
	// Sort is one of OpenPaymentSorts; "" is SortOldest.
	Sort OpenPaymentSort
}

// OpenPayment is one unpaid order in the list.
type OpenPayment struct {
	RegistrationID int64     `bun:"registration_id"`
	UserKey        string    `bun:"user_key"`
	PeriodID       int64     `bun:"period_id"`
	OrderID        int64     `bun:"order_id"`
	PayReference   string    `bun:"pay_reference"`
	TotalMinor     int64     `bun:"total_minor"`
	Currency       string    `bun:"currency"`
	CommittedAt    time.Time `bun:"committed_at"`
	// ReceivedMinor adds up the parts of a bank transfer that arrived;
	// OwedMinor is what is still owed (the total less those).
	ReceivedMinor int64 `bun:"received_minor"`
	OwedMinor     int64 `bun:"owed_minor"`
	// TransferReference is the RF reference of the newest bank-transfer
	// attempt, as stored (see RF); nil when not paid by bank transfer.
	TransferReference *string `bun:"transfer_reference"`
	// Reminders counts the unpaid reminders queued for the order.
	Reminders int `bun:"-"`
	// LastMessageKind and LastMessageAt name the newest message about the
	// order; "" and zero when none was queued.
	LastMessageKind engine.MessageKind `bun:"-"`
	LastMessageAt   time.Time          `bun:"-"`
	// Days is how many whole days have passed since the commit.
	Days int `bun:"-"`
	// SelectedJSON is the registration's stored selection.
	SelectedJSON string `bun:"selected_persons"`
	// Household are the names of the registration's persons.
	Household []string `bun:"-"`
}

// RF is the RF reference in its printed form (groups of four), "" when
// there is none.
func (p OpenPayment) RF() string {
	if p.TransferReference == nil {
		return ""
	}
	rf, err := banking.ParseReference(*p.TransferReference)
	if err != nil {
		return *p.TransferReference
	}
	return rf.String()
}

// OpenPaymentsSelect is the list's query: the orders with their figures
// as correlated subqueries, each an index lookup by order (payments by
// order_id, events by reference).
func (q OpenPaymentQuery) OpenPaymentsSelect(db bun.IDB, now time.Time) *bun.SelectQuery {
	inner := db.NewSelect().TableExpr("orders AS o").Join("JOIN process_instances AS pi ON pi.id = o.process_instance_id").
		ColumnExpr("pi.id AS registration_id, pi.user_key, pi.related_entity_id AS period_id, pi.selected_persons").
		ColumnExpr("o.id AS order_id, o.pay_reference, o.total_minor, o.currency, o.created_at AS committed_at").
		ColumnExpr(`(SELECT COALESCE(SUM(e.amount_minor), 0) FROM payment_events AS e
			WHERE e.event_type = ? AND e.outcome = ? AND e.currency = o.currency
			AND e.reference IN (SELECT rp.reference FROM payments AS rp WHERE rp.order_id = o.id)) AS received_minor`,
			payment.BankCaptureEvent, payment.PartialCaptureOutcome).
		ColumnExpr(`(SELECT tp.provider_id FROM payments AS tp WHERE tp.order_id = o.id AND tp.provider = ? AND tp.provider_id IS NOT NULL
			ORDER BY tp.id DESC LIMIT 1) AS transfer_reference`, payment.BankTransferProvider).
		Where("o.organisation_id = ? AND o.status = ?", q.OrganisationID, engine.OrderUnpaid).
		// The registration is the order's organisation's too: said, so that
		// the registrations are read by organisation (process_instances_staff_state),
		// not every organisation's of that state. Awaiting payment; or
		// completed with its order reopened by a returned direct debit, when
		// the household had opened another registration of the period
		// meanwhile (the registration stays completed, as only one may be
		// open, but the money is owed).
		Where("pi.organisation_id = ? AND (pi.status IN (?) OR (pi.status = ? AND o.id IN (SELECT d.order_id FROM debits AS d WHERE d.status = ?)))",
			q.OrganisationID, bun.List(RegAwaitingPayment.processStates()), engine.StateCompleted, payment.DebitReturned).
		// The registration's newest order: an older unpaid one was replaced.
		// As a NOT EXISTS on the order's own instance, checked for the
		// organisation's unpaid orders only; MAX() against pi.id had it
		// computed for every registration of the state (issue 42).
		Where("NOT EXISTS (SELECT 1 FROM orders AS o2 WHERE o2.process_instance_id = o.process_instance_id AND o2.id > o.id)")
	if q.PeriodID != 0 {
		inner = inner.Where("pi.related_entity_id = ?", q.PeriodID)
	}
	if q.MinDays > 0 {
		inner = inner.Where("o.created_at < ?", now.AddDate(0, 0, -q.MinDays))
	}
	sel := db.NewSelect().TableExpr("(?) AS op", inner).ColumnExpr("op.*, op.total_minor - op.received_minor AS owed_minor")
	switch q.Sort {
	case SortNewest:
		sel = sel.OrderExpr("op.committed_at DESC, op.order_id DESC")
	case SortOwed:
		sel = sel.OrderExpr("op.total_minor - op.received_minor DESC, op.committed_at, op.order_id")
	default:
		sel = sel.OrderExpr("op.committed_at, op.order_id")
	}
	return sel
}

// OpenPayments lists the unpaid orders q selects, with their households.
func (s *Service) OpenPayments(ctx context.Context, q OpenPaymentQuery) ([]OpenPayment, error) {
	rows, err := s.openPayments(ctx, q)
	if err != nil {
		return nil, err
	}
	return rows, s.fillOpenPaymentHouseholds(ctx, q.OrganisationID, rows)
}

// OpenPaymentPage is one page of the open payments list.
type OpenPaymentPage struct {
	Rows []OpenPayment
	// Total counts the rows of every page; Page counts from 1.
	Total, Page, PageSize, PageCount int
}

// OpenPaymentsPage is page page (from 1; past the last, the last) of
// OpenPayments, pageSize rows a page. Only the page's households are
// read: a club's 1,000 unpaid orders are filtered and sorted whole, but
// shown and named a page at a time (issue 42).
func (s *Service) OpenPaymentsPage(ctx context.Context, q OpenPaymentQuery, page, pageSize int) (*OpenPaymentPage, error) {
	if pageSize <= 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "page size %d", pageSize)
	}
	rows, err := s.openPayments(ctx, q)
	if err != nil {
		return nil, err
	}
	p := &OpenPaymentPage{Total: len(rows), PageSize: pageSize, PageCount: max(1, (len(rows)+pageSize-1)/pageSize)}
	p.Page = min(max(page, 1), p.PageCount)
	p.Rows = rows[min(len(rows), (p.Page-1)*pageSize):min(len(rows), p.Page*pageSize)]
	return p, s.fillOpenPaymentHouseholds(ctx, q.OrganisationID, p.Rows)
}

// openPayments reads the unpaid orders q selects, filtered and sorted,
// without their households.
func (s *Service) openPayments(ctx context.Context, q OpenPaymentQuery) (rows []OpenPayment, err error) {
	if q.Sort != "" && !slices.Contains(OpenPaymentSorts, q.Sort) {
		return nil, engine.Errorf(engine.CodeInvalid, "unknown sort order %q", q.Sort)
	}
	now := s.Clock().UTC()
	if err := q.OpenPaymentsSelect(s.DB(), now).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load open payments: %w", err)
	}
	if len(rows) == 0 {
		return rows, nil
	}
	for i := range rows {
		rows[i].Days = max(0, int(now.Sub(rows[i].CommittedAt.UTC())/(24*time.Hour)))
	}
	if err := s.fillOrderMessages(ctx, rows); err != nil {
		return nil, err
	}
	if q.MinReminders > 0 {
		rows = slices.DeleteFunc(rows, func(r OpenPayment) bool { return r.Reminders < q.MinReminders })
	}
	if q.Sort == SortReminders {
		// Stable: equal counts keep the longest unpaid first.
		slices.SortStableFunc(rows, func(a, b OpenPayment) int { return b.Reminders - a.Reminders })
	}
	return rows, nil
}

// fillOpenPaymentHouseholds names the persons of each row's registration
// in one more query, as the registrations list does.
func (s *Service) fillOpenPaymentHouseholds(ctx context.Context, orgID int64, rows []OpenPayment) error {
	if len(rows) == 0 {
		return nil
	}
	regs := make([]RegistrationRow, len(rows))
	for i, r := range rows {
		regs[i].ID, regs[i].UserKey, regs[i].SelectedJSON = r.RegistrationID, r.UserKey, r.SelectedJSON
	}
	if err := s.fillHouseholds(ctx, orgID, regs); err != nil {
		return err
	}
	for i := range rows {
		rows[i].Household = regs[i].Household
	}
	return nil
}

// fillOrderMessages adds the reminders and the newest message of each row
// in one query by the messages' order (outbox_messages.order_id, which the
// database reads from the key: "kind:order:ID" or "kind:order:ID:…",
// engine/message/reminders.go, engine/payment/link_later.go,
// engine/payment/transfer_due.go, …). Matched on the key itself this read
// every message queued since the oldest row's commit: a federation's
// night of mails for each page (issue 42).
func (s *Service) fillOrderMessages(ctx context.Context, rows []OpenPayment) error {
	if len(rows) == 0 {
		return nil
	}
	byOrder := make(map[int64]int, len(rows))
	ids := make([]int64, len(rows))
	for i, r := range rows {
		byOrder[r.OrderID] = i
		ids[i] = r.OrderID
	}
	var msgs []struct {
		OrderID   int64              `bun:"order_id"`
		Kind      engine.MessageKind `bun:"kind"`
		CreatedAt time.Time          `bun:"created_at"`
	}
	err := s.DB().NewSelect().TableExpr("outbox_messages AS m").ColumnExpr("m.order_id, m.kind, m.created_at").
		Where("m.order_id IN (?)", bun.List(ids)).OrderExpr("m.id").Scan(ctx, &msgs)
	if err != nil {
		return fmt.Errorf("load order messages: %w", err)
	}
	for _, m := range msgs {
		i, ok := byOrder[m.OrderID]
		if !ok {
			continue
		}
		if m.Kind == message.KindUnpaidReminder {
			rows[i].Reminders++
		}
		rows[i].LastMessageKind, rows[i].LastMessageAt = m.Kind, m.CreatedAt // by id: the newest last
	}
	return nil
}

// OpenPaymentsCSV writes the rows of OpenPayments as a CSV export: the
// header first. Cells are raw; the caller neutralises formulas (CSVCell).
func (s *Service) OpenPaymentsCSV(ctx context.Context, q OpenPaymentQuery, row func([]string) error) error {
	rows, err := s.OpenPayments(ctx, q)
	if err != nil {
		return err
	}
	if err := row([]string{"registration", "order", "user_key", "period", "household", "reference", "rf_reference", "total", "received",
		"owed", "currency", "committed", "days_unpaid", "reminders", "last_message", "last_message_at"}); err != nil {
		return err
	}
	for _, r := range rows {
		lastAt := ""
		if !r.LastMessageAt.IsZero() {
			lastAt = r.LastMessageAt.UTC().Format(time.RFC3339)
		}
		if err := row([]string{fmt.Sprint(r.RegistrationID), fmt.Sprint(r.OrderID), r.UserKey, fmt.Sprint(r.PeriodID),
			strings.Join(r.Household, "; "), r.PayReference, r.RF(), engine.FormatMinor(r.TotalMinor), engine.FormatMinor(r.ReceivedMinor),
			engine.FormatMinor(r.OwedMinor), r.Currency, r.CommittedAt.UTC().Format(time.RFC3339), fmt.Sprint(r.Days), fmt.Sprint(r.Reminders),
			string(r.LastMessageKind), lastAt}); err != nil {
			return err
		}
	}
	return nil
}

// ResendPaymentLinks sends the payment link again for each of the
// registrations ids (each once, however often it is named), through
// ResendPaymentLink: one transaction and one audit entry per
// registration, as when it is sent from the registration's page. A
// registration that no longer waits for payment, or is not the
// organisation's, is skipped. It returns how many were sent and skipped.
func (s *Service) ResendPaymentLinks(ctx context.Context, actor engine.Actor, orgID int64, ids []int64) (sent, skipped int, err error) {
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		err := s.ResendPaymentLink(ctx, actor, orgID, id)
		switch {
		case err == nil:
			sent++
		case engine.ErrorCode(err) == engine.CodeConflict || engine.ErrorCode(err) == engine.CodeNotFound:
			skipped++
		default:
			return sent, skipped, err
		}
	}
	return sent, skipped, nil
}
