package server

import (
	"context"
	"strings"
	"testing"
)

// TestDiskGuard: below its minimum the guard refuses with an error naming
// the disk, and passes again once space frees; an unreadable file system
// passes; no data dir, no guard.
func TestDiskGuard(t *testing.T) {
	free, readErr := uint64(1<<30), error(nil)
	g := &diskGuard{dir: "/data", min: 64 << 20, free: func(string) (uint64, error) { return free, readErr }}
	if err := g.check(); err != nil {
		t.Fatalf("1 GiB free: %v", err)
	}
	free = 3 << 20
	err := g.check()
	if err == nil || !strings.Contains(err.Error(), "disk is full: 3.0 MiB free in /data, below the 64.0 MiB") {
		t.Fatalf("3 MiB free: %v, want the shortage named", err)
	}
	if err := g.checks()[0].Run(context.Background()); err == nil {
		t.Error("the readiness check passed on a full disk")
	}
	free = 1 << 30
	if err := g.check(); err != nil {
		t.Errorf("space freed: %v", err)
	}
	readErr = context.Canceled
	if err := g.check(); err != nil {
		t.Errorf("free space unreadable: %v, want a pass", err)
	}
	if newDiskGuard("") != nil || (*diskGuard)(nil).check() != nil || (*diskGuard)(nil).checks() != nil {
		t.Error("no data dir: want no guard, and a nil guard passing")
	}
}
