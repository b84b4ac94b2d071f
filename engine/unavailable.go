package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/uptrace/bun/driver/pgdriver"
)

// ClassifyUnavailable turns a failure to reach the database into an
// unavailable error (503, try again) instead of an internal one (500, a
// defect), the cause wrapped for the logs; errors the engine already
// classified pass unchanged. AsError applies it to every error a caller
// reads, so engine functions return their errors as they met them.
func ClassifyUnavailable(err *error) {
	if *err == nil {
		return
	}
	var e *Error
	if errors.As(*err, &e) || !isConnectionFailure(*err) {
		return
	}
	*err = unavailable(*err)
}

// unavailable is cause as the unavailable error every outage reads as.
func unavailable(cause error) *Error {
	return &Error{Code: CodeUnavailable, Message: "The service is temporarily unavailable. Please try again shortly.", Err: cause}
}

// isConnectionFailure reports whether err means the database could not be
// reached or the connection broke, as opposed to a statement that failed:
//   - a dial or read failure (net.Error: refused, reset, timeout, DNS);
//   - a connection closed under a query: pgdriver answers io.EOF or
//     io.ErrUnexpectedEOF, database/sql driver.ErrBadConn (after its own
//     retries) or sql.ErrConnDone;
//   - the request's deadline passing while it waited for a connection or a
//     statement (a cancelled request is the client's doing, not an outage);
//   - PostgreSQL refusing work: connection exceptions (class 08), shutdown
//     and start-up (57P01-57P03), too many connections (53300);
//   - SQLite's file unreachable or locked past the busy timeout (its error
//     type would pull modernc into our imports; its text is stable).
func isConnectionFailure(err error) bool {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		code := pgErr.Field('C')
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" || code == "53300"
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "unable to open database file")
}
