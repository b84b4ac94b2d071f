package messages

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/relay/hashlink"
)

// TestRegistrationLinkPerOrganisation: the links in messages open the
// registration where the portal resolves the period's organisation (its
// hostname, or /o/{slug} while several share the address) and carry a hash
// made with that organisation's own secret when it has one.
func TestRegistrationLinkPerOrganisation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demodata.SeedDemo(ctx, db, 0, clock.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		var period engine.MembershipPeriod
		if err := db.NewSelect().Model(&period).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		org := period.OrganisationID
		d := Deps{DB: db, BaseURL: "https://portal.example:8443", HashSecret: "environment-secret-0123456789",
			OpenHashSecret: func(id int64, sealed string) (string, error) {
				return "own-secret-of-" + strconv.FormatInt(id, 10) + "-" + sealed, nil
			}}
		link := func() string {
			t.Helper()
			l, err := registrationLink(ctx, d, period.ID, "demo")
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		want := func(base, secret string) string {
			return base + "/membership/register/" + strconv.FormatInt(period.ID, 10) + "?u=demo&h=" + hashlink.Sign(secret, "demo")
		}
		// The only organisation, no hostname: the portal's address and secret.
		if got := link(); got != want("https://portal.example:8443", d.HashSecret) {
			t.Fatalf("only organisation: %s", got)
		}
		// A second organisation: the first is named by its slug.
		if _, err := db.NewInsert().Model(&engine.Organisation{Name: "Other Club", Slug: "other"}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var slug string
		if err := db.NewSelect().Model((*engine.Organisation)(nil)).Column("slug").Where("id = ?", org).Scan(ctx, &slug); err != nil {
			t.Fatal(err)
		}
		if got := link(); got != want("https://portal.example:8443/o/"+slug, d.HashSecret) {
			t.Fatalf("two organisations: %s", got)
		}
		// Its own hostname (the portal's scheme and port) and its own secret.
		if _, err := db.NewInsert().Model(&engine.OrganisationHost{Hostname: "rowing.example", OrganisationID: org}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("hash_secret_sealed = ?", "sealed").Where("id = ?", org).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		got := link()
		if got != want("https://rowing.example:8443", "own-secret-of-"+strconv.FormatInt(org, 10)+"-sealed") || strings.Contains(got, "portal.example") {
			t.Fatalf("own hostname and secret: %s", got)
		}
		// A secret of its own that cannot be opened is not replaced by the
		// environment's (its links would be refused): the job fails.
		d.OpenHashSecret = nil
		if _, err := registrationLink(ctx, d, period.ID, "demo"); err == nil {
			t.Fatal("a link signed without the organisation's own secret")
		}
	})
}
