package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// defaultDiskReserve is --disk-reserve's default: the room the data
// directory's file system keeps for what is already under way; below it,
// new messages are refused. The embedded Temporal's SQLite files,
// a2aflow's database and the payload store live there; tasks at work keep
// writing (their events, timers, activities' results) after new work is
// refused, and SQLite needs room for its WAL.
const defaultDiskReserve = "64MiB"

// bindDiskReserve binds serve's --disk-reserve.
func bindDiskReserve(fs *pflag.FlagSet, p *string) {
	cmdutil.Bind(fs).String(p, "disk-reserve", "A2AFLOW_DISK_RESERVE", defaultDiskReserve,
		"free space the data directory's file system keeps for the work under way: below it new messages are refused with a retryable STORAGE_FULL error (HTTP 503) and /readyz fails its disk check, while cancels and approval decisions, which end or free work, are still taken; bytes or a size such as 512MiB or 2GiB; 0 turns the guard off")
}

// parseSize reads a size: bytes, or a number with a unit (B, KiB, MiB,
// GiB, TiB, or KB, MB, GB, TB in powers of ten).
func parseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	num := strings.TrimRight(s, "BKMGTikmgtb")
	unit := strings.ToUpper(strings.TrimSpace(s[len(num):]))
	mult, ok := map[string]uint64{"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || n < 0 || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size: want bytes or a number with a unit, such as 64MiB or 2GiB", s)
	}
	return uint64(n * float64(mult)), nil
}

// diskGuard tells whether the data directory's file system has room for new
// work. Every message asks it: one statfs call, microseconds beside the
// Temporal update that delivers the message, and never stale.
type diskGuard struct {
	dir  string
	min  uint64
	free func(dir string) (uint64, error)
}

// newDiskGuard guards dir, keeping reserve (--disk-reserve) free, or
// returns nil when dir is "" (api, which has neither a data directory nor
// the flag), the reserve is 0 or the platform cannot tell a file system's
// free space.
func newDiskGuard(dir, reserve string) (*diskGuard, error) {
	if dir == "" {
		return nil, nil
	}
	min, err := parseSize(reserve)
	if err != nil {
		return nil, fmt.Errorf("--disk-reserve: %w", err)
	}
	if min == 0 || freeBytes == nil {
		return nil, nil
	}
	return &diskGuard{dir: dir, min: min, free: freeBytes}, nil
}

// check returns an error naming the shortage when the data directory's file
// system has less than min bytes free. A file system whose free space
// cannot be read passes: the writes themselves then tell.
func (g *diskGuard) check() error {
	if g == nil {
		return nil
	}
	free, err := g.free(g.dir)
	if err != nil || free >= g.min {
		return nil
	}
	return fmt.Errorf("the server's data disk is full: %s free in %s, below the %s it keeps for the work under way; "+
		"new messages are refused until space frees, and tasks already recorded are kept. "+
		"Send the same request again (same messageId) once space is freed (the reserve is --disk-reserve)", mib(free), g.dir, mib(g.min))
}

// checks returns the /readyz check "disk": failed while new messages are
// refused. None without a guard.
func (g *diskGuard) checks() []api.Check {
	if g == nil {
		return nil
	}
	return []api.Check{{Name: "disk", Run: func(context.Context) error { return g.check() }}}
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
