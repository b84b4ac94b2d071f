package staff

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
)

// The registrations of a club as staff see them: one row per process
// instance with its latest order, searched and filtered in the database
// (indexes of migration 20261205000002) so that a season of ten thousand
// pages in milliseconds.

// RegistrationState is the staff pages' grouping of process states.
type RegistrationState string

// Registration states as staff filter them.
const (
	RegInProgress      RegistrationState = "in_progress"      // INIT, RUNNING, RESUME
	RegSuspended       RegistrationState = "suspended"        // SUSPENDED
	RegAwaitingPayment RegistrationState = "awaiting_payment" // DONE (committed, order unpaid), PENDING_PAYMENT
	RegPaid            RegistrationState = "paid"             // COMPLETED
	RegCancelled       RegistrationState = "cancelled"        // CANCELLED, FAILED, ERROR
)

// RegistrationStates lists the states in the order pages show them.
var RegistrationStates = []RegistrationState{RegInProgress, RegSuspended, RegAwaitingPayment, RegPaid, RegCancelled}

// processStates are the stored states of a group.
func (r RegistrationState) processStates() []engine.ProcessState {
	switch r {
	case RegInProgress:
		return []engine.ProcessState{engine.StateInit, engine.StateRunning, engine.StateResume}
	case RegSuspended:
		return []engine.ProcessState{engine.StateSuspended}
	case RegAwaitingPayment:
		return []engine.ProcessState{engine.StateDone, engine.StatePendingPayment}
	case RegPaid:
		return []engine.ProcessState{engine.StateCompleted}
	case RegCancelled:
		return []engine.ProcessState{engine.StateCancelled, engine.StateFailed, engine.StateError}
	}
	return nil
}

// RegistrationStateOf groups a stored process state.
func RegistrationStateOf(s engine.ProcessState) RegistrationState {
	for _, r := range RegistrationStates {
		for _, p := range r.processStates() {
			if p == s {
				return r
			}
		}
	}
	return RegInProgress
}

// RegistrationQuery selects registrations of one organisation.
type RegistrationQuery struct {
	OrganisationID int64
	// PeriodID narrows to one period; 0: all.
	PeriodID int64
	// Search matches a person's name (part of it), an e-mail address, the
	// user key, an order's or payment's reference (exactly), or the RF
	// creditor reference members write on their bank transfer (spaces and
	// case as they write it).
	Search string
	// State narrows to one group; "": all.
	State RegistrationState
	// MembershipTypeID narrows to registrations with a membership of this type.
	MembershipTypeID int64
	// UnpaidDays > 0 narrows to orders unpaid for more than this many days.
	UnpaidDays int
	// Sort is one of RegistrationSorts; "" is the newest first.
	Sort RegistrationSort
	// Page counts from 1; PageSize is at most 200, 0 is 50.
	Page, PageSize int
}

// RegistrationSort orders the registrations list.
type RegistrationSort string

// Orders of the registrations list. The amount owed and the days unpaid
// belong to registrations whose newest order is unpaid; the others
// follow them, newest first.
const (
	SortRegNewest     RegistrationSort = ""           // newest registration first (the default)
	SortRegOwedDesc   RegistrationSort = "owed"       // largest amount owed first
	SortRegOwedAsc    RegistrationSort = "owed-asc"   // smallest amount owed first
	SortRegUnpaidDesc RegistrationSort = "unpaid"     // longest unpaid first
	SortRegUnpaidAsc  RegistrationSort = "unpaid-asc" // most recently ordered (unpaid) first
)

// RegistrationSorts lists the orders a query may ask for.
var RegistrationSorts = []RegistrationSort{SortRegNewest, SortRegOwedDesc, SortRegOwedAsc, SortRegUnpaidDesc, SortRegUnpaidAsc}

// RegistrationRow is one registration in a list.
type RegistrationRow struct {
	ID        int64               `bun:"id"`
	UserKey   string              `bun:"user_key"`
	Status    engine.ProcessState `bun:"status"`
	PeriodID  int64               `bun:"period_id"`
	StartTime time.Time           `bun:"start_time"`
	UpdatedAt time.Time           `bun:"updated_at"`
	OrderID   *int64              `bun:"order_id"`
	Reference *string             `bun:"pay_reference"`
	Total     *int64              `bun:"total_minor"`
	Currency  *string             `bun:"currency"`
	Order     *engine.OrderStatus `bun:"order_status"`
	OrderedAt *time.Time          `bun:"ordered_at"`
	PaidAt    *time.Time          `bun:"paid_at"`
	// OwedMinor is what is still owed when the newest order is unpaid:
	// its total less the parts of a bank transfer that arrived; nil
	// otherwise.
	OwedMinor *int64 `bun:"owed_minor"`
	// DaysUnpaid is how many whole days the unpaid order has waited since
	// it was placed; 0 when the order is not unpaid (see OwedMinor).
	DaysUnpaid int `bun:"-"`
	// SelectedJSON is the stored selection (selected_persons).
	SelectedJSON string `bun:"selected_persons"`
	// Household are the names of the persons of this registration (those
	// chosen in it), in the order they were chosen; none before the choice.
	Household []string `bun:"-"`
}

// RegistrationPage is one page of a query's rows and how many there are.
type RegistrationPage struct {
	Rows            []RegistrationRow
	Total           int
	Page, PageSize  int
	PageCount       int
	HouseholdEmails map[string][]string // by user key
}

// normalise bounds a query's paging.
func (q *RegistrationQuery) normalise() {
	if q.PageSize <= 0 {
		q.PageSize = 50
	}
	q.PageSize = min(q.PageSize, 200)
	q.Page = max(q.Page, 1)
	q.Search = strings.TrimSpace(q.Search)
}

// searchMatches are what a search found, looked up once before the count
// and the page (each would otherwise run the person search again).
type searchMatches struct {
	// userKeys are the user keys of the persons whose name or e-mail
	// matched; personKeys the subquery finding them instead, when they are
	// too many to list.
	userKeys   []string
	personKeys *bun.SelectQuery
	// instanceIDs are the registrations whose order or payment has the
	// searched reference.
	instanceIDs []int64
}

// maxListedKeys bounds the user keys a search lists in its query; beyond
// it the person search runs as a subquery.
const maxListedKeys = 500

// findSearch looks up what q.Search matches: persons by a part of their
// name or their e-mail, whatever the case (engine/search_text.go), and orders and
// payments by their reference.
func (s *Service) findSearch(ctx context.Context, q RegistrationQuery) (*searchMatches, error) {
	folded := engine.FoldText(q.Search)
	persons := s.DB().NewSelect().TableExpr("persons AS pe").Column("pe.id").Where("pe.organisation_id = ?", q.OrganisationID).
		WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where(engine.FoldSQL(s.DB(), "pe.first_name || ' ' || pe.last_name")+" LIKE ?"+engine.LikeEscape, engine.ContainsPattern(folded)).
				WhereOr(engine.FoldSQL(s.DB(), "pe.email")+" = ?", folded)
		})
	// A new query each time: bun's builders change in place, so a Limit on
	// the listing would also cut the subquery used when there are more.
	keys := func() *bun.SelectQuery {
		return s.DB().NewSelect().TableExpr("user_persons AS up").ColumnExpr("DISTINCT up.user_key").
			Where("up.organisation_id = ? AND up.person_id IN (?)", q.OrganisationID, persons)
	}
	m := &searchMatches{}
	if err := keys().Limit(maxListedKeys+1).Scan(ctx, &m.userKeys); err != nil {
		return nil, fmt.Errorf("search persons: %w", err)
	}
	if len(m.userKeys) > maxListedKeys {
		m.userKeys, m.personKeys = nil, keys()
	}
	byReference := `SELECT ro.process_instance_id FROM orders AS ro WHERE ro.organisation_id = ? AND ro.pay_reference = ?
		UNION SELECT po.process_instance_id FROM payments AS rp JOIN orders AS po ON po.id = rp.order_id WHERE po.organisation_id = ? AND rp.reference = ?`
	args := []any{q.OrganisationID, q.Search, q.OrganisationID, q.Search}
	if rf, err := banking.ParseReference(q.Search); err == nil {
		byReference += `
		UNION SELECT fo.process_instance_id FROM payments AS fp JOIN orders AS fo ON fo.id = fp.order_id
		WHERE fo.organisation_id = ? AND fp.provider = ? AND fp.provider_id = ?`
		args = append(args, q.OrganisationID, payment.BankTransferProvider, string(rf))
	}
	err := s.DB().NewRaw(byReference, args...).Scan(ctx, &m.instanceIDs)
	if err != nil {
		return nil, fmt.Errorf("search references: %w", err)
	}
	return m, nil
}

// filter adds q's conditions to a select on process_instances AS pi; m
// is what q.Search found (nil without a search).
func (q RegistrationQuery) filter(sel *bun.SelectQuery, now time.Time, m *searchMatches) *bun.SelectQuery {
	sel = sel.Where("pi.organisation_id = ?", q.OrganisationID).Where("pi.related_entity_type = ?", engine.EntityMembership)
	if q.PeriodID != 0 {
		sel = sel.Where("pi.related_entity_id = ?", q.PeriodID)
	}
	if states := q.State.processStates(); len(states) > 0 {
		sel = sel.Where("pi.status IN (?)", bun.List(states))
	}
	if q.MembershipTypeID != 0 {
		sel = sel.Where("EXISTS (SELECT 1 FROM memberships m WHERE m.process_instance_id = pi.id AND m.membership_type_id = ?)", q.MembershipTypeID)
	}
	// Every filter is a semi-join on the instance, so that the count
	// needs no join with the orders and the planner can hash each.
	if q.UnpaidDays > 0 {
		sel = sel.Where("pi.id IN (SELECT uo.process_instance_id FROM orders AS uo WHERE uo.organisation_id = ? AND uo.status = ? AND uo.created_at < ?)",
			q.OrganisationID, engine.OrderUnpaid, now.AddDate(0, 0, -q.UnpaidDays))
	}
	if m != nil {
		sel = sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			w = w.Where("pi.user_key = ?", q.Search)
			switch {
			case m.personKeys != nil:
				w = w.WhereOr("pi.user_key IN (?)", m.personKeys)
			case len(m.userKeys) > 0:
				w = w.WhereOr("pi.user_key IN (?)", bun.List(m.userKeys))
			}
			if len(m.instanceIDs) > 0 {
				w = w.WhereOr("pi.id IN (?)", bun.List(m.instanceIDs))
			}
			return w
		})
	}
	return sel
}

// latestOrderJoin joins each instance's newest order.
const latestOrderJoin = "LEFT JOIN orders AS o ON o.id = (SELECT MAX(o2.id) FROM orders o2 WHERE o2.process_instance_id = pi.id)"

// owedExpr is what is still owed on the newest order o when it is unpaid
// (its total less the parts of a bank transfer that arrived, as the open
// payments count them), NULL otherwise; its arguments are owedArgs.
const owedExpr = `CASE WHEN o.status = ? THEN o.total_minor - (SELECT COALESCE(SUM(e.amount_minor), 0) FROM payment_events AS e
	WHERE e.event_type = ? AND e.outcome = ? AND e.currency = o.currency
	AND e.reference IN (SELECT rp.reference FROM payments AS rp WHERE rp.order_id = o.id)) END`

func owedArgs() []any {
	return []any{engine.OrderUnpaid, payment.BankCaptureEvent, payment.PartialCaptureOutcome}
}

// order adds the list's order to a select joined with latestOrderJoin;
// rows without an unpaid order follow, newest first (NULLs sorted
// explicitly: the databases put them at different ends).
func (q RegistrationQuery) order(sel *bun.SelectQuery) *bun.SelectQuery {
	unpaid := "CASE WHEN o.status = ? THEN 0 ELSE 1 END"
	switch q.Sort {
	case SortRegOwedDesc, SortRegOwedAsc:
		dir := map[bool]string{true: "DESC", false: "ASC"}[q.Sort == SortRegOwedDesc]
		sel = sel.OrderExpr(unpaid, engine.OrderUnpaid).OrderExpr("("+owedExpr+") "+dir, owedArgs()...)
	case SortRegUnpaidDesc:
		sel = sel.OrderExpr(unpaid, engine.OrderUnpaid).OrderExpr("o.created_at ASC")
	case SortRegUnpaidAsc:
		sel = sel.OrderExpr(unpaid, engine.OrderUnpaid).OrderExpr("o.created_at DESC")
	}
	return sel.OrderExpr("pi.id DESC")
}

// Registrations lists a page of the registrations q selects, newest first.
func (s *Service) Registrations(ctx context.Context, q RegistrationQuery) (page *RegistrationPage, err error) {
	q.normalise()
	if !slices.Contains(RegistrationSorts, q.Sort) {
		return nil, engine.Errorf(engine.CodeInvalid, "unknown sort order %q", q.Sort)
	}
	now := s.Clock()
	var found *searchMatches
	if q.Search != "" {
		if found, err = s.findSearch(ctx, q); err != nil {
			return nil, err
		}
	}
	base := func() *bun.SelectQuery {
		return q.filter(s.DB().NewSelect().TableExpr("process_instances AS pi"), now, found)
	}
	n, err := base().Count(ctx)
	total := int(n)
	if err != nil {
		return nil, fmt.Errorf("count registrations: %w", err)
	}
	page = &RegistrationPage{Total: total, Page: q.Page, PageSize: q.PageSize, PageCount: max(1, (total+q.PageSize-1)/q.PageSize)}
	// The page's ids first, from the instances alone (an index walk),
	// then their orders for those fifty only.
	// A sort by the order needs the orders for the page's ids too.
	var ids []int64
	idSel := base().Column("pi.id")
	if q.Sort != SortRegNewest {
		idSel = q.order(idSel.Join(latestOrderJoin))
	} else {
		idSel = idSel.OrderExpr("pi.id DESC")
	}
	if err := idSel.Limit(int64(q.PageSize)).Offset(int64((q.Page-1)*q.PageSize)).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("load registrations: %w", err)
	}
	if len(ids) == 0 {
		return page, nil
	}
	sel := s.DB().NewSelect().TableExpr("process_instances AS pi").Join(latestOrderJoin).
		ColumnExpr("pi.id, pi.user_key, pi.status, pi.related_entity_id AS period_id, pi.start_time, pi.updated_at, pi.selected_persons").
		ColumnExpr("o.id AS order_id, o.pay_reference, o.total_minor, o.currency, o.status AS order_status, o.created_at AS ordered_at, o.paid_at").
		ColumnExpr(owedExpr+" AS owed_minor", owedArgs()...).
		Where("pi.id IN (?)", bun.List(ids))
	if err = q.order(sel).Scan(ctx, &page.Rows); err != nil {
		return nil, fmt.Errorf("load registrations: %w", err)
	}
	for i, r := range page.Rows {
		if r.OwedMinor != nil && r.OrderedAt != nil {
			page.Rows[i].DaysUnpaid = max(0, int(now.UTC().Sub(r.OrderedAt.UTC())/(24*time.Hour)))
		}
	}
	if err := s.fillHouseholds(ctx, q.OrganisationID, page.Rows); err != nil {
		return nil, err
	}
	return page, nil
}

// fillHouseholds adds the names of each registration's persons to rows,
// in one query. They are the persons chosen in the registration
// (selected_persons), not every person its user key may register: a
// household registers some of its persons now and others later, or in a
// registration of their own, and a row names only its own.
func (s *Service) fillHouseholds(ctx context.Context, orgID int64, rows []RegistrationRow) error {
	chosen := make([][]int64, len(rows))
	var all []int64
	for i, r := range rows {
		if r.SelectedJSON == "" {
			continue
		}
		if err := json.Unmarshal([]byte(r.SelectedJSON), &chosen[i]); err != nil {
			return fmt.Errorf("registration %d: selected persons: %w", r.ID, err)
		}
		all = append(all, chosen[i]...)
	}
	if len(all) == 0 {
		return nil
	}
	var persons []struct {
		ID        int64  `bun:"id"`
		FirstName string `bun:"first_name"`
		LastName  string `bun:"last_name"`
	}
	err := s.DB().NewSelect().TableExpr("persons AS pe").ColumnExpr("pe.id, pe.first_name, pe.last_name").
		Where("pe.organisation_id = ? AND pe.id IN (?)", orgID, bun.List(all)).Scan(ctx, &persons)
	if err != nil {
		return fmt.Errorf("load households: %w", err)
	}
	names := make(map[int64]string, len(persons))
	for _, p := range persons {
		names[p.ID] = strings.TrimSpace(p.FirstName + " " + p.LastName)
	}
	for i := range rows {
		rows[i].Household = nil
		for _, id := range chosen[i] {
			if n, ok := names[id]; ok {
				rows[i].Household = append(rows[i].Household, n)
			}
		}
	}
	return nil
}

// RegistrationsCSV writes every registration q selects (no paging) as
// rows for a CSV export: the header first.
func (s *Service) RegistrationsCSV(ctx context.Context, q RegistrationQuery, row func([]string) error) (err error) {
	if err := row([]string{"registration", "user_key", "state", "status", "period", "household", "started", "reference", "total", "currency", "order_status", "ordered", "paid", "owed", "days_unpaid"}); err != nil {
		return err
	}
	q.PageSize = 200
	for q.Page = 1; ; q.Page++ {
		page, err := s.Registrations(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range page.Rows {
			rec := []string{fmt.Sprint(r.ID), r.UserKey, string(RegistrationStateOf(r.Status)), string(r.Status), fmt.Sprint(r.PeriodID),
				strings.Join(r.Household, "; "), r.StartTime.UTC().Format(time.RFC3339), deref(r.Reference), "", deref(r.Currency), "", timeText(r.OrderedAt), timeText(r.PaidAt), "", ""}
			if r.Total != nil && r.Currency != nil {
				rec[8] = engine.FormatMinor(*r.Total)
			}
			if r.Order != nil {
				rec[10] = string(*r.Order)
			}
			if r.OwedMinor != nil {
				rec[13], rec[14] = engine.FormatMinor(*r.OwedMinor), fmt.Sprint(r.DaysUnpaid)
			}
			if err := row(rec); err != nil {
				return err
			}
		}
		if q.Page >= page.PageCount {
			return nil
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
