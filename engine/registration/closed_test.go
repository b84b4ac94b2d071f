package registration_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestNoAnswersAfterClosing: a registration under way cannot go on once its
// period closed or its definition was deactivated.
func TestNoAnswersAfterClosing(t *testing.T) {
	cases := []struct{ name, sql string }{
		{"period closed", "UPDATE membership_periods SET status = 'closed' WHERE id = 1"},
		{"definition deactivated", "UPDATE process_definitions SET active = FALSE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := context.Background()
				svc := enginetest.Seeded(t, db)
				form, _, err := registration.Of(svc).LoadMembershipForm(ctx, "demo", 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				pid := form.ProcessIDString()
				if _, err := registration.Of(svc).Next(ctx, "demo", registration.NextInput{ProcessID: pid, Step: 0, People: []registration.PersonInput{{ID: 2}}}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, tc.sql); err != nil {
					t.Fatal(err)
				}
				_, err = registration.Of(svc).Next(ctx, "demo", registration.NextInput{ProcessID: pid, Step: 1, People: []registration.PersonInput{{ID: 2, Answer: enginetest.Str("0612345678")}}})
				if engine.ErrorCode(err) != engine.CodeConflict {
					t.Fatalf("answer after closing: %v, want a conflict", err)
				}
			})
		})
	}
}
