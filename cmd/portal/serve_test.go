package main

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// serve's server speaks HTTP/1.1 and, for a proxy in front that uses it,
// HTTP/2 without TLS (h2c with prior knowledge).
func TestServerSpeaksH2C(t *testing.T) {
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	for _, tc := range []struct {
		name   string
		client *http.Client
		want   string
	}{
		{"HTTP/1.1", &http.Client{Transport: &http.Transport{}}, "HTTP/1.1"},
		{"h2c", &http.Client{Transport: &http.Transport{Protocols: h2c}}, "HTTP/2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.client.Get("http://" + ln.Addr().String() + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.Proto != tc.want || string(body) != tc.want {
				t.Fatalf("answered over %s (server saw %q), want %s", res.Proto, body, tc.want)
			}
		})
	}
}
