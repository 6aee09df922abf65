package unixhints_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/hints/hintstest"
	"github.com/a2aflow/a2aflow/internal/hints/unixhints"
)

// drain takes a pending hint, if any.
func drain(c <-chan struct{}) {
	select {
	case <-c:
	default:
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// dir is a short socket folder: a Unix socket address holds ~107 bytes,
// and t.TempDir's paths can be long.
func dir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hints")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return filepath.Join(d, "a2aflow.db.hints")
}

// listener starts a listener of its own broker in d and subscribes to
// task-a and task-b there.
func listener(t *testing.T, ctx context.Context, d string) (a, b *hints.Subscription) {
	t.Helper()
	broker := hints.New()
	a, b = broker.Subscribe("task-a"), broker.Subscribe("task-b")
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	if err := unixhints.Listen(ctx, d, broker, quiet); err != nil {
		t.Fatal(err)
	}
	hintstest.Hinted(t, a.C, time.Second) // bound: every subscriber is hinted
	drain(b.C)
	return a, b
}

// TestSenderToListeners: a hint reaches the subscribers of its task in
// every listening process, and only those; a listener that starts after
// the sender is found and first gets a hint for every task.
func TestSenderToListeners(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := dir(t)
	a1, b1 := listener(t, ctx, d)
	s, err := unixhints.NewSender(d, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A sender's first send is for every task (it may replace a worker
	// killed before its hints went out).
	hintstest.Hinted(t, a1.C, 2*time.Second)
	hintstest.Hinted(t, b1.C, time.Second)

	s.Notify("task-a", 1)
	hintstest.Hinted(t, a1.C, 2*time.Second)
	hintstest.NotHinted(t, b1.C, 200*time.Millisecond)

	// A second API process, started after the worker.
	a2, b2 := listener(t, ctx, d)
	s.Notify("task-b", 2)
	hintstest.Hinted(t, b1.C, 2*time.Second)
	hintstest.Hinted(t, b2.C, 2*time.Second)
	hintstest.Hinted(t, a2.C, time.Second) // its first hint from the sender is for every task
	hintstest.NotHinted(t, a1.C, 200*time.Millisecond)

	s.Notify("task-a", 3)
	hintstest.Hinted(t, a2.C, 2*time.Second)
	hintstest.NotHinted(t, b2.C, 200*time.Millisecond)
}

// TestListenerGone: a listener whose context ended removes its socket; a
// socket file left by a killed process (bound by nobody) is deleted by the
// sender, and the others still get their hints.
func TestListenerGone(t *testing.T) {
	d := dir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, _ := listener(t, ctx, d)

	gctx, gcancel := context.WithCancel(ctx)
	listener(t, gctx, d)
	gcancel()
	// A process killed with kill -9 leaves its socket file behind.
	stale := filepath.Join(d, "999999-deadbeef.sock")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: stale, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the stale socket file: %v", err)
	}

	s, err := unixhints.NewSender(d, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hintstest.Hinted(t, a.C, 2*time.Second)
	s.Notify("task-a", 1)
	hintstest.Hinted(t, a.C, 2*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets left in the folder, want the live listener's alone", len(entries))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSenderManyHints: task IDs that do not fit one datagram go in several,
// and each reaches only its task's subscribers. (Hints over the queue:
// notify's TestOutboxLostHints.)
func TestSenderManyHints(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := dir(t)
	a, b := listener(t, ctx, d)
	s, err := unixhints.NewSender(d, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hintstest.Hinted(t, a.C, 2*time.Second)
	drain(b.C)
	// 3,000 IDs of 40 bytes: 120 KB, several datagrams; task-b is last.
	for i := range 3000 {
		s.Notify(fmt.Sprintf("%040d", i), 1)
	}
	s.Notify("task-b", 1)
	hintstest.Hinted(t, b.C, 2*time.Second)
	hintstest.NotHinted(t, a.C, 200*time.Millisecond)
}

// TestListenPathTooLong: a folder whose socket path would not fit a Unix
// socket address is refused with an error saying so.
func TestListenPathTooLong(t *testing.T) {
	long := filepath.Join(t.TempDir(), fmt.Sprintf("%0100d", 0))
	err := unixhints.Listen(context.Background(), long, hints.New(), quiet)
	if err == nil {
		t.Fatal("Listen accepted a socket path longer than a Unix socket address holds")
	}
}

// TestLiveAcrossProcesses: the deltas of a live answer, a long one split
// over several datagrams among them, reach the broker of every listener
// in order, and join into the answer.
func TestLiveAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := dir(t)
	var cursors []*hints.LiveCursor
	for range 2 {
		broker := hints.New()
		if err := unixhints.Listen(ctx, d, broker, quiet); err != nil {
			t.Fatal(err)
		}
		c := broker.LiveCursor("task-a")
		c.Take()
		cursors = append(cursors, c)
	}
	s, err := unixhints.NewSender(d, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := ""
	delta := hints.Delta{Task: "task-a", Call: "run-1", Attempt: 1}
	for i := range 50 {
		piece := fmt.Sprintf("word %d ", i)
		if i == 25 {
			piece = string(make([]byte, 40<<10)) // longer than a datagram
		}
		delta.Text = piece
		s.Live(delta)
		delta.Offset += len(piece)
		want += piece
	}
	delta.Text, delta.Done = "", true
	s.Live(delta)
	for i, c := range cursors {
		got, last := "", false
		deadline := time.Now().Add(5 * time.Second)
		for !last && time.Now().Before(deadline) {
			chunks, changed := c.Take()
			for _, ch := range chunks {
				got += ch.Text
				last = last || ch.Last
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			}
		}
		if !last || got != want {
			t.Errorf("listener %d: last %v, got %d bytes of %d", i, last, len(got), len(want))
		}
	}
}
