package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"portal/engine"
)

// TestAtOnce: the reads run together (each waits for the other to have
// started), a failed read ends the others' context and is the error, and a
// panic in a read is an error, not the end of the process.
func TestAtOnce(t *testing.T) {
	started := make(chan struct{}, 2)
	together := func(ctx context.Context) error {
		started <- struct{}{}
		deadline := time.After(5 * time.Second)
		for len(started) < 2 {
			select {
			case <-deadline:
				return errors.New("the other read never started: the reads ran one after the other")
			case <-time.After(time.Millisecond):
			}
		}
		return nil
	}
	if err := engine.AtOnce(context.Background(), together, together); err != nil {
		t.Fatal(err)
	}

	failed := errors.New("read failed")
	err := engine.AtOnce(context.Background(),
		func(context.Context) error { return failed },
		func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Second):
				return errors.New("not cancelled")
			}
		})
	if !errors.Is(err, failed) {
		t.Fatalf("got %v, want the failed read's error", err)
	}

	err = engine.AtOnce(context.Background(), func(context.Context) error {
		panic("a bug in a read")
	})
	if err == nil || !strings.Contains(err.Error(), "panic in a read") {
		t.Fatalf("a panic gave %v", err)
	}
}
