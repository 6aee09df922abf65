package models

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyVersions: versions are numbered across scopes from 1; the
// policies in force at a version are each scope's latest text at or below
// it, an emptied scope dropping out; history lists a scope's versions, the
// latest first, with who, when and why; a version is read back by number.
func TestPolicyVersions(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testPolicyVersions(t, b) })
}

func testPolicyVersions(t *testing.T, b backend) {
	s, _ := openNew(t, b)
	ctx := context.Background()
	if v, err := s.LatestPolicyVersion(ctx); err != nil || v != 0 {
		t.Fatalf("latest of an empty store: %d, %v; want 0", v, err)
	}
	add := func(scope, text, author, reason string) PolicyVersion {
		t.Helper()
		v, err := s.AddPolicyVersion(ctx, scope, text, author, reason)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	add("server", "forbid-1", "root", "first")
	add("agent/payables", "pay-1", "root", "pay over 1000")
	add("tenant/acme", "acme-1", "ann", "acme's")
	v4 := add("agent/payables", "pay-5", "root", "threshold 5000")
	add("tenant/acme", "", "ann", "acme's removed")
	if v4.Version != 4 || v4.CreatedAt.IsZero() {
		t.Fatalf("the fourth version: %+v", v4)
	}
	scopesAt := func(v int64) []string {
		t.Helper()
		list, err := s.PoliciesAt(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range list {
			out = append(out, p.Scope+"="+p.Text)
		}
		return out
	}
	for _, tc := range []struct {
		at   int64
		want []string
	}{
		{1, []string{"server=forbid-1"}},
		{3, []string{"agent/payables=pay-1", "server=forbid-1", "tenant/acme=acme-1"}},
		{4, []string{"agent/payables=pay-5", "server=forbid-1", "tenant/acme=acme-1"}},
		{5, []string{"agent/payables=pay-5", "server=forbid-1"}},
		{0, []string{"agent/payables=pay-5", "server=forbid-1"}},
	} {
		if diff := cmp.Diff(tc.want, scopesAt(tc.at)); diff != "" {
			t.Errorf("policies at %d (-want +got):\n%s", tc.at, diff)
		}
	}
	hist, err := s.PolicyHistory(ctx, "agent/payables", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		got = append(got, h.Author+": "+h.Reason)
	}
	if diff := cmp.Diff([]string{"root: threshold 5000", "root: pay over 1000"}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if all, _ := s.PolicyHistory(ctx, "", 2); len(all) != 2 || all[0].Version != 5 {
		t.Errorf("history of every scope, 2 of them: %+v", all)
	}
	if v, err := s.PolicyVersionByNumber(ctx, 2); err != nil || v.Text != "pay-1" {
		t.Errorf("version 2: %+v, %v", v, err)
	}
	if _, err := s.PolicyVersionByNumber(ctx, 9); !errors.Is(err, ErrNotFound) {
		t.Errorf("version 9: %v; want ErrNotFound", err)
	}
}

// TestPolicyVersionsConcurrent: changes made at once each get a version of
// their own; none is lost.
func TestPolicyVersionsConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for i := range 6 {
			wg.Go(func() {
				if _, err := s.AddPolicyVersion(ctx, "server", string(rune('a'+i)), "root", ""); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if v, err := s.LatestPolicyVersion(ctx); err != nil || v != 6 {
			t.Fatalf("latest after 6 changes: %d, %v", v, err)
		}
	})
}
