package server

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"portal/relay/invitelink"
)

// maxRequestIDLen bounds an incoming X-Request-Id a trusted proxy may hand
// on; longer ids are replaced by our own.
const maxRequestIDLen = 64

// AssignRequestID gives every request one id, in the X-Request-Id response
// header, in the log lines and on to the admin backend. An incoming id is
// kept only when a trusted proxy sent it and it is short and plain
// ([A-Za-z0-9._-]); anyone else's would otherwise be echoed into headers,
// error texts, logs and the backend's logs, where it could forge lines or
// carry a payload.
func (s *Server) AssignRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		id := req.Header.Get(echo.HeaderXRequestID)
		if !acceptableRequestID(id) || !s.Proxies.Trusts(req) {
			id = newRequestID()
		}
		req.Header.Set(echo.HeaderXRequestID, id) // nothing later reads the client's own value
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

// acceptableRequestID reports whether id is 1 to 64 of [A-Za-z0-9._-].
func acceptableRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID is 26 random base32 characters (128 bits).
func newRequestID() string { return rand.Text() }

// requestID is the id assignRequestID gave the request.
func requestID(c echo.Context) string { return c.Response().Header().Get(echo.HeaderXRequestID) }

// Bounds of what a log line copies from a request: a request line can be
// hundreds of kilobytes, and every copy of it costs memory and log volume.
const (
	maxLoggedMethod = 16
	maxLoggedPath   = 512
)

// clip returns s cut to at most max bytes on a character boundary, marked
// with how much was left out.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(+" + strconv.Itoa(len(s)-cut) + " bytes)"
}

// requestAttrs are the attributes every log line about a request carries:
// its id, the client's address (the direct peer, or the address trusted
// proxies put in X-Forwarded-For: echo's IPExtractor as configured in New),
// and the method and path, bounded.
func requestAttrs(c echo.Context) []slog.Attr {
	req := c.Request()
	attrs := make([]slog.Attr, 0, 6) // room for the request log's status and duration
	return append(attrs,
		slog.String("request_id", requestID(c)),
		slog.String("client", c.RealIP()),
		slog.String("method", clip(req.Method, maxLoggedMethod)),
		slog.String("path", loggedPath(req.URL.Path)),
	)
}

// tokenPaths are the routes whose last segment is a bearer token: an
// invitation link signs its holder in, a card's token shows the member.
// Logs keep the route and drop the token, so reading logs signs no one in.
var tokenPaths = []string{invitelink.PathPrefix, VerifyPrefix}

// loggedPath is the path as logged: bounded, tokens left out.
func loggedPath(p string) string {
	for _, prefix := range tokenPaths {
		if i := strings.Index(p, prefix); i >= 0 && len(p) > i+len(prefix) {
			return clip(p[:i+len(prefix)], maxLoggedPath) + "…"
		}
	}
	return clip(p, maxLoggedPath)
}

// LogFor is the server's logger for lines about the request c: every line
// carries requestAttrs, so that it can be found by the request id a member
// quotes. It is built on each call rather than kept in the context: apart
// from the request log, handlers log rarely (failures and refusals).
func (s *Server) LogFor(c echo.Context) *slog.Logger {
	return slog.New(s.log.Handler().WithAttrs(requestAttrs(c)))
}

// LogRequests logs one line per request: requestAttrs, the final status
// and the duration.
func (s *Server) LogRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		// The same line logFor(c) would write, without building a logger
		// (and formatting its attributes once more) per request: this line
		// is on every request's path, the relay's included.
		ctx := c.Request().Context()
		if !s.log.Enabled(ctx, slog.LevelInfo) {
			return nil
		}
		attrs := append(requestAttrs(c), slog.Int("status", c.Response().Status), slog.Duration("duration", time.Since(start)))
		s.log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// knownMethods are the methods a metric label may name; any other method
// counts as OTHER, so that clients cannot mint label values (each one a
// series kept in memory for the life of the process).
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

// methodLabel is the metric label of a request method.
func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return "OTHER"
}
