//go:build !unix

package main

import (
	"errors"
	"os"
)

// errLocked means another process holds the lock.
var errLocked = errors.New("locked")

// flockExclusive does nothing where flock(2) does not exist: there, one
// process per SQLite file is the operator's to keep.
func flockExclusive(*os.File) error { return nil }
