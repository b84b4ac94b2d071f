package server_test

import (
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/handlers/server"
)

var ownRequestID = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// An incoming X-Request-Id is believed only from a trusted proxy and only
// in a plain, short form; anything else gets an id of our own, in the
// response, the log and the error text.
func TestRequestIDTrustedOnly(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		sent    string
		kept    bool
	}{
		{"untrusted peer, plain id", nil, "abc-123", false},
		{"untrusted peer, forged log line", nil, "x\" level=ERROR msg=forged", false},
		{"trusted proxy, plain id", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "lb.7f3a_9-01", true},
		{"trusted proxy, spaces", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "a b", false},
		{"trusted proxy, 65 characters", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, long, false},
		{"trusted proxy, markup", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "<script>", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs handlertest.LogBuffer
			env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: &logs, TrustedProxies: tc.proxies})
			res := env.Do(env.NewClient(), http.MethodGet, "/api/forms/membership/1", nil, "X-Request-Id", tc.sent)
			got := res.Header.Get("X-Request-Id")
			if tc.kept {
				if got != tc.sent {
					t.Fatalf("X-Request-Id %q, want the proxy's %q", got, tc.sent)
				}
			} else if got == tc.sent || !ownRequestID.MatchString(got) {
				t.Fatalf("X-Request-Id %q, want one of our own instead of %q", got, tc.sent)
			}
			if len(logs.Lines("msg=request", "request_id="+got)) != 1 {
				t.Fatalf("no request log line with request_id=%s:\n%s", got, logs.String())
			}
			if !tc.kept && strings.Contains(logs.String()+string(res.Body), tc.sent) {
				t.Fatalf("the refused id %q reached the log or the response", tc.sent)
			}
		})
	}
}

// Every request log line names the client: the direct peer, or the
// address a trusted proxy put in X-Forwarded-For, never one a client wrote.
func TestRequestLogClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		want    string
	}{
		{"direct peer, X-Forwarded-For ignored", nil, "client=127.0.0.1"},
		{"behind a trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "client=203.0.113.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs handlertest.LogBuffer
			env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: &logs, TrustedProxies: tc.proxies})
			c := env.NewClient()
			for _, path := range []string{"/healthz", "/api/forms/membership/1", "/no/such/page", "/membership/register/1?u=demo&h=00"} {
				env.Do(c, http.MethodGet, path, nil, "X-Forwarded-For", "203.0.113.7")
			}
			lines := logs.Lines("msg=request")
			if len(lines) != 4 {
				t.Fatalf("%d request log lines, want 4:\n%s", len(lines), logs.String())
			}
			for _, l := range lines {
				if !strings.Contains(l, tc.want+" ") {
					t.Errorf("log line lacks %s: %s", tc.want, l)
				}
			}
		})
	}
}

// Twenty requests with huge made-up methods must not mint twenty metric
// series nor copy the methods into the log: label values come from a
// closed set, log lines are bounded.
func TestUnknownMethodsBounded(t *testing.T) {
	var logs handlertest.LogBuffer
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: &logs})
	c := env.NewClient()
	const n = 20
	for i := range n {
		method := strings.Repeat(string(rune('A'+i)), 100_000)
		res := env.Do(c, method, "/api/forms/membership/1/"+strings.Repeat("p", 4000), nil)
		if res.Status < 400 {
			t.Fatalf("made-up method: %d", res.Status)
		}
	}
	metrics := env.Do(c, http.MethodGet, server.MetricsPath, nil)
	if len(metrics.Body) > 64<<10 {
		t.Errorf("/metrics is %d bytes after %d made-up methods", len(metrics.Body), n)
	}
	if !regexp.MustCompile(`portal_http_requests_total\{method="OTHER",route="[^"]*",status="\d+"\} 20`).Match(metrics.Body) {
		t.Errorf("made-up methods are not counted as OTHER:\n%s", grepLines(string(metrics.Body), "portal_http_requests_total"))
	}
	if size := len(logs.String()); size > n*2048 {
		t.Errorf("the log grew by %d bytes for %d requests", size, n)
	}
	if len(logs.Lines("msg=request", "(+99984 bytes)")) != n {
		t.Errorf("want one bounded request line each:\n%.2000s", logs.String())
	}
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// Invitation and card tokens are bearer secrets: the request log names the
// route, never the token.
func TestRequestLogLeavesTokensOut(t *testing.T) {
	var logs handlertest.LogBuffer
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: &logs})
	c := env.NewClient()
	const token = "42.1893456000.c2VjcmV0LXRva2VuLW9mLWEtaG91c2Vob2xk"
	for _, path := range []string{"/invite/" + token, "/verify/" + token} {
		env.Do(c, http.MethodGet, path, nil)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), "c2VjcmV0") {
		t.Fatalf("a token reached the log:\n%s", logs.String())
	}
	if lines := logs.Lines("path=/invite/…"); len(lines) == 0 {
		t.Fatalf("no request line names the invitation route:\n%s", logs.String())
	}
}
