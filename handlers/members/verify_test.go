package members_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/handlers/handlertest"
)

// TestVerifyCard: the page a card's QR code opens shows the name, type,
// period and validity to anyone, nothing else; unknown tokens are 404.
func TestVerifyCard(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		owner := env.NewClient()
		f := env.CompleteDemo(owner)
		handlertest.PayDTO(t, env, owner, *f.PaymentURL)
		ctx := context.Background()
		var ms []engine.Membership
		if err := db.NewSelect().Model(&ms).Where("status = ? AND period_id = ?", engine.MembershipActive, engine.DemoPeriodID).
			Order("id").Scan(ctx); err != nil || len(ms) == 0 {
			t.Fatalf("memberships %v %v", ms, err)
		}
		tokens, err := message.CardTokens(ctx, db, []int64{ms[0].ID}, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		var p engine.Person
		db.NewSelect().Model(&p).Where("id = ?", ms[0].PersonID).Scan(ctx)

		page := env.Get(env.NewClient(), "/verify/"+tokens[ms[0].ID])
		if page.Status != http.StatusOK || page.TestID("verify-page").AttrOr("data-valid", "") != "true" ||
			page.TestID("verify-name").Text() != p.FirstName+" "+p.LastName || page.TestID("verify-state").Text() != "Valid" {
			t.Fatalf("verify page: %d valid %q name %q", page.Status, page.TestID("verify-page").AttrOr("data-valid", ""), page.TestID("verify-name").Text())
		}
		main := page.Doc.Find("main").Text()
		for _, private := range []string{p.Email, p.DateOfBirth.Format("2006"), "EUR", "0612345678"} {
			if strings.Contains(main, private) {
				t.Errorf("the public page shows %q", private)
			}
		}
		if page.Header.Get("X-Robots-Tag") == "" {
			t.Error("the page may be indexed")
		}
		// A cancelled membership's card says so.
		db.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipCancelled).Where("id = ?", ms[0].ID).Exec(ctx)
		if page := env.Get(env.NewClient(), "/verify/"+tokens[ms[0].ID]); page.TestID("verify-page").AttrOr("data-valid", "") != "false" {
			t.Errorf("a cancelled membership verifies as valid")
		}
		for _, bad := range []string{"x", strings.Repeat("A", 43), strings.Repeat("b", 80)} {
			if page := env.Get(env.NewClient(), "/verify/"+bad); page.Status != http.StatusNotFound {
				t.Errorf("/verify/%s: %d, want 404", bad, page.Status)
			}
		}
	})
}
