package message

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/jobs"
)

// KindUnpaidReminder is the outbox message (and job) kind of the reminder
// of an order still unpaid some days after its commit.
const KindUnpaidReminder engine.MessageKind = "unpaid_reminder"

// UnpaidReminderPayload is the outbox payload of an unpaid reminder.
type UnpaidReminderPayload struct {
	OrderID int64 `json:"orderId"`
	Day     int   `json:"day"`
}

// QueueUnpaidReminders queues a reminder for every unpaid order of a
// committed (DONE) registration that has reached one of its
// organisation's reminder days (Settings.UnpaidReminderDays) since
// its commit, and for every unpaid order a returned direct debit reopened
// (its registration DONE again, or still COMPLETED beside another the
// household opened) since the day of its latest return: one per order
// (and return) and day, the latest day reached only (an order
// first seen at day 11 gets the day-10 reminder, not both). Its keys name
// the order and the day, so re-runs and every instance's run queue each
// reminder once. It returns how many it queued.
func QueueUnpaidReminders(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	settings, err := AllMessageSettings(ctx, db)
	if err != nil {
		return 0, err
	}
	earliest := DefaultMessageSettings().UnpaidReminderDays[0]
	for _, s := range settings {
		earliest = min(earliest, s.UnpaidReminderDays[0])
	}
	now = now.UTC()
	var orders []engine.Order
	err = engine.ScopeOrg(ctx, db.NewSelect().Model(&orders), "organisation_id").
		Where("status = ? AND created_at <= ?", engine.OrderUnpaid, now.AddDate(0, 0, -earliest)).
		Where("(process_instance_id IN (?) OR id IN (?))", CommittedInstances(db), returnedOrders(db).Column("order_id")).
		OrderExpr("id").Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("find unpaid orders: %w", err)
	}
	var msgs []*engine.OutboxMessage
	returned, err := lastReturns(ctx, db, orders)
	if err != nil {
		return 0, err
	}
	for _, o := range orders {
		age, key := now.Sub(o.CreatedAt.UTC()), fmt.Sprintf("%s:order:%d", KindUnpaidReminder, o.ID)
		if r, ok := returned[o.ID]; ok {
			// Reopened by a returned direct debit: the return's message was
			// the first notice; the reminders follow from its day, once per
			// return.
			age, key = now.Sub(r.At.UTC()), fmt.Sprintf("%s:return:%d", key, r.Count)
		}
		days := slices.Clone(settings.Of(o.OrganisationID).UnpaidReminderDays)
		slices.Reverse(days) // the latest day reached first
		for _, d := range days {
			if age < time.Duration(d)*24*time.Hour {
				continue
			}
			payload, _ := json.Marshal(UnpaidReminderPayload{OrderID: o.ID, Day: d})
			msg := &engine.OutboxMessage{Kind: KindUnpaidReminder, DedupKey: fmt.Sprintf("%s:day:%d", key, d),
				Payload: string(payload), CreatedAt: now}
			msgs = append(msgs, msg)
			break
		}
	}
	if err := store.QueueMessagesNow(ctx, db, msgs); err != nil {
		return 0, err
	}
	return len(msgs), nil
}

// UnpaidReminder is what an unpaid reminder says; Due is false when the
// order was paid or cancelled since the reminder was queued (then nothing
// is sent).
type UnpaidReminder struct {
	Due          bool
	Organisation engine.Organisation
	Period       engine.MembershipPeriod
	Order        engine.Order
	UserKey      string
	Persons      []engine.Person
	Recipients   []string
	// Language is the one the member registered in, "" for the
	// organisation's default (RegistrationLanguage).
	Language string
}

// LoadUnpaidReminder gathers an unpaid reminder.
func LoadUnpaidReminder(ctx context.Context, db bun.IDB, p UnpaidReminderPayload) (*UnpaidReminder, error) {
	order, err := store.LoadOrder(ctx, db, p.OrderID)
	if err != nil {
		return nil, err
	}
	r := &UnpaidReminder{Order: *order, UserKey: order.UserKey}
	if order.Status != engine.OrderUnpaid {
		return r, nil
	}
	r.Due = true
	if err := db.NewSelect().Model(&r.Organisation).Where("id = ?", order.OrganisationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "organisation")
	}
	period, err := store.LoadPeriod(ctx, db, order.PeriodID)
	if err != nil {
		return nil, err
	}
	r.Period = *period
	var ids []int64
	if err := db.NewSelect().Model((*engine.Membership)(nil)).Column("person_id").
		Where("process_instance_id = ? AND status = ?", order.ProcessInstanceID, engine.MembershipPending).OrderExpr("person_id").Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("load reminded persons: %w", err)
	}
	if r.Persons, err = store.PersonsByID(ctx, db, ids); err != nil {
		return nil, err
	}
	r.Recipients = store.UniqueAddresses(r.Persons)
	if r.Language, err = RegistrationLanguage(ctx, db, order.ProcessInstanceID); err != nil {
		return nil, err
	}
	r.Period.Localize(r.Language)
	return r, nil
}

// returnedOrders selects the returned direct debits (the table of
// engine/payment's Debit, whose status "returned" a bank's return sets;
// this package cannot import payment, which imports it).
func returnedOrders(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().TableExpr("debits").Where("status = ?", "returned")
}

// orderReturn is when an order's latest direct debit came back, and how
// many of its debits did.
type orderReturn struct {
	OrderID int64     `bun:"order_id"`
	At      time.Time `bun:"at"`
	Count   int       `bun:"n"`
}

// lastReturns are the returns of the orders among orders that a returned
// direct debit reopened, by order id.
func lastReturns(ctx context.Context, db bun.IDB, orders []engine.Order) (map[int64]orderReturn, error) {
	if len(orders) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	var rows []orderReturn
	if err := returnedOrders(db).ColumnExpr("order_id, MAX(returned_at) AS at, COUNT(*) AS n").
		Where("order_id IN (?) AND returned_at IS NOT NULL", bun.List(ids)).GroupExpr("order_id").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("find returned debits: %w", err)
	}
	out := make(map[int64]orderReturn, len(rows))
	for _, r := range rows {
		out[r.OrderID] = r
	}
	return out, nil
}

// CommittedInstances selects the ids of committed registrations (DONE:
// waiting for payment), whose unpaid orders the reminders and the
// payment-link messages are about; an order of a registration reset or
// cancelled since is left alone.
func CommittedInstances(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("id").Where("status = ?", engine.StateDone)
}

// ScheduleMessages has r queue the messages that go out over time: unpaid
// reminders, welcomes, expiry reminders and renewal prompts, each once per
// its period in the cluster.
func ScheduleMessages(r *jobs.Runner, db *bun.DB, now func() time.Time, log *slog.Logger) {
	engine.ScheduleCounting(r, db, now, log,
		engine.CountingJob{Kind: engine.KindQueueReminders, Every: 24 * time.Hour, Run: QueueUnpaidReminders, Done: "queued unpaid reminders"},
		engine.CountingJob{Kind: engine.KindQueueWelcomes, Every: time.Hour, Run: QueueWelcomes, Done: "welcome messages queued"},
		engine.CountingJob{Kind: engine.KindQueueExpiry, Every: 24 * time.Hour, Run: QueueExpiryReminders, Done: "memberships ending soon: expiry reminders queued"},
		engine.CountingJob{Kind: engine.KindQueueRenewals, Every: 24 * time.Hour, Run: QueueRenewalPrompts, Done: "next periods open: renewal prompts queued (households)"})
}
