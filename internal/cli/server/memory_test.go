package server

import "testing"

// A process releases memory once per quiet spell: at the first check
// without a collection after checks with some, never while collections go
// on, and not again until it was busy once more.
func TestReleaseMemoryOncePerQuietSpell(t *testing.T) {
	var q quiet
	steps := []struct {
		cycles  uint64
		release bool
	}{
		{0, false},  // idle from the start: nothing to give back
		{5, false},  // busy
		{9, false},  // busy
		{9, true},   // quiet: release
		{10, false}, // the release's own collection, seen as released
		{10, false}, // quiet again, but nothing new since
		{14, false}, // busy
		{14, true},  // quiet: release
	}
	for i, s := range steps {
		if got := q.observe(s.cycles); got != s.release {
			t.Fatalf("check %d (collections %d): release %v, want %v", i, s.cycles, got, s.release)
		}
		if s.release {
			q.released(s.cycles + 1)
		}
	}
}
