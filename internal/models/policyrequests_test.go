package models

import (
	"context"
	"testing"
	"time"
)

// TestPrunePolicyRequests: the requests recorded before the cut are
// deleted, the others kept.
func TestPrunePolicyRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		ctx := context.Background()
		now := time.Now().UTC()
		var rs []PolicyRequest
		for i, age := range []time.Duration{100 * 24 * time.Hour, 40 * 24 * time.Hour, 29 * 24 * time.Hour, time.Hour} {
			rs = append(rs, PolicyRequest{RunID: "run", ActivityID: string(rune('a' + i)), Input: "{}", CreatedAt: now.Add(-age)})
		}
		if err := s.RecordPolicyRequests(ctx, rs); err != nil {
			t.Fatal(err)
		}
		n, err := s.PrunePolicyRequests(ctx, now.Add(-30*24*time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("pruned %d, %v; want 2", n, err)
		}
		left, err := s.PolicyRequests(ctx, time.Time{}, "", false, 0)
		if err != nil || len(left) != 2 || left[0].ActivityID != "c" || left[1].ActivityID != "d" {
			t.Errorf("left: %+v, %v; want c and d", left, err)
		}
	})
}
