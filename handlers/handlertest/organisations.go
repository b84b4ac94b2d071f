package handlertest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/relay/hashlink"
)

// The demo's two clubs (engine.SeedDemoOrganisations): the rowing club on
// localhost (period 1), the tennis club on 127.0.0.1 (period 3), which is
// also the test server's own address. The user key "demo" has a household
// in each.
const (
	RowingHost = "localhost"
	TennisHost = "127.0.0.1"
)

// NewOrganisationsEnv is a server with the demo's two clubs (RowingHost, TennisHost).
func NewOrganisationsEnv(t *testing.T, db *bun.DB, o Options) *Env {
	t.Helper()
	env := NewEnvWith(t, db, o)
	if err := organisation.SeedDemoOrganisations(context.Background(), db, clock.Now()); err != nil {
		t.Fatalf("seed organisations: %v", err)
	}
	return env
}

// HashLinkAt opens a hash link of period on host and returns the client and the answer.
func (env *Env) HashLinkAt(host string, period, userKey, secret string) (*http.Client, Page) {
	env.TB.Helper()
	c := env.NewClient()
	return c, env.Get(c, "/membership/register/"+period+"?u="+userKey+"&h="+hashlink.Sign(secret, userKey), "Host", host)
}

// PersonNames are the names and labels p shows, joined with "|".
func PersonNames(p Page) string {
	var out []string
	p.Doc.Find(`[data-testid="person-name"], label, td, li`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
	return strings.Join(out, "|")
}
