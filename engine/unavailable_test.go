package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

// The classifier is what turns an outage into a 503; the forwarder test in
// handlers covers PostgreSQL end to end, this covers the kinds of failure
// one outage does not produce.
func TestClassifyUnavailable(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"connection refused", fmt.Errorf("load period: %w", dial), true},
		{"dropped connection", fmt.Errorf("scan: %w", io.EOF), true},
		{"half a message", io.ErrUnexpectedEOF, true},
		{"bad connection", driver.ErrBadConn, true},
		{"connection done", sql.ErrConnDone, true},
		{"deadline waiting for a connection", fmt.Errorf("begin: %w", context.DeadlineExceeded), true},
		{"sqlite busy past the timeout", errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{"client went away", context.Canceled, false},
		{"no rows", sql.ErrNoRows, false},
		{"syntax error", errors.New(`ERROR: syntax error at or near ":" (SQLSTATE=42601)`), false},
		{"already classified", Errorf(CodeConflict, "closed"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err
			ClassifyUnavailable(&err)
			if got := ErrorCode(err) == CodeUnavailable; got != tc.unavailable {
				t.Fatalf("%v: unavailable = %v, want %v", tc.err, got, tc.unavailable)
			}
			if tc.unavailable && !errors.Is(err, tc.err) {
				t.Fatalf("the cause %v is not wrapped", tc.err)
			}
		})
	}
	var none error
	if ClassifyUnavailable(&none); none != nil {
		t.Fatalf("nil became %v", none)
	}
}
