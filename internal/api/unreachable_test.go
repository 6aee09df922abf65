package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// hangingTemporal is streamTemporal whose follow-up queries (those without
// the task) hang, while hang is set, until their context ends, as a query
// sent to a Temporal node that went away does.
type hangingTemporal struct {
	*streamTemporal
	mu        sync.Mutex
	hang      bool
	hangAll   bool // the first queries of a stream too
	hung      int
	deadlines []time.Duration // how long each hung query was given
}

func (f *hangingTemporal) setHang(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hang = on
}

func (f *hangingTemporal) QueryWorkflowWithOptions(ctx context.Context, req *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	f.mu.Lock()
	hang := f.hangAll || (f.hang && !req.Args[0].(wire.EventsInput).WithTask)
	if hang {
		f.hung++
		d, ok := ctx.Deadline()
		if !ok {
			d = time.Now().Add(time.Hour)
		}
		f.deadlines = append(f.deadlines, time.Until(d))
	}
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.streamTemporal.QueryWorkflowWithOptions(ctx, req)
}

// ListWorkflow answers the closed-task watch (taskservice/closedwatch.go): nothing
// ended, or, while hang is set, Unavailable at once, as a Temporal node that
// was killed does (the connection is refused).
func (f *hangingTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hang {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

func hangingServer(t *testing.T, cfg api.Config) (*httptest.Server, *hangingTemporal) {
	t.Helper()
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(&workflows.Agent{Name: "echo", Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Notifier == nil {
		cfg.PollInterval = 20 * time.Millisecond
	}
	fake := &hangingTemporal{streamTemporal: &streamTemporal{}}
	srv := httptest.NewServer(api.New(fake, reg, cfg).Handler())
	t.Cleanup(srv.Close)
	return srv, fake
}

// waitStreamEnd fails t unless stream s, whose Temporal became unreachable,
// ends without another event within the given time.
func waitStreamEnd(t *testing.T, s *stream, within time.Duration) {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if ok {
			t.Fatalf("event %s on a stream whose Temporal is unreachable, want its end", e)
		}
	case <-time.After(within):
		t.Fatalf("the stream is still open %s after its Temporal became unreachable", within)
	}
}

// TestStreamEndsWhenTemporalUnreachable: while every query of a stream
// hangs (its Temporal node is down), each is cut at StreamQueryTimeout, and
// after StreamUnreachableAfter the stream ends cleanly (no error event), so
// that the client resubscribes, on both bindings.
func TestStreamEndsWhenTemporalUnreachable(t *testing.T) {
	for _, c := range []call{subscribeRPC, subscribeREST} {
		t.Run(c.method, func(t *testing.T) {
			const queryTimeout, unreachable = 100 * time.Millisecond, 600 * time.Millisecond
			srv, fake := hangingServer(t, api.Config{StreamQueryTimeout: queryTimeout, StreamUnreachableAfter: unreachable})
			s, a := openSSE(t, srv.URL, c)
			if s == nil {
				t.Fatalf("no stream: %+v", a)
			}
			if first := s.next(t, 5*time.Second); !strings.Contains(first, openTask) {
				t.Fatalf("first event %s, want the task", first)
			}
			start := time.Now()
			fake.setHang(true)
			waitStreamEnd(t, s, 10*time.Second)
			took := time.Since(start)
			if took < unreachable {
				t.Errorf("the stream ended after %s, before StreamUnreachableAfter (%s)", took, unreachable)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.hung == 0 {
				t.Fatal("no query hung")
			}
			for _, d := range fake.deadlines {
				if d > queryTimeout {
					t.Errorf("a query was given %s, want at most StreamQueryTimeout (%s)", d, queryTimeout)
				}
			}
		})
	}
}

// TestIdleStreamEndsWhenTemporalUnreachable: with hints (a Notifier), a
// stream whose task has nothing new sends no query, so nothing in it sees
// its Temporal go away; the closed-task watch's failing list wakes it, and
// it ends StreamUnreachableAfter later instead of waiting for the task's
// next event (or the poll minutes away) to notice.
func TestIdleStreamEndsWhenTemporalUnreachable(t *testing.T) {
	const queryTimeout, unreachable = 100 * time.Millisecond, 600 * time.Millisecond
	srv, fake := hangingServer(t, api.Config{StreamQueryTimeout: queryTimeout, StreamUnreachableAfter: unreachable,
		Notifier: hints.New()})
	s, a := openSSE(t, srv.URL, subscribeREST)
	if s == nil {
		t.Fatalf("no stream: %+v", a)
	}
	if first := s.next(t, 5*time.Second); !strings.Contains(first, openTask) {
		t.Fatalf("first event %s, want the task", first)
	}
	fake.setHang(true)
	waitStreamEnd(t, s, 15*time.Second)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.hung == 0 {
		t.Fatal("no query hung: the stream ended without asking Temporal")
	}
}

// TestStreamSurvivesBriefOutage: a stream whose queries hang for less than
// StreamUnreachableAfter stays open and carries the events that came
// meanwhile once Temporal answers again.
func TestStreamSurvivesBriefOutage(t *testing.T) {
	srv, fake := hangingServer(t, api.Config{StreamQueryTimeout: 100 * time.Millisecond, StreamUnreachableAfter: 20 * time.Second})
	s, a := openSSE(t, srv.URL, subscribeREST)
	if s == nil {
		t.Fatalf("no stream: %+v", a)
	}
	s.next(t, 5*time.Second)
	fake.setHang(true)
	time.Sleep(500 * time.Millisecond)
	fake.finish()
	fake.setHang(false)
	if e := s.next(t, 10*time.Second); !strings.Contains(e, "TASK_STATE_COMPLETED") {
		t.Fatalf("event %s, want the completed status", e)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.hung == 0 {
		t.Fatal("no query hung")
	}
}

// TestSubscribeWhileTemporalUnreachable: a subscription whose first query
// hangs is answered with a retryable error after StreamQueryTimeout instead
// of waiting: an HTTP+JSON error answer, or a JSON-RPC stream whose one
// event is the error.
func TestSubscribeWhileTemporalUnreachable(t *testing.T) {
	for _, c := range []call{subscribeRPC, subscribeREST} {
		t.Run(c.method, func(t *testing.T) {
			srv, fake := hangingServer(t, api.Config{StreamQueryTimeout: 200 * time.Millisecond})
			fake.hangAll = true
			answered := make(chan answer, 1)
			go func() {
				s, a := openSSE(t, srv.URL, c)
				if s != nil { // JSON-RPC: the error is the stream's one event
					a.Error = "no event"
					if e, ok := <-s.events; ok && strings.Contains(e, `"error"`) {
						a.Error = e
					}
				}
				answered <- a
			}()
			select {
			case a := <-answered:
				if a.Error == "" || a.Error == "no event" {
					t.Errorf("answer %+v, want an error", a)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer 10s after subscribing to an unreachable Temporal")
			}
		})
	}
}
