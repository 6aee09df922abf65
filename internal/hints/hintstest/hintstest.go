// Package hintstest checks hints in the tests of package hints's
// cross-process carriers (pghints, unixhints).
package hintstest

import (
	"testing"
	"time"
)

// Hinted fails t unless c receives a hint within the given time.
func Hinted(t testing.TB, c <-chan struct{}, within time.Duration) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(within):
		t.Fatalf("no hint within %s", within)
	}
}

// NotHinted fails t if c receives a hint during the given time.
func NotHinted(t testing.TB, c <-chan struct{}, during time.Duration) {
	t.Helper()
	select {
	case <-c:
		t.Fatal("hinted, want no hint")
	case <-time.After(during):
	}
}
