package hints

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"
)

// recorder is an Outbox's send function whose sends each report the batch
// they got and wait for their result (allow).
type recorder struct {
	entered chan []string // a send started, with its batch
	results chan error
}

func newRecorder() *recorder {
	return &recorder{entered: make(chan []string, 100), results: make(chan error, 100)}
}

func (r *recorder) send(ctx context.Context, ids []string) error {
	r.entered <- slices.Clone(ids)
	select {
	case err := <-r.results:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next waits for the next send to start and returns its batch.
func (r *recorder) next(t *testing.T) []string {
	t.Helper()
	select {
	case b := <-r.entered:
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("no send within 5s")
		return nil
	}
}

// allow ends the send under way with err.
func (r *recorder) allow(err error) { r.results <- err }

// TestOutboxLostHints: an Outbox's first send is for every task; hints
// queued beyond maxPending while a send is under way become one hint for
// every task; and after a failed send, the next (a second later, with no
// new hint) is for every task too.
func TestOutboxLostHints(t *testing.T) {
	r := newRecorder()
	o := NewOutbox(r.send, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer o.Close()
	if b := r.next(t); !slices.Equal(b, []string{All}) {
		t.Fatalf("first send %v, want [%s]", b, All)
	}
	r.allow(nil)

	o.Notify("task-a", 1)
	o.Notify("task-a", 2) // one per task however many
	if b := r.next(t); !slices.Equal(b, []string{"task-a"}) {
		t.Fatalf("send %v, want [task-a]", b)
	}
	r.allow(nil)

	// A send under way, and meanwhile more hints than the queue holds.
	o.Notify("task-b", 1)
	if b := r.next(t); !slices.Equal(b, []string{"task-b"}) {
		t.Fatalf("send %v, want [task-b]", b)
	}
	for i := range maxPending + 10 {
		o.Notify(fmt.Sprintf("task-%d", i), 1)
	}
	r.allow(nil)
	if b := r.next(t); !slices.Equal(b, []string{All}) {
		t.Fatalf("send after 10 dropped hints: %d IDs, want [%s]", len(b), All)
	}
	r.allow(nil)

	// A failed send: the next one, a second later without a new hint,
	// is for every task.
	o.Notify("task-c", 1)
	if b := r.next(t); !slices.Equal(b, []string{"task-c"}) {
		t.Fatalf("send %v, want [task-c]", b)
	}
	start := time.Now()
	r.allow(errors.New("refused"))
	if b := r.next(t); !slices.Equal(b, []string{All}) {
		t.Fatalf("send after a failed one %v, want [%s]", b, All)
	}
	if waited := time.Since(start); waited < retryAfter/2 {
		t.Errorf("resent after %s, want about %s", waited, retryAfter)
	}
	r.allow(nil)
}
