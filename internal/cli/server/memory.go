package server

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// quietCheck is how often a process looks whether it has gone quiet.
const quietCheck = 10 * time.Second

// releaseMemoryWhenQuiet gives the memory a burst of work left behind back
// to the operating system once the process goes quiet: a check every
// quietCheck with no garbage collection since the one before means the
// process allocates almost nothing, and then it collects and returns its
// free heap (debug.FreeOSMemory), once per quiet spell.
//
// Tasks parked for a person are data in Temporal's store, not memory: the
// worker's cache and the embedded server's are bounded (--workflow-cache-size,
// history.hostLevelCacheMaxSize), but the Go runtime keeps the heap that
// parking thousands of tasks grew, up to twice the live heap, and hands it
// back only slowly. BenchmarkParkedTasks and `make bench-peers` measure the
// resident memory that parked tasks leave once the server has been quiet
// (docs/performance.md). A busy process collects garbage many times a
// second, so it never pays for this; a quiet one pays one collection.
func releaseMemoryWhenQuiet(ctx context.Context) {
	t := time.NewTicker(quietCheck)
	defer t.Stop()
	var q quiet
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if q.observe(gcCycles()) {
				debug.FreeOSMemory()
				q.released(gcCycles())
			}
		}
	}
}

// quiet decides, from the garbage collections counted at each check,
// when to release memory: at the first check with none since the one
// before, after any with some.
type quiet struct {
	last uint64 // collections at the last check
	busy bool   // some since the last release
}

// observe takes the count of collections now and reports whether to
// release memory.
func (q *quiet) observe(cycles uint64) bool {
	moved := cycles != q.last
	q.last = cycles
	if moved {
		q.busy = true
		return false
	}
	return q.busy
}

// released records the release and the collection it made.
func (q *quiet) released(cycles uint64) { q.last, q.busy = cycles, false }

// gcCycles is how many garbage collections the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
