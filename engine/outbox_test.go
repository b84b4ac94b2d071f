package engine_test

import (
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/jobs"
)

// TestConfirmationIsOneJob: paying queues the confirmation's delivery job
// in the settlement's transaction, and a replayed return adds nothing.
func TestConfirmationIsOneJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := referenceOf(t, r.commit().PaymentURL)
		if n := f.count((*jobs.Job)(nil), "1 = 1"); n != 0 {
			t.Fatalf("%d jobs before paying", n)
		}
		res := f.pay(ref, engine.OutcomeSuccess)
		if replay := f.pay(ref, engine.OutcomeSuccess); !replay.Replayed {
			t.Fatalf("second return not a replay: %+v", replay)
		}
		var all []jobs.Job
		if err := db.NewSelect().Model(&all).Scan(f.ctx); err != nil {
			t.Fatal(err)
		}
		msgKey := fmt.Sprintf("membership_confirmation:order:%d", res.Order.ID)
		if len(all) != 1 || all[0].Kind != "membership_confirmation" || all[0].State != jobs.StateQueued ||
			*all[0].DedupKey != engine.OutboxJobKey(msgKey) || all[0].Payload != fmt.Sprintf(`{"message":%q}`, msgKey) {
			t.Fatalf("jobs = %+v, want the one queued confirmation", all)
		}
		msg, err := engine.OutboxMessageByKey(f.ctx, db, msgKey)
		if err != nil || msg.SentAt != nil {
			t.Fatalf("message = %+v, %v", msg, err)
		}
	})
}
