package upstream_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"testing"

	"portal/relay/upstream"
)

// An interim answer carries the backend's headers only, and the final
// answer keeps what the gateway set before relaying (its request id, a
// session cookie it renewed or cleared), which ReverseProxy's clearing of
// the header map after a 1xx used to take away.
func TestForwardKeepsGatewayHeadersAcrossInterimAnswers(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Link", "</b.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":7}`)
	}))
	t.Cleanup(backend.Close)
	u, _ := url.Parse(backend.URL)
	p := upstream.New(upstream.Config{Backend: u}, upstream.Hooks{ErrorResponse: func(w http.ResponseWriter, r *http.Request, status int, msg string) {
		http.Error(w, msg, status)
	}})
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-1")
		w.Header().Add("Set-Cookie", "JSESSIONID=; Path=/; Max-Age=0")
		p.Forward(w, r, "")
	}))
	t.Cleanup(gw.Close)

	var interim []http.Header
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/services/admin-service/things", nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			interim = append(interim, http.Header(h).Clone())
			return nil
		}}))
	res, err := gw.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated || string(body) != `{"id":7}` {
		t.Fatalf("%d %q, want the backend's 201", res.StatusCode, body)
	}
	if res.Header.Get("X-Request-Id") != "req-1" || len(res.Header.Values("Set-Cookie")) != 1 || res.Header.Get("Link") != "" {
		t.Fatalf("final headers %v, want the gateway's X-Request-Id and one Set-Cookie, no Link", res.Header)
	}
	if len(interim) != 2 || interim[0].Get("Link") != "</a.css>; rel=preload; as=style" || interim[1].Get("Link") != "</b.css>; rel=preload; as=style" {
		t.Fatalf("interim answers %v, want the backend's two hints", interim)
	}
	for _, h := range interim {
		if h.Get("Set-Cookie") != "" || h.Get("X-Request-Id") != "" {
			t.Fatalf("an interim answer carries the gateway's headers: %v", h)
		}
	}
}
