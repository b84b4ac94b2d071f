package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/relay/session/sessiontest"
)

func TestMetrics(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{MetricsToken: "metrics-token-0123", Bus: (&sessiontest.MemHub{}).NewBus()})
	env.Backend.ExchangeTTL.Store(int64(5 * time.Second))
	c := env.NewClient()
	env.MustOIDCLogin(c, "/")
	env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
	env.RelayEcho(c) // refreshes the token, which evicts the session from the cache
	env.RelayEcho(c) // reads the refreshed session from the store
	env.RelayEcho(c) // finds it in memory
	if res := env.Request(env.NewClient(), http.MethodGet, server.MetricsPath, nil); res.Status != http.StatusUnauthorized {
		t.Fatalf("metrics without the token: %d", res.Status)
	}
	res := env.Request(env.NewClient(), http.MethodGet, server.MetricsPath, nil, "Authorization", "Bearer metrics-token-0123")
	body := string(res.Body)
	for _, want := range []string{
		`portal_http_requests_total{method="GET",route="/services/admin-service/*",status="200"} 3`,
		`portal_http_requests_total{method="GET",route="/oauth2/callback",status="303"} 1`,
		`portal_oidc_refreshes_total{outcome="ok"} 1`,
		`portal_token_exchanges_total{outcome="ok"} 2`,
		`portal_relay_duration_seconds_count{status_class="2xx"} 3`,
		`portal_session_cache_online 1`,
		`portal_session_cache_outages_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^portal_session_cache_hits_total (\d+)$`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("metrics show no session cache hits: %v", m)
	}
}
