package taskservice

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/hints"
)

// watchedTemporal answers the closed-task watch: its list and health check
// fail while listDown and healthDown are set. It notes when it last
// answered a list and when it first refused one.
type watchedTemporal struct {
	client.Client
	mu                   sync.Mutex
	listDown, healthDown bool
	answered, refused    time.Time
}

func (f *watchedTemporal) set(list, health bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listDown, f.healthDown = list, health
}

func (f *watchedTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listDown {
		if f.refused.IsZero() {
			f.refused = time.Now()
		}
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	f.answered = time.Now()
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

func (f *watchedTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.healthDown {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	return &client.CheckHealthResponse{}, nil
}

// TestClosedWatchUnreachableSince: the watch says since when the process
// lost Temporal (its list failed and the health check too), keeps that
// time while it stays lost, and forgets it once Temporal answers, or when
// only the visibility list fails.
func TestClosedWatchUnreachableSince(t *testing.T) {
	fake := &watchedTemporal{}
	w := newClosedWatch(fake, "default", hints.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.every = 10 * time.Millisecond
	w.acquire()
	defer w.release()
	wait := func(what string, ok func(time.Time) bool) time.Time {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			if s := w.unreachableSince(); ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: unreachableSince %v", what, w.unreachableSince())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	isZero := func(s time.Time) bool { return s.IsZero() }
	time.Sleep(50 * time.Millisecond)
	wait("Temporal answers", isZero)

	fake.set(true, true)
	since := wait("Temporal lost", func(s time.Time) bool { return !s.IsZero() })
	// Since the first failed list was sent: after the last answered one,
	// not after the refusal (the list may have been sent just before
	// Temporal went, so no bound taken around fake.set holds).
	fake.mu.Lock()
	answered, refused := fake.answered, fake.refused
	fake.mu.Unlock()
	if since.Before(answered) || since.After(refused) {
		t.Errorf("unreachable since %v, want between the last answered list (%v) and the first refused one (%v)", since, answered, refused)
	}
	time.Sleep(50 * time.Millisecond) // more failed lists
	if again := w.unreachableSince(); !again.Equal(since) {
		t.Errorf("unreachable since %v after more failed lists, want the first %v", again, since)
	}

	fake.set(true, false) // the visibility store alone
	wait("only visibility failing", isZero)
	fake.set(true, true)
	wait("lost again", func(s time.Time) bool { return !s.IsZero() })
	fake.set(false, false)
	wait("Temporal back", isZero)
}

// TestUnreachableSinceNil: without a notifier there is no watch, and no
// process-wide time.
func TestUnreachableSinceNil(t *testing.T) {
	var w *closedWatch
	if s := w.unreachableSince(); !s.IsZero() {
		t.Errorf("nil watch: unreachableSince %v, want zero", s)
	}
}
