package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestCommittedRegistrationFormsUseTheirTransaction loads a committed
// registration's form every way a member can, with a public URL as serve
// sets it: the pay link on the form is built on the organisation's address,
// which Resume and Back read inside their transactions. Read through the
// pool instead, SQLite's one connection was the transaction's own and the
// call waited forever (issue 24); dbtest's guard now fails it after two
// seconds, naming the caller.
func TestCommittedRegistrationFormsUseTheirTransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		d := enginetest.Seed(t, db, engine.WithPublicURL("https://members.example.org"))
		done := d.Commit(1, 3)
		pid := done.ProcessIDString()
		ctx := context.Background()
		calls := []struct {
			name string
			call func(ctx context.Context) (*registration.Form, error)
		}{
			{"resume", func(ctx context.Context) (*registration.Form, error) {
				return registration.Of(d.Svc).Resume(ctx, engine.DemoUserKey, pid)
			}},
			{"back", func(ctx context.Context) (*registration.Form, error) {
				return registration.Of(d.Svc).Back(ctx, engine.DemoUserKey, pid, nil)
			}},
			{"return to", func(ctx context.Context) (*registration.Form, error) {
				return registration.Of(d.Svc).ReturnTo(ctx, engine.DemoUserKey, pid, 1)
			}},
			{"load", func(ctx context.Context) (*registration.Form, error) {
				f, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil)
				return f, err
			}},
		}
		for _, c := range calls {
			start := time.Now()
			f, err := c.call(ctx)
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s of a committed registration took %s", c.name, took)
			}
			if errors.Is(err, context.Canceled) {
				t.Fatalf("%s waited for the connection its transaction held: %v", c.name, err)
			}
			if c.name == "resume" && (err != nil || f.State != engine.StateDone || f.PaymentURL == "") {
				t.Fatalf("resume of a committed registration: %+v, %v; want it at its pay link", f, err)
			}
			if err != nil {
				if _, ok := engine.AsError(err); !ok {
					t.Fatalf("%s: %v", c.name, err)
				}
				continue // refused as the state requires: it answered
			}
			if f.State == engine.StateDone && !strings.HasPrefix(f.PaymentURL, "https://members.example.org/") {
				t.Errorf("%s: pay link %q is not on the organisation's address", c.name, f.PaymentURL)
			}
		}
	})
}
