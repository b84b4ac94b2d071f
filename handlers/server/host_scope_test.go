package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
)

// A card check and a pay link answer only on their own club's address:
// on another club's host they are not found (no "valid" page under that
// club's branding, no "already paid" about another club's order).
func TestCardAndPayLinkScopedByHost(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{OrganisationRefresh: -1})
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
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("period_id = ?", engine.DemoPeriodID).Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		// Now two clubs: the demo club (rowing) on localhost, the tennis
		// club on 127.0.0.1.
		if err := organisation.SeedDemoOrganisations(ctx, db, clock.Now()); err != nil {
			t.Fatal(err)
		}
		card := "/verify/" + tokens[ms[0].ID]
		payLink := "/pay/" + order.PayReference
		for _, tc := range []struct {
			host, path string
			want       int
		}{
			{handlertest.RowingHost, card, http.StatusOK},
			{handlertest.TennisHost, card, http.StatusNotFound},
			{handlertest.TennisHost, "/o/lakeside" + card, http.StatusNotFound}, // another club under its prefix
			{handlertest.RowingHost, payLink, http.StatusConflict},              // its own club: paid already
			{handlertest.TennisHost, payLink, http.StatusNotFound},
		} {
			p := env.Get(env.NewClient(), tc.path, "Host", tc.host, "Accept", "text/html")
			if p.Status != tc.want {
				t.Errorf("%s on %s: %d, want %d", tc.path, tc.host, p.Status, tc.want)
			}
		}
	})
}
