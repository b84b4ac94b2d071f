package directdebit_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/payment"
)

// mandateFixture is directDebitFixture with the first direct-debit order
// of the demo household.
func mandateFixture(t *testing.T, db *bun.DB) (*enginetest.Fixture, engine.Order) {
	t.Helper()
	f := enginetest.DirectDebitFixture(t, db, 0)
	return f, f.CommitDirectDebit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
}

// nextOrder is another unpaid direct-debit order of the same household
// (its next season, a renewal), not collected under any mandate yet.
func nextOrder(t *testing.T, f *enginetest.Fixture, like engine.Order, ref string) engine.Order {
	t.Helper()
	// A registration of its own (one live order per registration).
	var inst engine.ProcessInstance
	if err := f.DB.NewSelect().Model(&inst).Where("id = ?", like.ProcessInstanceID).Scan(f.Ctx); err != nil {
		t.Fatal(err)
	}
	inst.ID, inst.Status = 0, engine.StateCompleted
	if _, err := f.DB.NewInsert().Model(&inst).Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	o := like
	o.ProcessInstanceID = inst.ID
	o.ID, o.PayReference, o.DebitMandateID, o.DebitDueOn, o.Lines, o.Status = 0, ref, nil, nil, nil, engine.OrderUnpaid
	if _, err := f.DB.NewInsert().Model(&o).Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	return o
}

func loadOrderByID(t *testing.T, f *enginetest.Fixture, id int64) engine.Order {
	t.Helper()
	var o engine.Order
	if err := f.DB.NewSelect().Model(&o).Where("id = ?", id).Scan(f.Ctx); err != nil {
		t.Fatal(err)
	}
	return o
}

func loadMandate(t *testing.T, f *enginetest.Fixture, id int64) directdebit.DebitMandate {
	t.Helper()
	var m directdebit.DebitMandate
	if err := f.DB.NewSelect().Model(&m).Where("id = ?", id).Scan(f.Ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// mandateNotices are the keys of the queued mandate e-mails, in order.
func mandateNotices(t *testing.T, f *enginetest.Fixture) []string {
	t.Helper()
	var keys []string
	if err := f.DB.NewSelect().Model((*engine.OutboxMessage)(nil)).Column("dedup_key").Where("kind = ?", directdebit.KindMandateNotice).
		OrderExpr("id").Scan(f.Ctx, &keys); err != nil {
		t.Fatal(err)
	}
	return keys
}

// dueOn says whether order id is collected under mandate m (and due).
func collectedUnder(t *testing.T, f *enginetest.Fixture, id, m int64) bool {
	t.Helper()
	o := loadOrderByID(t, f, id)
	return o.DebitMandateID != nil && *o.DebitMandateID == m && o.DebitDueOn != nil
}

const (
	otherIBAN = "DE02120300000000202051"
	thirdIBAN = "DE02500105170137075030"
)

// TestMandateKeptChangedRevoked: the household's mandate is offered on its
// next order's pay link; keeping it links and dues the order and queues
// the mandate e-mail once (kept twice: once); a bad IBAN in a change
// changes nothing; a change keeps the old account for the next collection
// file and tells every order due under the mandate (an earlier message
// naming the old account is not sent), and a second change before a file
// was sent keeps the first (oldest) account; revoking ends it, takes the due dates off and lets the
// member give a new mandate; a mandate ended cannot be kept.
func TestMandateKeptChangedRevoked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, first := mandateFixture(t, db)
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, first.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, BIC: "COBADEFFXXX",
			Consent: true, Language: "de"})
		if err != nil {
			t.Fatal(err)
		}
		if keys := mandateNotices(t, f); len(keys) != 1 || !strings.Contains(keys[0], ":order:") {
			t.Fatalf("after the mandate: %v", keys)
		}
		if !collectedUnder(t, f, first.ID, m.ID) {
			t.Fatal("the first order is not due under the mandate")
		}

		second := nextOrder(t, f, first, "NEXTSEASON2")
		page, err := directdebit.Of(f.Svc).DebitPageFor(f.Ctx, second.PayReference)
		if err != nil || page.Mandate != nil || page.Held == nil || page.Held.ID != m.ID {
			t.Fatalf("the next order's page: %+v %v", page, err)
		}
		if _, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, second.PayReference, directdebit.MandateInput{Holder: "A", IBAN: otherIBAN, Consent: true}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("a second mandate while one holds: %v", err)
		}
		for range 2 {
			if _, err := directdebit.Of(f.Svc).KeepMandate(f.Ctx, second.PayReference, m.ID); err != nil {
				t.Fatal(err)
			}
		}
		if !collectedUnder(t, f, second.ID, m.ID) || len(mandateNotices(t, f)) != 2 {
			t.Fatalf("kept twice: %v", mandateNotices(t, f))
		}
		if page, err := directdebit.Of(f.Svc).DebitPageFor(f.Ctx, second.PayReference); err != nil || page.Mandate == nil || page.Held != nil {
			t.Fatalf("the kept order's page: %+v %v", page, err)
		}

		third := nextOrder(t, f, first, "NEXTSEASON3")
		before := loadMandate(t, f, m.ID)
		_, err = directdebit.Of(f.Svc).AmendMandate(f.Ctx, third.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: "DE00 1203 0000 0000 2020 51", Consent: true})
		if got := enginetest.FieldsOf(t, err); !enginetest.EqualStrings(got, []string{"iban"}) {
			t.Fatalf("a bad IBAN: %v", got)
		}
		if after := loadMandate(t, f, m.ID); after.IBAN != before.IBAN || after.PreviousIBAN != "" || after.AmendedAt != nil ||
			loadOrderByID(t, f, third.ID).DebitMandateID != nil || len(mandateNotices(t, f)) != 2 {
			t.Fatalf("a refused change changed something: %+v", after)
		}
		if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, third.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: otherIBAN}); !enginetest.EqualStrings(enginetest.FieldsOf(t, err), []string{"consent"}) {
			t.Fatalf("a change without consent: %v", err)
		}
		for range 2 {
			if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, third.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: otherIBAN, BIC: "byladem1001", Consent: true}); err != nil {
				t.Fatal(err)
			}
		}
		changed := loadMandate(t, f, m.ID)
		if changed.IBAN != otherIBAN || changed.BIC != "BYLADEM1001" || changed.PreviousIBAN != enginetest.DemoIBAN || changed.PreviousBIC != "COBADEFFXXX" ||
			changed.AmendedAt == nil || changed.Reference != m.Reference || changed.Text != m.Text {
			t.Fatalf("changed: %+v", changed)
		}
		// The first and second orders, due under the mandate already, are
		// told of the new account; the third is due and told.
		keys := mandateNotices(t, f)
		if !collectedUnder(t, f, third.ID, m.ID) || len(keys) != 5 {
			t.Fatalf("changed twice: %v", keys)
		}
		byOrder := func(keys []string, id int64) []string {
			var out []string
			for _, k := range keys {
				if strings.Contains(k, fmt.Sprintf(":order:%d:", id)) {
					out = append(out, k)
				}
			}
			return out
		}
		for _, id := range []int64{first.ID, second.ID, third.ID} {
			if got := byOrder(keys, id); len(got) == 0 || !strings.Contains(got[len(got)-1], ":amended:") {
				t.Errorf("order %d is not told of the change: %v", id, got)
			}
		}
		// The change's message is due; the first order's, which names
		// the account before it, is superseded and not sent.
		notice := func(key string) *directdebit.MandateNotice {
			t.Helper()
			msg, err := engine.OutboxMessageByKey(f.Ctx, db, key)
			if err != nil {
				t.Fatal(err)
			}
			n, err := directdebit.LoadMandateNotice(f.Ctx, db, msg)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		thirdKeys := byOrder(keys, third.ID)
		if n := notice(thirdKeys[len(thirdKeys)-1]); !n.Due || n.Event != directdebit.MandateAmended || n.Mandate.IBAN != otherIBAN || n.CreditorName != "TV Demo 1848 e.V." ||
			n.DueOn.Format(time.DateOnly) != loadOrderByID(t, f, third.ID).DebitDueOn.Format(time.DateOnly) {
			t.Fatalf("the change's message: %+v", n)
		}
		if n := notice(keys[0]); n.Due {
			t.Fatalf("the message before the change is still due: %+v", n)
		}
		if _, err := directdebit.Of(f.Svc).AmendMandate(f.Ctx, third.PayReference, m.ID, directdebit.MandateInput{Holder: "Alex Example", IBAN: thirdIBAN, Consent: true}); err != nil {
			t.Fatal(err)
		}
		again := loadMandate(t, f, m.ID)
		if again.IBAN != thirdIBAN || again.BIC != "" || again.PreviousIBAN != enginetest.DemoIBAN || again.PreviousBIC != "COBADEFFXXX" {
			t.Fatalf("the second change lost the first account: %+v", again)
		}
		if keys := mandateNotices(t, f); len(keys) != 8 || !strings.Contains(keys[7], ":amended:") || !collectedUnder(t, f, third.ID, m.ID) {
			t.Fatalf("the second change: %v", keys)
		}

		for range 2 {
			if _, err := directdebit.Of(f.Svc).RevokeMandate(f.Ctx, third.PayReference, m.ID); err != nil {
				t.Fatal(err)
			}
		}
		revoked := loadMandate(t, f, m.ID)
		if revoked.RevokedAt == nil || revoked.EndReason != directdebit.MandateEndRevokedByMember {
			t.Fatalf("revoked: %+v", revoked)
		}
		for _, id := range []int64{first.ID, second.ID, third.ID} {
			if o := loadOrderByID(t, f, id); o.DebitDueOn != nil {
				t.Errorf("order %d is still due under the revoked mandate", id)
			}
		}
		if _, err := directdebit.Of(f.Svc).KeepMandate(f.Ctx, second.PayReference, m.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("kept after the revocation: %v", err)
		}
		if page, err := directdebit.Of(f.Svc).DebitPageFor(f.Ctx, third.PayReference); err != nil || page.Mandate != nil || page.Held != nil {
			t.Fatalf("the page after the revocation: %+v %v", page, err)
		}
		m2, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, third.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: otherIBAN, Consent: true, Language: "fr"})
		if err != nil || m2.ID == m.ID || !collectedUnder(t, f, third.ID, m2.ID) {
			t.Fatalf("a new mandate after the revocation: %+v %v", m2, err)
		}
		// Another household's mandate is not found from this one's pay link.
		if _, err := directdebit.Of(f.Svc).KeepMandate(f.Ctx, "NOSUCHORDER", m2.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("an unknown order: %v", err)
		}
		if _, err := f.DB.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("user_key = ?", "someone-else").Where("id = ?", m2.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := directdebit.Of(f.Svc).RevokeMandate(f.Ctx, third.PayReference, m2.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another household's mandate: %v", err)
		}
	})
}

// TestStaffRevokeMandate: staff revoke a mandate of their club (audited
// as mandate.revoke on its newest registration, end reason
// revoked_by_staff, again: nothing more; an order in a collection run
// keeps its due date); another club's is not found and stays.
func TestStaffRevokeMandate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, order := mandateFixture(t, db)
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		// A second order under the mandate is in a collection run not sent
		// yet: it stays due (the run is cancelled or sent as a whole).
		inRun := nextOrder(t, f, order, "INRUN1")
		if _, err := directdebit.Of(f.Svc).KeepMandate(f.Ctx, inRun.PayReference, m.ID); err != nil {
			t.Fatal(err)
		}
		pay := engine.Payment{OrderID: inRun.ID, Provider: "direct_debit", Reference: "INRUN1-P", AmountMinor: inRun.TotalMinor, Currency: inRun.Currency,
			Status: engine.PaymentPending, CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
		run := payment.DebitRun{OrganisationID: 1, MessageID: "RUN-1", FileVersion: "pain.008.001.08", UntilOn: clock.Now(), Status: payment.DebitRunPrepared,
			DebitCount: 1, TotalMinor: inRun.TotalMinor, Currency: inRun.Currency, File: []byte("<x/>"), CreatedBy: "t", CreatedAt: clock.Now()}
		for _, row := range []any{&pay, &run} {
			if _, err := db.NewInsert().Model(row).Exec(f.Ctx); err != nil {
				t.Fatal(err)
			}
		}
		debit := payment.Debit{RunID: run.ID, OrganisationID: 1, OrderID: inRun.ID, PaymentID: pay.ID, MandateID: m.ID, EndToEndID: "E2E-1",
			AmountMinor: inRun.TotalMinor, Currency: inRun.Currency, DueOn: clock.Now(), Sequence: "FRST", Status: payment.DebitInRun}
		if _, err := db.NewInsert().Model(&debit).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		actor := engine.Actor{Name: "treasurer@club.example"}
		if _, err := directdebit.Of(f.Svc).StaffRevokeMandate(f.Ctx, actor, 2, m.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("another club's staff: %v", err)
		}
		if got := loadMandate(t, f, m.ID); got.RevokedAt != nil {
			t.Fatal("another club's staff revoked the mandate")
		}
		for range 2 {
			if _, err := directdebit.Of(f.Svc).StaffRevokeMandate(f.Ctx, actor, 1, m.ID); err != nil {
				t.Fatal(err)
			}
		}
		got := loadMandate(t, f, m.ID)
		if got.RevokedAt == nil || got.EndReason != directdebit.MandateEndRevokedByStaff || loadOrderByID(t, f, order.ID).DebitDueOn != nil {
			t.Fatalf("revoked by staff: %+v", got)
		}
		if loadOrderByID(t, f, inRun.ID).DebitDueOn == nil {
			t.Fatal("the order in a collection run lost its due date")
		}
		if n, err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = ? AND target_id = ? AND instance_id = ?", "mandate.revoke",
			fmt.Sprint(m.ID), inRun.ProcessInstanceID).Count(f.Ctx); err != nil || n != 1 {
			t.Fatalf("%d audit records, %v", n, err)
		}
	})
}

// TestExpireMandates: a mandate unused for more than 36 months (since its
// last collection, else its signature) expires, and its order is no
// longer due; one collected or signed within them holds; a second run
// changes nothing; a run for another organisation (portal jobs run
// mandates.expire --org) leaves this one's alone, the scheduled job for
// this one expires them.
func TestExpireMandates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, order := mandateFixture(t, db)
		m, err := directdebit.Of(f.Svc).GiveMandate(f.Ctx, order.PayReference, directdebit.MandateInput{Holder: "Alex Example", IBAN: enginetest.DemoIBAN, Consent: true, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		now := clock.Now().UTC()
		mk := func(ref string, signed time.Time, collected *time.Time) int64 {
			x := directdebit.DebitMandate{OrganisationID: 1, UserKey: "household-" + ref, CreditorID: enginetest.TestCreditorID, Reference: ref, Holder: "H",
				IBAN: enginetest.DemoIBAN, Language: "en", Text: "t", TextVersion: directdebit.MandateTextVersion, SignedAt: signed, LastCollectedAt: collected}
			if _, err := db.NewInsert().Model(&x).Exec(f.Ctx); err != nil {
				t.Fatal(err)
			}
			return x.ID
		}
		recent := now.AddDate(0, -1, 0)
		inside := mk("INSIDE", now.AddDate(0, -35, 0), nil)
		collected := mk("COLLECTED", now.AddDate(0, -40, 0), &recent)
		old := now.AddDate(0, -37, 0)
		collectedLongAgo := mk("COLLECTED-LONG-AGO", now.AddDate(0, -50, 0), &old)
		if _, err := db.NewUpdate().Model((*directdebit.DebitMandate)(nil)).Set("signed_at = ?", now.AddDate(0, -36, -2)).Where("id = ?", m.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}

		// A run for organisation 2 only: nothing of organisation 1 expires.
		n, err := directdebit.ExpireMandates(engine.WithOrganisation(f.Ctx, 2), db, now)
		if err != nil || n != 0 {
			t.Fatalf("a run for another organisation: %d %v", n, err)
		}
		// The scheduled job, run for organisation 1.
		r := jobs.New(db, jobs.Config{Now: func() time.Time { return now }})
		directdebit.Of(f.Svc).ScheduleMandateExpiry(r, func() time.Time { return now }, slog.New(slog.DiscardHandler))
		if _, err := jobs.RunNow(f.Ctx, db, engine.KindExpireMandates, now, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Work(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[int64]bool{m.ID: true, collectedLongAgo: true, inside: false, collected: false} {
			got := loadMandate(t, f, id)
			if (got.RevokedAt != nil) != want || (want && got.EndReason != directdebit.MandateEndExpired) {
				t.Errorf("mandate %s: revoked %v (%q), want expired %v", got.Reference, got.RevokedAt, got.EndReason, want)
			}
		}
		if o := loadOrderByID(t, f, order.ID); o.DebitDueOn != nil {
			t.Error("the order is still due under the expired mandate")
		}
		if n, err := directdebit.ExpireMandates(f.Ctx, db, now); err != nil || n != 0 {
			t.Fatalf("a second run: %d %v", n, err)
		}
		if n, err := db.NewSelect().Model((*jobs.Job)(nil)).Where("kind = ? AND state = ?", engine.KindExpireMandates, jobs.StateSucceeded).Count(f.Ctx); err != nil || n != 1 {
			t.Fatalf("%d expiry jobs succeeded, %v", n, err)
		}
	})
}
