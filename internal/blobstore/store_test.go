package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// badKeys are keys outside the Store contract, each refused by every store.
var badKeys = []string{
	"",
	"/a",
	"a/",
	"a//b",
	"..",
	"../etc/passwd",
	"a/../../b",
	"a/./b",
	".hidden",
	"a/.b.tmp-1",
	"a b",
	`a\b`,
	"a\x00b",
	"ü",
	"a?b",
	strings.Repeat("k", maxKeyLen+1),
}

// testStore checks the Store contract on s, which must be empty.
func testStore(t *testing.T, s Store) {
	ctx := context.Background()
	t.Run("round trip", func(t *testing.T) {
		cases := []struct {
			key  string
			data []byte
		}{
			{"default/payloads/wf-1/abc", []byte("hello")},
			{"default/tasks/0f0e/history/00000001.json", []byte(`{"n":1}`)},
			{"flat", bytes.Repeat([]byte{0, 1, 2, 255}, 300_000)},
			{"a/b/c/d/e/f/g", nil},
			{"A-Z_a-z.0-9/x", []byte("mixed")},
		}
		for _, tc := range cases {
			t.Run(tc.key, func(t *testing.T) {
				if err := s.Put(ctx, tc.key, tc.data); err != nil {
					t.Fatalf("Put: %v", err)
				}
				got, err := s.Get(ctx, tc.key)
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if !bytes.Equal(got, tc.data) {
					t.Errorf("Get returned %d bytes, want the %d put", len(got), len(tc.data))
				}
				// Put is idempotent.
				if err := s.Put(ctx, tc.key, tc.data); err != nil {
					t.Errorf("second Put of the same bytes: %v", err)
				}
			})
		}
	})
	t.Run("conflict", func(t *testing.T) {
		if err := s.Put(ctx, "conflict/k", []byte("one")); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "conflict/k", []byte("three")); !errors.Is(err, ErrConflict) {
			t.Errorf("Put of other bytes under a used key: %v, want ErrConflict", err)
		}
		got, err := s.Get(ctx, "conflict/k")
		if err != nil || string(got) != "one" {
			t.Errorf("Get after refused Put = %q, %v; want the first bytes", got, err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		for _, key := range []string{"missing/key", "flat/below-a-blob"} {
			if _, err := s.Get(ctx, key); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(%q) error %v, want ErrNotFound", key, err)
			}
		}
	})
	t.Run("bad keys", func(t *testing.T) {
		for _, key := range badKeys {
			if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, ErrBadKey) {
				t.Errorf("Put(%q) error %v, want ErrBadKey", key, err)
			}
			if _, err := s.Get(ctx, key); !errors.Is(err, ErrBadKey) {
				t.Errorf("Get(%q) error %v, want ErrBadKey", key, err)
			}
		}
	})
	t.Run("concurrent puts", func(t *testing.T) {
		const writers = 16
		same := bytes.Repeat([]byte("same bytes "), 10_000)
		var wg sync.WaitGroup
		errs := make([]error, 2*writers)
		for i := range writers {
			wg.Go(func() { errs[i] = s.Put(ctx, "concurrent/same", same) })
			wg.Go(func() { errs[writers+i] = s.Put(ctx, fmt.Sprintf("concurrent/own-%02d", i), []byte{byte(i)}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Put %d: %v", i, err)
			}
		}
		want := map[string][]byte{"concurrent/same": same}
		got := map[string][]byte{}
		for i := range writers {
			want[fmt.Sprintf("concurrent/own-%02d", i)] = []byte{byte(i)}
		}
		for key := range want {
			data, err := s.Get(ctx, key)
			if err != nil {
				t.Errorf("Get(%q): %v", key, err)
			}
			got[key] = data
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("blobs after concurrent puts (-want +got):\n%s", diff)
		}
	})
	t.Run("canceled context", func(t *testing.T) {
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Put(canceled, "canceled/k", []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a canceled context: %v, want context.Canceled", err)
		}
	})
}

func TestValidateKey(t *testing.T) {
	good := []string{"a", "default/payloads/wf/0123", "a.b/c-d/e_f", "x/y.json", strings.Repeat("k", maxKeyLen)}
	for _, key := range good {
		if err := ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range badKeys {
		if err := ValidateKey(key); !errors.Is(err, ErrBadKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrBadKey", key, err)
		}
	}
}
