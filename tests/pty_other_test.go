//go:build !linux

package tests

import (
	"os"
	"os/exec"
	"testing"
)

// openPTY: the tests open pseudo-terminals on Linux only.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Skip("pseudo-terminals are opened on Linux only")
	return nil, nil
}

func echoing(*testing.T, *os.File) bool { return true }

func onTerminal(*exec.Cmd) {}
