package pushverify

import (
	"context"
	"sync"
	"time"
)

// ReplayCache remembers the tokens a Verifier accepted, so that none is
// accepted twice. A cache shared by the replicas of a receiver (Redis,
// a database table with a unique key) protects all of them.
type ReplayCache interface {
	// Seen records id until expiry and reports whether it was recorded
	// before and has not expired since. An error fails the verification:
	// a receiver cannot tell a replay from a first delivery without the
	// cache.
	Seen(ctx context.Context, id string, expiry time.Time) (bool, error)
}

var _ ReplayCache = (*MemoryReplayCache)(nil)

// MemoryReplayCache is a ReplayCache in the process's memory, for a
// receiver running as one process. It holds each ID until its token
// expires (a few minutes), dropping expired ones as it goes.
type MemoryReplayCache struct {
	mu        sync.Mutex
	seen      map[string]time.Time
	nextSweep time.Time
	now       func() time.Time
}

// NewMemoryReplayCache returns an empty MemoryReplayCache.
func NewMemoryReplayCache() *MemoryReplayCache {
	return &MemoryReplayCache{seen: map[string]time.Time{}, now: time.Now}
}

// Seen implements ReplayCache.
func (c *MemoryReplayCache) Seen(_ context.Context, id string, expiry time.Time) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if now.After(c.nextSweep) {
		for k, until := range c.seen {
			if now.After(until) {
				delete(c.seen, k)
			}
		}
		c.nextSweep = now.Add(time.Minute)
	}
	if until, ok := c.seen[id]; ok && !now.After(until) {
		return true, nil
	}
	c.seen[id] = expiry
	return false, nil
}

// Len returns how many IDs the cache holds, expired ones not yet dropped
// included.
func (c *MemoryReplayCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}
