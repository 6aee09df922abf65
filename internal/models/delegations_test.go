package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDelegations: a delegation is recorded with who and when, listed for
// both its people (and for everyone with ""), found by its pair, active
// within its period only, and ended early by a revocation that keeps who
// revoked it; a second revocation keeps the first.
func TestDelegations(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testDelegations(t, b) })
}

func testDelegations(t *testing.T, b backend) {
	s, _ := openNew(t, b)
	ctx := context.Background()
	now := time.Now().UTC()
	d, err := s.AddDelegation(ctx, Delegation{From: "carl", To: "dana", Start: now.Add(-time.Hour), End: now.Add(time.Hour),
		Reason: "holiday", CreatedBy: "carl"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ID == 0 || d.CreatedAt.IsZero() || d.CreatedBy != "carl" {
		t.Fatalf("recorded: %+v", d)
	}
	if _, err := s.AddDelegation(ctx, Delegation{From: "erin", To: "carl", Start: now, End: now.Add(time.Minute), CreatedBy: "root"}); err != nil {
		t.Fatal(err)
	}
	for who, want := range map[string]int{"carl": 2, "dana": 1, "erin": 1, "zed": 0, "": 2} {
		list, err := s.Delegations(ctx, who)
		if err != nil || len(list) != want {
			t.Errorf("Delegations(%q): %d, %v; want %d", who, len(list), err, want)
		}
	}
	pair, err := s.DelegationsFromTo(ctx, "carl", "dana")
	if err != nil || len(pair) != 1 || pair[0].ID != d.ID || pair[0].Reason != "holiday" {
		t.Fatalf("carl to dana: %+v, %v", pair, err)
	}
	if !pair[0].ActiveAt(now) || pair[0].ActiveAt(now.Add(2*time.Hour)) || pair[0].ActiveAt(now.Add(-2*time.Hour)) {
		t.Errorf("active: now %v, after %v, before %v", pair[0].ActiveAt(now), pair[0].ActiveAt(now.Add(2*time.Hour)), pair[0].ActiveAt(now.Add(-2*time.Hour)))
	}
	r, err := s.RevokeDelegation(ctx, d.ID, "carl")
	if err != nil || r.RevokedAt == nil || r.RevokedBy != "carl" || r.ActiveAt(time.Now().Add(time.Second)) {
		t.Fatalf("revoked: %+v, %v", r, err)
	}
	again, err := s.RevokeDelegation(ctx, d.ID, "root")
	if err != nil || again.RevokedBy != "carl" || !again.RevokedAt.Equal(*r.RevokedAt) {
		t.Errorf("revoked again: %+v, %v", again, err)
	}
	if _, err := s.DelegationByID(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("delegation 999: %v; want ErrNotFound", err)
	}
}
