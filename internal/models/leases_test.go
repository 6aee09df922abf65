package models

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLLMLeases: the concurrency limit counts unexpired leases; a released
// lease frees its slot; a holder that died (never renews, never releases)
// frees its slot when its lease expires; a lease renewed in time keeps it.
func TestLLMLeases(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testLLMLeases(t, b) })
}

func testLLMLeases(t *testing.T, b backend) {
	s, _ := openNew(t, b)
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	lim := LeaseLimit{Concurrency: 2}
	ttl := 30 * time.Second
	acquire := func(key string, lim LeaseLimit, at time.Time) (string, time.Duration) {
		t.Helper()
		id, wait, err := s.AcquireLLMLease(ctx, key, lim, ttl, at)
		if err != nil {
			t.Fatal(err)
		}
		return id, wait
	}
	a, _ := acquire("openai/m", lim, t0)
	dead, _ := acquire("openai/m", lim, t0.Add(time.Second))
	if a == "" || dead == "" {
		t.Fatalf("two slots of 2: got %q %q", a, dead)
	}
	if id, wait := acquire("openai/m", lim, t0.Add(2*time.Second)); id != "" || wait != 28*time.Second {
		t.Fatalf("third of 2: got %q, wait %v; want none, wait 28s (the first lease's expiry)", id, wait)
	}
	// Another key has its own slots.
	if id, _ := acquire("openai/other", lim, t0.Add(2*time.Second)); id == "" {
		t.Fatal("another key is limited by this one's holders")
	}
	// a releases: its slot is free at once.
	if err := s.ReleaseLLMLease(ctx, a, t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	c, _ := acquire("openai/m", lim, t0.Add(3*time.Second))
	if c == "" {
		t.Fatal("a released slot is not free")
	}
	// c renews; dead does not (its worker was killed): at dead's expiry
	// (t0+31s) its slot frees, c's does not.
	if ok, err := s.RenewLLMLease(ctx, c, ttl, t0.Add(20*time.Second)); err != nil || !ok {
		t.Fatalf("renew: %v %v", ok, err)
	}
	if id, _ := acquire("openai/m", lim, t0.Add(30*time.Second)); id != "" {
		t.Fatal("a slot was free before the dead holder's lease expired")
	}
	d, _ := acquire("openai/m", lim, t0.Add(31*time.Second))
	if d == "" {
		t.Fatal("the dead holder's slot did not free itself at its lease's expiry")
	}
	if id, _ := acquire("openai/m", lim, t0.Add(45*time.Second)); id != "" {
		t.Fatal("the renewed lease lost its slot before its new expiry")
	}
	// The dead holder's row was removed: renewing it now says so.
	if ok, err := s.RenewLLMLease(ctx, dead, ttl, t0.Add(46*time.Second)); err != nil || ok {
		t.Errorf("renewing an expired, removed lease: ok=%v err=%v, want false", ok, err)
	}
}

// TestLLMLeaseRate: at most Rate calls start per second, released or not.
func TestLLMLeaseRate(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		ctx := context.Background()
		t0 := time.Unix(1_800_000_000, 0)
		lim := LeaseLimit{Rate: 2}
		for i, at := range []time.Duration{0, 100 * time.Millisecond} {
			id, _, err := s.AcquireLLMLease(ctx, "k", lim, time.Minute, t0.Add(at))
			if err != nil || id == "" {
				t.Fatalf("call %d: %q %v", i, id, err)
			}
			if err := s.ReleaseLLMLease(ctx, id, t0.Add(at+time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
		id, wait, err := s.AcquireLLMLease(ctx, "k", lim, time.Minute, t0.Add(500*time.Millisecond))
		if err != nil || id != "" || wait != 500*time.Millisecond {
			t.Fatalf("third call within the second: %q, wait %v, %v; want none, wait 500ms", id, wait, err)
		}
		if id, _, err := s.AcquireLLMLease(ctx, "k", lim, time.Minute, t0.Add(time.Second)); err != nil || id == "" {
			t.Fatalf("a call a second after the first: %q %v", id, err)
		}
		// 0.5 per second: one call per two seconds.
		slow := LeaseLimit{Rate: 0.5}
		if id, _, _ := s.AcquireLLMLease(ctx, "slow", slow, time.Minute, t0); id == "" {
			t.Fatal("first slow call refused")
		}
		if id, wait, _ := s.AcquireLLMLease(ctx, "slow", slow, time.Minute, t0.Add(1900*time.Millisecond)); id != "" || wait != 100*time.Millisecond {
			t.Fatalf("second slow call after 1.9 s: %q, wait %v", id, wait)
		}
	})
}

// TestLLMLeasesConcurrentAcquirers: acquirers racing on one key never hold
// more slots than the limit (the key row serialises them).
func TestLLMLeasesConcurrentAcquirers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		ctx := context.Background()
		var held, most atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					id, _, err := s.AcquireLLMLease(ctx, "race", LeaseLimit{Concurrency: 3}, time.Minute, time.Now())
					if err != nil {
						t.Error(err)
						return
					}
					if id == "" {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					n := held.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(20 * time.Millisecond)
					held.Add(-1)
					if err := s.ReleaseLLMLease(ctx, id, time.Now()); err != nil {
						t.Error(err)
					}
					return
				}
			}()
		}
		wg.Wait()
		if m := most.Load(); m > 3 || m < 1 {
			t.Errorf("at most %d held at once, want 1..3", m)
		}
	})
}
