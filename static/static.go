// Package static embeds the built front-end assets (static/dist: the Tailwind
// CSS, the vendored htmx, the portal's script) and serves them under
// content-hashed URLs, so that browsers may cache them for a year: a changed
// file gets a new URL, and a page never mixes old and new assets.
//
// Everything is computed once at package initialisation: the hash of every
// file (the first 10 hex digits of its SHA-256) and, where it helps, its
// gzip-compressed bytes.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// prefix is the path under which Handler serves the assets.
const prefix = "/static/"

//go:embed dist
var dist embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	url         string // "/static/app.3f9c1a2b4d.css"
	etag        string // quoted hash, for conditional requests
	contentType string
	body        []byte
	gzipped     []byte // nil when compression does not make the file smaller
}

var (
	byName   map[string]*asset // "app.css"
	byHashed map[string]*asset // "app.3f9c1a2b4d.css"
)

func init() {
	byName, byHashed = map[string]*asset{}, map[string]*asset{}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		// Notes such as VENDORED.md describe the assets; they are not assets.
		if path.Ext(p) == ".md" {
			return nil
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "dist/")
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:10]
		hashed := hashedName(name, hash)
		a := &asset{
			url:         prefix + hashed,
			etag:        strconv.Quote(hash),
			contentType: contentType(name),
			body:        body,
			gzipped:     compress(body),
		}
		byName[name], byHashed[hashed] = a, a
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("static: reading the embedded assets: %v", err))
	}
}

// URL returns the public address of an embedded file, e.g.
// URL("app.css") == "/static/app.3f9c1a2b4d.css". Asset names are constants
// in code, so an unknown name is a programming error: URL panics. Call it
// while the program starts (a package-level variable) to find such a typo at once.
func URL(name string) string {
	a, ok := byName[name]
	if !ok {
		panic(fmt.Sprintf("static: no embedded asset %q in static/dist", name))
	}
	return a.url
}

// Handler serves the embedded assets at the addresses URL returns, for GET
// and HEAD: with a one-year immutable Cache-Control, the content type, and
// the precomputed gzip bytes to clients that accept them. Any other path
// under /static/, including an asset's old hash, is 404.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	hashed, ok := strings.CutPrefix(r.URL.Path, prefix)
	a := byHashed[hashed]
	if !ok || a == nil {
		// Not cached: a deployment may add the file a moment later.
		h.Set("Cache-Control", "no-store")
		http.NotFound(w, r)
		return
	}

	body, etag := a.body, a.etag
	if a.gzipped != nil {
		// Caches must keep the two encodings apart.
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			body, etag = a.gzipped, a.etag[:len(a.etag)-1]+`-gzip"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", etag)
	h.Set("Content-Type", a.contentType)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		h.Del("Content-Type")
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // the client went away; nothing to do
	}
}

// hashedName puts the hash before the last extension: "htmx.min.js" becomes
// "htmx.min.<hash>.js", "img/logo.svg" becomes "img/logo.<hash>.svg".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	if ext == "" || ext == path.Base(name) {
		return name + "." + hash
	}
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// contentType names the types of the files we ship explicitly, so that the
// answer does not depend on the host's mime.types.
func contentType(name string) string {
	switch ext := path.Ext(name); ext {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".json", ".map":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".woff2":
		return "font/woff2"
	case ".txt":
		return "text/plain; charset=utf-8"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// compress returns the gzip bytes of body at the best compression, or nil
// when they are not smaller (images and fonts are compressed already).
func compress(body []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		panic(err) // only for an invalid level
	}
	if _, err := zw.Write(body); err != nil {
		panic(fmt.Sprintf("static: gzip: %v", err)) // writes to a bytes.Buffer do not fail
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("static: gzip: %v", err))
	}
	if buf.Len() >= len(body) {
		return nil
	}
	return buf.Bytes()
}

// acceptsGzip reports whether Accept-Encoding allows gzip: listed (or "*")
// with a quality above zero.
func acceptsGzip(headers []string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, header := range headers {
		for _, part := range strings.Split(header, ",") {
			coding, params, _ := strings.Cut(part, ";")
			q, ok := quality(params)
			if !ok {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzipQ = q
			case "*":
				starQ = q
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// quality returns the q parameter of an Accept-Encoding element (1 when
// absent); ok is false when it is malformed.
func quality(params string) (q float64, ok bool) {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil && f >= 0 && f <= 1
		}
	}
	return 1, true
}

// etagMatches reports whether an If-None-Match header names etag (or is "*").
// Weak and strong forms compare equal, as RFC 9110 asks for If-None-Match.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
