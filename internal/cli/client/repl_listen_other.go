//go:build !linux

package client

import "syscall"

// childSysProcAttr: outside Linux there is no parent-death signal, so a
// kill -9 of the REPL leaves its :listen child running; every other way out
// of the REPL stops it.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
