package upstream

import (
	"mime"
	"net/http"
	"slices"
	"strings"
)

// relayWriter is the ResponseWriter that ReverseProxy writes a relayed
// answer to. ReverseProxy passes a backend's interim answers (100
// Continue, 103 Early Hints) on with WriteHeader(1xx) and then clears the
// whole header map; written to echo's Response, that 1xx would count as
// the final status (echo commits on any WriteHeader, so the real status
// was dropped and the client got 200), and the clear would take the
// gateway's X-Request-Id and session cookie with it. So interim answers go
// straight to the connection's writer, and the headers set before the
// relay come back after each clear.
type relayWriter struct {
	http.ResponseWriter                     // the caller's: final status, body, flushing, hijacking
	conn                http.ResponseWriter // the innermost writer, for interim answers
	before              http.Header         // set by the gateway before the relay
	cleared             bool                // ReverseProxy cleared the map after an interim answer
	wroteHeader         bool
	final               func(http.Header) // adds the relay's headers to the final answer
}

func newRelayWriter(w http.ResponseWriter, final func(http.Header)) *relayWriter {
	return &relayWriter{ResponseWriter: w, conn: innermost(w), before: w.Header().Clone(), final: final}
}

// innermost unwraps w down to the server's own writer. Wrappers such as
// echo's Response share that writer's header map.
func innermost(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// Header returns the answer's header map, with the gateway's headers back
// in it after ReverseProxy cleared it.
func (w *relayWriter) Header() http.Header {
	h := w.ResponseWriter.Header()
	if w.cleared {
		w.cleared = false
		for k, vv := range w.before {
			h[k] = append(slices.Clone(vv), h[k]...)
		}
	}
	return h
}

// WriteHeader sends an interim answer (any 1xx but 101, which ends the
// HTTP exchange) to the connection and leaves the final status to come.
func (w *relayWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.writeInterim(code)
		return
	}
	if !w.wroteHeader {
		w.wroteHeader = true
		w.final(w.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

// interimHeaders are the headers an interim answer may pass on: Link, what
// 103 Early Hints exists for. Anything else a backend puts on a 1xx (a
// Set-Cookie above all) would bypass what the relay checks on final answers.
var interimHeaders = []string{"Link"}

// writeInterim sends the backend's interim answer with its Link headers
// only: ReverseProxy has added all its headers to the gateway's.
func (w *relayWriter) writeInterim(code int) {
	h := w.Header()
	for k, vv := range w.before {
		if rest := h[k][min(len(vv), len(h[k])):]; len(rest) > 0 {
			h[k] = rest
		} else {
			delete(h, k)
		}
	}
	for k := range h {
		if !slices.Contains(interimHeaders, k) {
			delete(h, k)
		}
	}
	w.conn.WriteHeader(code)
	// ReverseProxy clears the map after this too; clearing here keeps the
	// interim headers off the final answer whatever it does.
	clear(h)
	w.cleared = true
}

func (w *relayWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the caller's writer, which
// ReverseProxy flushes while streaming and hijacks for 101 upgrades.
func (w *relayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sandboxPolicy lets a relayed page's scripts, forms and popups run, but
// in an opaque origin: without allow-same-origin they can neither read the
// portal's cookies and storage nor call its API as the member.
const sandboxPolicy = "sandbox allow-scripts allow-forms allow-popups allow-downloads"

// secureAnswer adds the relay's headers to an answer: nosniff on every
// one, so no browser reads a JSON or text answer as HTML; and for active
// content outside the trusted paths a sandbox, in addition to any
// Content-Security-Policy the backend sent (every policy a browser gets
// applies, so the backend's cannot lift ours).
func secureAnswer(h http.Header, trusted bool) {
	h.Set("X-Content-Type-Options", "nosniff")
	if !trusted && isActive(h.Values("Content-Type")) {
		h.Add("Content-Security-Policy", sandboxPolicy)
	}
}

// isActive reports whether an answer with these Content-Type headers may
// be run as a document. Several of them count as active: browsers take the
// last valid one, other clients the first.
func isActive(types []string) bool {
	if len(types) != 1 {
		return true
	}
	return isActiveContent(types[0])
}

// isActiveContent reports whether a browser could run scripts from an
// answer of this Content-Type as a document: HTML, SVG and XML, which may
// embed XHTML. A missing or unparsable type counts too: a browser would
// guess one from the body.
func isActiveContent(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.Contains(mt, "/") {
		return true
	}
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/xsl", "multipart/x-mixed-replace":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}
