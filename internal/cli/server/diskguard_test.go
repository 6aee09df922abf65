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
	if g, err := newDiskGuard("", ""); g != nil || err != nil || (*diskGuard)(nil).check() != nil || (*diskGuard)(nil).checks() != nil {
		t.Error("no data dir: want no guard, and a nil guard passing")
	}
	if freeBytes != nil {
		if g, err := newDiskGuard("/data", "0"); g != nil || err != nil {
			t.Errorf("--disk-reserve 0: %v, %v; want no guard", g, err)
		}
		if g, err := newDiskGuard("/data", "1.5GiB"); err != nil || g.min != 3<<29 {
			t.Errorf("--disk-reserve 1.5GiB: %v, %v; want a guard keeping 1.5 GiB", g, err)
		}
	}
	if _, err := newDiskGuard("/data", "lots"); err == nil || !strings.Contains(err.Error(), `--disk-reserve: "lots" is not a size`) {
		t.Errorf("--disk-reserve lots: %v, want the flag and the value named", err)
	}
}

// TestParseSize reads bytes and sizes with binary and decimal units, and
// refuses what is not one.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "1048576": 1 << 20, "64MiB": 64 << 20, "64mib": 64 << 20, "2 GiB": 2 << 30,
		"512KiB": 512 << 10, "1GB": 1e9, "10MB": 1e7, "100B": 100, "0.5MiB": 1 << 19, "1TiB": 1 << 40} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "64XB", "lots", "1e30GiB", "64 MiB extra"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
