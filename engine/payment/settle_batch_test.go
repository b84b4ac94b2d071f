package payment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/payment"
)

// namedProvider settles attempts of its name; it has nothing to close.
type namedProvider string

func (p namedProvider) Name() string { return string(p) }
func (namedProvider) CreateCheckout(context.Context, engine.CheckoutRequest) (engine.Checkout, error) {
	return engine.Checkout{}, nil
}
func (namedProvider) Retrieve(_ context.Context, p engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeOpen}, nil
}
func (namedProvider) Expire(context.Context, engine.Payment) error { return nil }
func (namedProvider) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", payment.ErrManualRefund
}

// settleGroup is confirmations of one provider, settled together.
type settleGroup struct {
	provider engine.PaymentProvider
	confs    []engine.PaymentConfirmation
}

// TestSettleBatchSettlesAsOneByOne settles the same random confirmations
// (debits collected, bank captures exact, partial and twice, amounts that
// do not match, failures, events seen before, attempts of orders paid
// already, closed attempts) on two databases seeded alike: one by one
// through the settlement as it was before it was batched, each in its own
// transaction, and in batches. The rows they leave (without ids and
// times), the results and the books (engine/books) are the same, and the
// books are sound.
func TestSettleBatchSettlesAsOneByOne(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		other := dbtest.SQLite(t)
		if db.Dialect().Name().String() == "pg" {
			other = dbtest.Postgres(t)
		}
		for seed := range uint64(3) {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				if seed > 0 {
					if db.Dialect().Name().String() != "pg" {
						db, other = dbtest.SQLite(t), dbtest.SQLite(t)
					} else {
						db, other = dbtest.Postgres(t), dbtest.Postgres(t)
					}
				}
				groups := settlementFixture(t, db, seed)
				settlementFixture(t, other, seed)
				oneByOne := settleAll(t, db, groups, false)
				batched := settleAll(t, other, groups, true)
				if !slices.Equal(oneByOne, batched) {
					for i := range oneByOne {
						if oneByOne[i] != batched[i] {
							t.Errorf("confirmation %d: one by one %s, batched %s", i, oneByOne[i], batched[i])
						}
					}
					t.Fatal("the results differ")
				}
				a, b := dumpSettled(t, db), dumpSettled(t, other)
				for _, table := range settledTables {
					if !slices.Equal(a[table], b[table]) {
						t.Errorf("%s: one by one %d rows, batched %d", table, len(a[table]), len(b[table]))
						for i := range max(len(a[table]), len(b[table])) {
							x, y := "", ""
							if i < len(a[table]) {
								x = a[table][i]
							}
							if i < len(b[table]) {
								y = b[table][i]
							}
							if x != y {
								t.Errorf("  %s\n  %s", x, y)
								break
							}
						}
					}
				}
				if n := len(a["payment_events"]); n < 30 {
					t.Fatalf("only %d payment events: the fixture settles too little", n)
				}
				for _, d := range []*bun.DB{db, other} {
					svc := engine.NewService(d, namedProvider("fake"))
					if n, err := books.CheckAll(context.Background(), svc, clock.Now()); err != nil || n != 0 {
						var found []books.StoredFinding
						_ = d.NewSelect().Model(&found).Scan(context.Background())
						t.Fatalf("books: %d findings (%v): %+v", n, err, found)
					}
				}
			})
		}
	})
}

// settlementFixture seeds a season into db (alike for a seed) with an
// attempt for each unpaid order (a direct debit or a bank transfer, some
// closed already) and some for paid orders, a webhook endpoint, and
// confirmations of them in random order, some settled before.
func settlementFixture(t *testing.T, db *bun.DB, seed uint64) []settleGroup {
	t.Helper()
	ctx := context.Background()
	enginetest.SeedSeason(t, db, 240)
	now := clock.Now().UTC()
	if _, err := db.NewInsert().Model(&engine.WebhookEndpoint{OrganisationID: 1, URL: "https://hooks.example.org/x", SecretSealed: "x",
		EventsList: engine.EventPaymentSucceeded + "," + engine.EventMembershipActivated, Active: true, CreatedAt: now, UpdatedAt: now}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Where("status IN (?)", bun.List([]engine.OrderStatus{engine.OrderUnpaid, engine.OrderPaid})).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 42))
	var pays []engine.Payment
	for i, o := range orders {
		if o.Status == engine.OrderPaid {
			// Paid by an attempt of its own; some get another one, whose
			// money is owed back when it comes.
			pays = append(pays, engine.Payment{OrderID: o.ID, Provider: payment.DirectDebitProvider, Reference: fmt.Sprintf("PR-PAID%06d", i),
				AmountMinor: o.TotalMinor, Currency: o.Currency, Status: engine.PaymentSucceeded, PaidAmountMinor: &o.TotalMinor, PaidCurrency: &o.Currency,
				CreatedAt: now, UpdatedAt: now})
			if r.IntN(4) != 0 {
				continue
			}
		}
		p := engine.Payment{OrderID: o.ID, Provider: payment.DirectDebitProvider, Reference: fmt.Sprintf("PR-EQ%06d", i), AmountMinor: o.TotalMinor,
			Currency: o.Currency, Status: engine.PaymentPending, CreatedAt: now, UpdatedAt: now}
		if r.IntN(2) == 0 {
			rf := fmt.Sprintf("RF%06d", i)
			p.Provider, p.ProviderID = payment.BankTransferProvider, &rf
		}
		if r.IntN(10) == 0 {
			p.Status = engine.PaymentCancelled // closed: the money still counts when it comes
		}
		pays = append(pays, p)
	}
	if _, err := db.NewInsert().Model(&pays).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	debits := settleGroup{provider: namedProvider(payment.DirectDebitProvider)}
	captures := settleGroup{provider: namedProvider(payment.BankTransferProvider)}
	for _, p := range pays {
		if p.Status == engine.PaymentSucceeded || r.IntN(5) == 0 {
			continue // not confirmed
		}
		c := engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeSuccess, AmountMinor: p.AmountMinor, Currency: p.Currency,
			EventID: "ev:" + p.Reference, EventType: "direct_debit.collected", TransactionID: "E2E-" + p.Reference, Note: "collected"}
		g := &debits
		if p.Provider == payment.BankTransferProvider {
			g = &captures
			c.EventType, c.Accumulate, c.TransactionID, c.Note = payment.BankCaptureEvent, true, c.EventID, "booked"
			if r.IntN(2) == 0 {
				c.Actor = &engine.Actor{Name: "treasurer@example.org"} // audited
			}
		}
		switch k := r.IntN(20); {
		case k == 0:
			c.AmountMinor++ // does not match
		case k == 1:
			c.Outcome, c.AmountMinor, c.Currency = engine.OutcomeFailed, 0, ""
		case k == 2:
			c.Outcome = engine.OutcomePending
		case k == 3:
			c.Currency = strings.ToLower(c.Currency)
		case k == 4 && c.Accumulate:
			// In two parts: the first partial, the second completes it.
			first := c
			first.AmountMinor, first.EventID, first.TransactionID = c.AmountMinor/3, c.EventID+":1", c.EventID+":1"
			g.confs = append(g.confs, first)
			c.AmountMinor -= first.AmountMinor
		case k == 5:
			g.confs = append(g.confs, c) // the same event twice
		case k == 6:
			again := c // another event for the same attempt
			again.EventID, again.TransactionID = c.EventID+":again", c.TransactionID+":again"
			g.confs = append(g.confs, again)
		}
		g.confs = append(g.confs, c)
	}
	for _, g := range []*settleGroup{&debits, &captures} {
		r.Shuffle(len(g.confs), func(i, j int) { g.confs[i], g.confs[j] = g.confs[j], g.confs[i] })
	}
	// Some settled before, alike in both databases: their events are replays.
	svc := engine.NewService(db, namedProvider("fake"))
	for _, g := range []settleGroup{debits, captures} {
		for _, c := range g.confs[:len(g.confs)/10] {
			if err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
				_, err := payment.Of(svc).SettleIn(ctx, tx, g.provider, c, &payment.PaymentResult{})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return []settleGroup{debits, captures}
}

// settleAll settles the groups' confirmations, batched (in batches of 40)
// or one by one as before, and returns their results as text.
func settleAll(t *testing.T, db *bun.DB, groups []settleGroup, batched bool) []string {
	t.Helper()
	ctx := context.Background()
	if !batched {
		ctx = payment.SettleSlowly(ctx)
	}
	svc := engine.NewService(db, namedProvider("fake"))
	var out []string
	for _, g := range groups {
		size := 1
		if batched {
			size = 40
		}
		for from := 0; from < len(g.confs); from += size {
			confs := g.confs[from:min(from+size, len(g.confs))]
			results := make([]*payment.PaymentResult, len(confs))
			for i := range results {
				results[i] = &payment.PaymentResult{Reference: confs[i].Reference}
			}
			if err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
				_, err := payment.Of(svc).SettleBatch(ctx, tx, g.provider, confs, results)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				out = append(out, fmt.Sprintf("%s %s: outcome %s replayed %t stale %t mismatch %t partial %t captured %d second %t",
					confs[i].Reference, confs[i].EventID, r.Outcome, r.Replayed, r.Stale, r.Mismatch, r.Partial, r.CapturedMinor, r.SecondCredit))
			}
		}
	}
	return out
}

// settledTables are the tables a settlement writes.
var settledTables = []string{"payments", "payment_events", "orders", "memberships", "process_instances", "outbox_messages", "jobs",
	"webhook_events", "webhook_deliveries", "audit_log"}

// dumpSettled is each settled table's rows as sorted text, without ids
// the settlement's inserts are given, times, and webhook event ids.
func dumpSettled(t *testing.T, db *bun.DB) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	events := map[string]string{} // webhook event id → its body without ids and times
	for _, table := range []string{"webhook_events", "webhook_deliveries"} {
		var rows []map[string]any
		if err := db.NewSelect().Table(table).Order("id").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if table == "webhook_events" {
				var body map[string]any
				if err := json.Unmarshal([]byte(fmt.Sprint(text(row["body"]))), &body); err != nil {
					t.Fatal(err)
				}
				delete(body, "id")
				delete(body, "createdAt")
				if data, ok := body["data"].(map[string]any); ok {
					if ms, ok := data["memberships"].([]any); ok {
						for _, m := range ms {
							delete(m.(map[string]any), "activatedAt")
						}
					}
				}
				b, _ := json.Marshal(body)
				events[fmt.Sprint(row["id"])] = randomReference.ReplaceAllString(string(b), "PR-random")
				row["body"] = events[fmt.Sprint(row["id"])]
				delete(row, "public_id")
				delete(row, "id")
			} else {
				row["event_id"] = events[fmt.Sprint(row["event_id"])]
				delete(row, "job_key")
				delete(row, "id")
			}
			out[table] = append(out[table], rowText(row))
		}
	}
	for _, table := range settledTables {
		if table == "webhook_events" || table == "webhook_deliveries" {
			continue
		}
		var rows []map[string]any
		if err := db.NewSelect().Table(table).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if table == "jobs" && row["kind"] == engine.KindWebhookDelivery {
				delete(row, "payload")
				delete(row, "dedup_key")
			}
			if table != "orders" && table != "memberships" && table != "process_instances" {
				delete(row, "id") // inserted in another order
			}
			for k, v := range row {
				if s, ok := text(v).(string); ok {
					row[k] = randomReference.ReplaceAllString(s, "PR-random")
				}
			}
			out[table] = append(out[table], rowText(row))
		}
	}
	for table := range out {
		sort.Strings(out[table])
	}
	return out
}

// randomReference is a reference the settlement makes (a second credit's).
var randomReference = regexp.MustCompile(`PR-[A-Z0-9]{16}`)

// rowText is a row as text: its columns in order, times left out.
func rowText(row map[string]any) string {
	keys := make([]string, 0, len(row))
	for k := range row {
		if strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_time") || strings.HasSuffix(k, "_until") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := text(row[k])
		if _, ok := v.(time.Time); ok {
			continue
		}
		fmt.Fprintf(&b, "%s=%v ", k, v)
	}
	return b.String()
}

func text(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}
