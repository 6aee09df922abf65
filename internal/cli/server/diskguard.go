package server

import (
	"context"
	"fmt"

	"github.com/a2aflow/a2aflow/internal/api"
)

// minFreeDisk is the room the data directory's file system keeps for what
// is already under way: below it, new messages are refused. The embedded
// Temporal's SQLite files, a2aflow's database and the payload store live
// there; tasks at work keep writing (their events, timers, activities'
// results) after new work is refused, and SQLite needs room for its WAL.
const minFreeDisk = 64 << 20

// diskGuard tells whether the data directory's file system has room for new
// work. Every message asks it: one statfs call, microseconds beside the
// Temporal update that delivers the message, and never stale.
type diskGuard struct {
	dir  string
	min  uint64
	free func(dir string) (uint64, error)
}

// newDiskGuard guards dir, or returns nil when dir is "" or the platform
// cannot tell a file system's free space.
func newDiskGuard(dir string) *diskGuard {
	if dir == "" || freeBytes == nil {
		return nil
	}
	return &diskGuard{dir: dir, min: minFreeDisk, free: freeBytes}
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
		"Send the same request again (same messageId) once space is freed", mib(free), g.dir, mib(g.min))
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
