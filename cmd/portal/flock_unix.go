//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// errLocked means another process holds the lock.
var errLocked = errors.New("locked")

// flockExclusive takes an exclusive advisory lock on f without waiting.
func flockExclusive(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
