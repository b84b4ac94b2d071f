package server

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"portal/relay/session"
)

// Metrics are the gateway's Prometheus metrics, on a registry of their own
// so that several servers in one process (tests) do not collide.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	relay     *prometheus.HistogramVec
	refreshes *prometheus.CounterVec
	exchanges *prometheus.CounterVec
	logins    *prometheus.CounterVec
	// Set by WatchJobs (metrics_jobs.go).
	jobRuns     *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec
}

// NewMetrics returns the metrics with the Go runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_http_requests_total",
			Help: "HTTP requests by route pattern, method (OTHER for any but the standard nine) and status.",
		}, []string{"route", "method", "status"}),
		relay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portal_relay_duration_seconds",
			Help:    "Time to relay a request to the admin backend, session lookup and token refresh included, by status class.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"status_class"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_oidc_refreshes_total",
			Help: "Token refreshes at the identity provider by outcome (ok, rejected, error).",
		}, []string{"outcome"}),
		exchanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_token_exchanges_total",
			Help: "Token exchanges at the admin backend by outcome (ok, rejected, error).",
		}, []string{"outcome"}),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_backend_logins_total",
			Help: "Hash logins forwarded to the admin backend by outcome (ok, rejected, error).",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.relay, m.refreshes, m.exchanges, m.logins,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []string{"ok", "rejected", "error"} {
		m.refreshes.WithLabelValues(o)
		m.exchanges.WithLabelValues(o)
		m.logins.WithLabelValues(o)
	}
	return m
}

// WatchSessionCache exports the session cache's counters: hits, misses,
// invalidations, size and whether it is online (serving from memory).
func (m *Metrics) WatchSessionCache(c *session.Cache) {
	counter := func(name, help string, v func(session.CacheStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v(c.Stats())) })
	}
	gauge := func(name, help string, v func(session.CacheStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(c.Stats()) })
	}
	m.reg.MustRegister(
		counter("portal_session_cache_hits_total", "Session lookups served from memory.", func(s session.CacheStats) uint64 { return s.Hits }),
		counter("portal_session_cache_misses_total", "Session lookups that read the store.", func(s session.CacheStats) uint64 { return s.Misses }),
		counter("portal_session_cache_invalidations_total", "Sessions evicted because this or another instance wrote them.", func(s session.CacheStats) uint64 { return s.Invalidations }),
		counter("portal_session_cache_outages_total", "Times the cache lost its invalidation subscription and went offline.", func(s session.CacheStats) uint64 { return s.Outages }),
		gauge("portal_session_cache_entries", "Sessions held in memory.", func(s session.CacheStats) float64 { return float64(s.Entries) }),
		gauge("portal_session_cache_online", "1 while the cache's invalidation subscription is proven live, else 0 (every lookup reads the store).", func(s session.CacheStats) float64 {
			if s.Online {
				return 1
			}
			return 0
		}),
	)
}

// ObserveRefresh counts an IdP refresh; it fits oidc.Config.OnRefresh.
func (m *Metrics) ObserveRefresh(outcome string) { m.refreshes.WithLabelValues(outcome).Inc() }

// ObserveExchange counts a token exchange; it fits oidc.Config.OnExchange.
func (m *Metrics) ObserveExchange(outcome string) { m.exchanges.WithLabelValues(outcome).Inc() }

func (m *Metrics) observeBackendLogin(outcome string) { m.logins.WithLabelValues(outcome).Inc() }

func (m *Metrics) ObserveRelay(status int, d time.Duration) {
	m.relay.WithLabelValues(strconv.Itoa(status/100) + "xx").Observe(d.Seconds())
}

// CountRequests is a pre-routing middleware, so it wraps everything and
// sees the final status, errors included; the route label is the matched
// pattern, never the raw path, to keep the label set small.
func (m *Metrics) CountRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" || c.Response().Status == http.StatusNotFound && route == "/*" {
			route = "(unmatched)"
		}
		m.requests.WithLabelValues(route, methodLabel(c.Request().Method), strconv.Itoa(c.Response().Status)).Inc()
		return nil
	}
}

// EchoHandler serves GET /metrics on the public address; with a token, only
// to requests that bear it.
func (m *Metrics) EchoHandler(token string) echo.HandlerFunc {
	h := m.Handler(token)
	return func(c echo.Context) error {
		if !bearsToken(c.Request(), token) {
			return NewAPIError(http.StatusUnauthorized, "The metrics need a bearer token.")
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// Handler serves the metrics in Prometheus' format, for a listener of
// their own (PORTAL_METRICS_ADDR); with a token, only to requests that
// bear it.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{DisableCompression: true}) // the server compresses
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearsToken(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "The metrics need a bearer token.", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearsToken reports whether r carries "Authorization: Bearer token", in
// constant time; with no token configured, every request does.
func bearsToken(r *http.Request, token string) bool {
	if token == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) == 1
}
