package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// shipped are the files the pages link to.
var shipped = []struct {
	name, pattern, contentType string
}{
	{"app.css", `^/static/app\.[0-9a-f]{10}\.css$`, "text/css; charset=utf-8"},
	{"app.js", `^/static/app\.[0-9a-f]{10}\.js$`, "text/javascript; charset=utf-8"},
	{"htmx.min.js", `^/static/htmx\.min\.[0-9a-f]{10}\.js$`, "text/javascript; charset=utf-8"},
}

func TestURL(t *testing.T) {
	for _, tc := range shipped {
		t.Run(tc.name, func(t *testing.T) {
			got := URL(tc.name)
			if !regexp.MustCompile(tc.pattern).MatchString(got) {
				t.Fatalf("URL(%q) = %q, want it to match %s", tc.name, got, tc.pattern)
			}
			// The hash is the file's own: a changed file gets a new address.
			body, err := os.ReadFile("dist/" + tc.name)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(body)
			if want := hex.EncodeToString(sum[:])[:10]; !strings.Contains(got, "."+want+".") {
				t.Errorf("URL(%q) = %q, want the hash %s of the file", tc.name, got, want)
			}
		})
	}
}

func TestURLPanicsForUnknownName(t *testing.T) {
	for _, name := range []string{"nope.css", "VENDORED.md", "dist/app.css", ""} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("URL(%q) did not panic", name)
				}
			}()
			URL(name)
		})
	}
}

func TestHashedName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"app.css", "app.0123456789.css"},
		{"htmx.min.js", "htmx.min.0123456789.js"},
		{"img/logo.svg", "img/logo.0123456789.svg"},
		{"LICENSE", "LICENSE.0123456789"},
	}
	for _, tc := range tests {
		if got := hashedName(tc.name, "0123456789"); got != tc.want {
			t.Errorf("hashedName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHandlerServesAssets(t *testing.T) {
	for _, tc := range shipped {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile("dist/" + tc.name)
			if err != nil {
				t.Fatal(err)
			}
			res := get(t, http.MethodGet, URL(tc.name), nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			assertHeader(t, res, "Cache-Control", "public, max-age=31536000, immutable")
			assertHeader(t, res, "Content-Type", tc.contentType)
			assertHeader(t, res, "Content-Encoding", "")
			assertHeader(t, res, "Vary", "Accept-Encoding")
			assertHeader(t, res, "Content-Length", strconv.Itoa(len(want)))
			if got := readAll(t, res); !bytes.Equal(got, want) {
				t.Errorf("body is %d bytes, not the %d bytes of dist/%s", len(got), len(want), tc.name)
			}
		})
	}
}

func TestHandlerGzip(t *testing.T) {
	tests := []struct {
		acceptEncoding string
		gzip           bool
	}{
		{"gzip", true},
		{"gzip, deflate, br, zstd", true},
		{"br;q=1.0, GZIP;q=0.5", true},
		{"*", true},
		{"x-gzip", true},
		{"", false},
		{"br", false},
		{"identity", false},
		{"gzip;q=0", false},
		{"*, gzip;q=0", false},
		{"*;q=0", false},
		{"gzip;q=nonsense", false},
	}
	want, err := os.ReadFile("dist/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.acceptEncoding, func(t *testing.T) {
			h := http.Header{}
			if tc.acceptEncoding != "" {
				h.Set("Accept-Encoding", tc.acceptEncoding)
			}
			res := get(t, http.MethodGet, URL("app.css"), h)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			assertHeader(t, res, "Vary", "Accept-Encoding")
			assertHeader(t, res, "Cache-Control", "public, max-age=31536000, immutable")
			assertHeader(t, res, "Content-Type", "text/css; charset=utf-8")
			body := readAll(t, res)
			if !tc.gzip {
				assertHeader(t, res, "Content-Encoding", "")
				if !bytes.Equal(body, want) {
					t.Errorf("identity body differs from dist/app.css")
				}
				return
			}
			assertHeader(t, res, "Content-Encoding", "gzip")
			assertHeader(t, res, "Content-Length", strconv.Itoa(len(body)))
			if len(body) >= len(want) {
				t.Errorf("gzip body is %d bytes, not smaller than %d", len(body), len(want))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(plain, want) {
				t.Errorf("gunzipped body differs from dist/app.css")
			}
		})
	}
}

func TestHandlerNotFound(t *testing.T) {
	css := URL("app.css")
	tests := []struct{ name, path string }{
		{"wrong hash", "/static/app.0000000000.css"},
		{"stale hash, one digit changed", css[:len("/static/app.")] + flip(css[len("/static/app.")]) + css[len("/static/app.")+1:]},
		{"unhashed name", "/static/app.css"},
		{"unknown file", "/static/nope.0123456789.css"},
		{"vendoring note", "/static/VENDORED.md"},
		{"directory listing", "/static/"},
		{"embedded directory", "/static/dist/"},
		{"embedded path", "/static/dist/app.css"},
		{"outside the prefix", strings.TrimPrefix(css, "/static")},
		{"dot segments", "/static/../static" + strings.TrimPrefix(css, "/static")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := get(t, http.MethodGet, tc.path, http.Header{"Accept-Encoding": {"gzip"}})
			if res.StatusCode != http.StatusNotFound {
				t.Fatalf("GET %s: status %d, want 404", tc.path, res.StatusCode)
			}
			if cc := res.Header.Get("Cache-Control"); strings.Contains(cc, "max-age") {
				t.Errorf("a 404 is cached: Cache-Control %q", cc)
			}
		})
	}
}

func TestHandlerHead(t *testing.T) {
	for _, tc := range []struct {
		acceptEncoding, contentEncoding string
	}{{"", ""}, {"gzip", "gzip"}} {
		t.Run("Accept-Encoding "+tc.acceptEncoding, func(t *testing.T) {
			get := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, URL("htmx.min.js"), nil)
			req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			Handler().ServeHTTP(get, req)

			head := httptest.NewRecorder()
			req = httptest.NewRequest(http.MethodHead, URL("htmx.min.js"), nil)
			req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			Handler().ServeHTTP(head, req)

			if head.Code != http.StatusOK {
				t.Fatalf("HEAD status %d, want 200", head.Code)
			}
			if head.Body.Len() != 0 {
				t.Errorf("HEAD sent a body of %d bytes", head.Body.Len())
			}
			for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control", "ETag", "Vary"} {
				if head.Header().Get(k) == "" || head.Header().Get(k) != get.Header().Get(k) {
					t.Errorf("HEAD %s = %q, GET has %q", k, head.Header().Get(k), get.Header().Get(k))
				}
			}
			if got := head.Header().Get("Content-Encoding"); got != tc.contentEncoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.contentEncoding)
			}
			if want := strconv.Itoa(get.Body.Len()); head.Header().Get("Content-Length") != want {
				t.Errorf("HEAD Content-Length %q, GET sends %s bytes", head.Header().Get("Content-Length"), want)
			}
		})
	}
}

func TestHandlerConditional(t *testing.T) {
	first := get(t, http.MethodGet, URL("app.js"), http.Header{"Accept-Encoding": {"gzip"}})
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	tests := []struct {
		name, ifNoneMatch, acceptEncoding string
		want                              int
	}{
		{"same etag", etag, "gzip", http.StatusNotModified},
		{"weak form, in a list", `"x", W/` + etag, "gzip", http.StatusNotModified},
		{"other encoding's etag", etag, "", http.StatusOK},
		{"other etag", `"0123456789"`, "gzip", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"If-None-Match": {tc.ifNoneMatch}}
			if tc.acceptEncoding != "" {
				h.Set("Accept-Encoding", tc.acceptEncoding)
			}
			res := get(t, http.MethodGet, URL("app.js"), h)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			if tc.want == http.StatusNotModified {
				if body := readAll(t, res); len(body) != 0 {
					t.Errorf("304 with a body of %d bytes", len(body))
				}
				assertHeader(t, res, "Cache-Control", "public, max-age=31536000, immutable")
			}
		})
	}
}

func TestHandlerMethodNotAllowed(t *testing.T) {
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		t.Run(m, func(t *testing.T) {
			res := get(t, m, URL("app.css"), nil)
			if res.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status %d, want 405", res.StatusCode)
			}
			assertHeader(t, res, "Allow", "GET, HEAD")
		})
	}
}

// TestVendoredHTMX guards against a silent swap of the vendored htmx
// (make css-check compares it byte for byte with the npm package).
func TestVendoredHTMX(t *testing.T) {
	body, err := os.ReadFile("dist/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`version:"2.0.11"`)) {
		t.Error(`dist/htmx.min.js is not htmx 2.0.11 (no version:"2.0.11"); see dist/VENDORED.md`)
	}
}

// TestStylesheetHasComponents checks that the built CSS defines the
// component classes that views and handlers use by name.
func TestStylesheetHasComponents(t *testing.T) {
	body, err := os.ReadFile("dist/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"btn", "btn-primary", "btn-secondary", "btn-link", "card", "badge",
		"badge-available", "badge-registered", "badge-pending", "field-error", "error-summary", "notice", "htmx-indicator"} {
		if !regexp.MustCompile(`\.` + regexp.QuoteMeta(class) + `[{,:\s.\[]`).Match(body) {
			t.Errorf("dist/app.css does not define .%s; run make css", class)
		}
	}
}

func get(t *testing.T, method, target string, h http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range h {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec.Result()
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertHeader(t *testing.T, res *http.Response, key, want string) {
	t.Helper()
	if got := res.Header.Get(key); got != want {
		t.Errorf("%s = %q, want %q", key, got, want)
	}
}

// flip changes one hex digit.
func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}
