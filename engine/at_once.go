package engine

import (
	"context"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/errgroup"
)

// AtOnce runs the reads of a page that do not depend on one another at the
// same time, each on a pool connection of its own, and returns the first
// error; ctx ends for the others when one fails. Each read must fill what
// no other read touches, and none may run inside a transaction: SQLite's
// one connection takes them in turn, and a read waiting for the connection
// its own transaction holds would never get it.
//
// A panic in a read becomes its error, as it would have become the
// request's 500 had the read run on the request's goroutine: errgroup does
// not recover, and a panic on a goroutine of its own ends the process.
func AtOnce(ctx context.Context, reads ...func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, read := range reads {
		g.Go(func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic in a read: %v\n%s", p, debug.Stack())
				}
			}()
			return read(gctx)
		})
	}
	return g.Wait()
}
