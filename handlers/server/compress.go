package server

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// Gzip for pages and downloads, applied after the handler has written its
// answer rather than while it runs. A gzip writer holds about 700 KB (its
// hash tables are fixed arrays, whatever the level); echo's middleware took
// one from a sync.Pool for the whole request, database waits included, so
// 32 members loading pages at once held 32 of them, and the pool, emptied
// by every garbage collection, kept allocating new ones: a third of the
// server's peak memory (docs/BENCHMARKS.md). Here a writer is held only for
// the compression itself, so about as many exist as requests compress at
// the same instant, a few per CPU.

// compressMin is the smallest body worth compressing.
const compressMin = 1024

// compressMax bounds what is held back to compress: a larger answer (a big
// export) goes out as it is written, uncompressed.
const compressMax = 4 << 20

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// CompressAnswers gzips the answers of requests that accept it, except those
// skip names.
func CompressAnswers(skip func(echo.Context) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			res := c.Response()
			res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
			if !acceptsGzip(c.Request()) || c.Request().Method == http.MethodHead {
				return next(c)
			}
			held := &heldAnswer{ResponseWriter: res.Writer}
			res.Writer = held
			// Deferred, so that a panic's error page (the recover middleware
			// runs outside this one) reaches the client: what was held goes
			// out first, or, if nothing was, the page goes straight through.
			defer func() {
				res.Writer = held.ResponseWriter
				held.finish()
			}()
			return next(c)
		}
	}
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip
// without refusing it (q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get(echo.HeaderAcceptEncoding), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
			return !found || q == "" || strings.Trim(q, "0.") != ""
		}
	}
	return false
}

// heldAnswer keeps a handler's answer back until finish, which writes it
// compressed, or passes it on as it comes once it is streamed (Flush) or
// grows past compressMax.
type heldAnswer struct {
	http.ResponseWriter
	status  int
	body    bytes.Buffer
	passing bool // writing straight through: the header has gone out
}

func (h *heldAnswer) WriteHeader(status int) {
	if h.passing {
		h.ResponseWriter.WriteHeader(status)
		return
	}
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldAnswer) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	if h.passing {
		return h.ResponseWriter.Write(p)
	}
	if h.body.Len()+len(p) > compressMax {
		if err := h.passOn(); err != nil {
			return 0, err
		}
		return h.ResponseWriter.Write(p)
	}
	return h.body.Write(p)
}

// Flush streams the answer from here on, uncompressed.
func (h *heldAnswer) Flush() {
	if !h.passing {
		h.passOn()
	}
	http.NewResponseController(h.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (h *heldAnswer) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// passOn sends the header and what is held, uncompressed, and writes
// straight through from then on.
func (h *heldAnswer) passOn() error {
	h.passing = true
	if h.status == 0 {
		return nil // nothing written yet: the header goes with the first write
	}
	h.ResponseWriter.WriteHeader(h.status)
	_, err := h.body.WriteTo(h.ResponseWriter)
	return err
}

// finish writes what the handler answered: compressed when it is worth it.
func (h *heldAnswer) finish() {
	if h.passing || h.status == 0 {
		return // streamed, or nothing written: the error handler answers
	}
	header := h.Header()
	if h.body.Len() < compressMin || header.Get(echo.HeaderContentEncoding) != "" || !compressible(header.Get(echo.HeaderContentType)) {
		h.passOn()
		return
	}
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	var out bytes.Buffer
	out.Grow(h.body.Len() / 3)
	gz.Reset(&out)
	gz.Write(h.body.Bytes())
	if err := gz.Close(); err != nil {
		h.passOn()
		return
	}
	header.Set(echo.HeaderContentEncoding, "gzip")
	header.Set(echo.HeaderContentLength, strconv.Itoa(out.Len()))
	h.ResponseWriter.WriteHeader(h.status)
	out.WriteTo(h.ResponseWriter)
}

// compressible says whether a body of contentType shrinks under gzip (text
// does; images, PDFs and archives are compressed already).
func compressible(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	t = strings.TrimSpace(strings.ToLower(t))
	return strings.HasPrefix(t, "text/") || t == "application/json" || t == "application/problem+json" ||
		t == "application/javascript" || t == "image/svg+xml" || strings.HasSuffix(t, "+xml") || t == "application/xml"
}
