package handlers_test

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
)

// A card check and a pay link answer only on their own club's address:
// on another club's host they are not found (no "valid" page under that
// club's branding, no "already paid" about another club's order).
func TestCardAndPayLinkScopedByHost(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnvWith(t, db, envOptions{organisationRefresh: -1})
		owner := env.newClient()
		f := env.completeDemo(owner)
		pay(t, env, owner, *f.PaymentURL)
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
			{rowingHost, card, http.StatusOK},
			{tennisHost, card, http.StatusNotFound},
			{tennisHost, "/o/lakeside" + card, http.StatusNotFound}, // another club under its prefix
			{rowingHost, payLink, http.StatusConflict},              // its own club: paid already
			{tennisHost, payLink, http.StatusNotFound},
		} {
			p := env.get(env.newClient(), tc.path, "Host", tc.host, "Accept", "text/html")
			if p.status != tc.want {
				t.Errorf("%s on %s: %d, want %d", tc.path, tc.host, p.status, tc.want)
			}
		}
	})
}
