//go:build !linux

package ptytest

import (
	"os"
	"testing"
)

// Open skips the test: pseudo-terminals are opened on Linux only.
func Open(t testing.TB) (master, slave *os.File) {
	t.Skip("pseudo-terminals are opened on Linux only")
	return nil, nil
}

// Echoing reports true: there is no terminal to ask.
func Echoing(testing.TB, *os.File) bool { return true }
