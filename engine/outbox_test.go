package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/message"
)

// TestConfirmationIsOneJob: paying queues the confirmation's delivery job
// in the settlement's transaction, and a replayed return adds nothing.
func TestConfirmationIsOneJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		if n := f.Count((*jobs.Job)(nil), "1 = 1"); n != 0 {
			t.Fatalf("%d jobs before paying", n)
		}
		res := f.Pay(ref, engine.OutcomeSuccess)
		if replay := f.Pay(ref, engine.OutcomeSuccess); !replay.Replayed {
			t.Fatalf("second return not a replay: %+v", replay)
		}
		var all []jobs.Job
		if err := db.NewSelect().Model(&all).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		msgKey := fmt.Sprintf("membership_confirmation:order:%d", res.Order.ID)
		if len(all) != 1 || all[0].Kind != "membership_confirmation" || all[0].State != jobs.StateQueued ||
			*all[0].DedupKey != engine.OutboxJobKey(msgKey) || all[0].Payload != fmt.Sprintf(`{"message":%q}`, msgKey) {
			t.Fatalf("jobs = %+v, want the one queued confirmation", all)
		}
		msg, err := engine.OutboxMessageByKey(f.Ctx, db, msgKey)
		if err != nil || msg.SentAt != nil {
			t.Fatalf("message = %+v, %v", msg, err)
		}
	})
}

// TestConfirmationRecipients: the main contact (the ONE question) first,
// then the other members' addresses, each once.
func TestConfirmationRecipients(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		d := enginetest.Seed(t, db)
		res := d.Pay(d.Commit(enginetest.Sam, enginetest.Alex, enginetest.Robin)) // Sam answers main_contact 1
		c, err := message.LoadConfirmation(context.Background(), db, res.Order.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(c.Recipients, ","); got != "sam.morgan@example.org,alex.morgan@example.org" {
			t.Fatalf("recipients %s: want the main contact first, Robin's (Alex's) address once", got)
		}
		if len(c.Members) != 3 || c.Members[0].Person.FirstName != "Alex" || c.Members[0].Type.Name != "Adult" || c.Reference == "" {
			t.Fatalf("confirmation %+v", c)
		}
	})
}
