package taskservice

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// followTemporal answers the Events query from a list of events, as the
// task workflow does (without the retention limit), and counts the
// queries.
type followTemporal struct {
	client.Client
	mu      sync.Mutex
	events  []wire.Event
	queries int
}

type encodedValue struct{ v any }

func (e encodedValue) HasValue() bool { return true }
func (e encodedValue) Get(ptr any) error {
	reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(e.v))
	return nil
}

func (f *followTemporal) QueryWorkflowWithOptions(_ context.Context, req *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	in := req.Args[0].(wire.EventsInput)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	out := wire.EventsOutput{Last: int64(len(f.events))}
	if in.After < out.Last {
		out.Events = append([]wire.Event(nil), f.events[max(in.After, 0):]...)
	}
	return &client.QueryWorkflowWithOptionsResponse{QueryResult: encodedValue{out}}, nil
}

// add appends n working events and returns the last one's number.
func (f *followTemporal) add(n int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.events = append(f.events, wire.Event{Seq: int64(len(f.events) + 1), Status: &a2a.TaskStatusUpdateEvent{
			TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}})
	}
	return int64(len(f.events))
}

// seqOf is the number of an event the fake made.
func (f *followTemporal) seqOf(e a2a.Event) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range f.events {
		if ev.Status == e {
			return ev.Seq
		}
	}
	return -1
}

func (f *followTemporal) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries
}

func followService(t *testing.T) (*TaskService, *followTemporal, *hints.Broker) {
	fake := &followTemporal{}
	hints := hints.New()
	s := &TaskService{temporal: fake, agent: &workflows.Agent{Name: "echo"}, logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		notifier: hints, pollInterval: time.Hour, queryTimeout: time.Second, unreachableAfter: 5 * time.Second}
	return s, fake, hints
}

// stream follows task-1 from seq in the background, recording the numbers
// of its events; block, when set, is read before each event is taken.
type testStream struct {
	mu      sync.Mutex
	seqs    []int64
	done    chan struct{}
	grew    chan struct{}
	blocked chan struct{} // closed when the stream first waits for block
}

func startStream(t *testing.T, ctx context.Context, s *TaskService, fake *followTemporal, seq int64, block <-chan struct{}) *testStream {
	ts := &testStream{done: make(chan struct{}), grew: make(chan struct{}, 1), blocked: make(chan struct{})}
	var once sync.Once
	go func() {
		defer close(ts.done)
		s.Follow(ctx, "task-1", seq, "", func(wire.Event) bool { return false }, func(e a2a.Event, err error) bool {
			if err != nil {
				t.Errorf("stream from %d: %v", seq, err)
				return false
			}
			if block != nil {
				once.Do(func() { close(ts.blocked) })
				<-block
			}
			ts.mu.Lock()
			ts.seqs = append(ts.seqs, fake.seqOf(e))
			ts.mu.Unlock()
			select {
			case ts.grew <- struct{}{}:
			default:
			}
			return true
		})
	}()
	return ts
}

func (ts *testStream) waitFor(t *testing.T, name string, last int64) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ts.mu.Lock()
		n := len(ts.seqs)
		at := int64(-1)
		if n > 0 {
			at = ts.seqs[n-1]
		}
		ts.mu.Unlock()
		if at >= last {
			return
		}
		select {
		case <-ts.grew:
		case <-deadline:
			t.Fatalf("%s is at %d after 10 s, want %d", name, at, last)
		}
	}
}

// check: the stream got every event after from up to last, in order.
func (ts *testStream) check(t *testing.T, name string, from, last int64) {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for i, seq := range ts.seqs {
		if want := from + 1 + int64(i); seq != want {
			t.Fatalf("%s: event %d is %d, want %d (got %v)", name, i, seq, want, ts.seqs)
		}
	}
	if got := from + int64(len(ts.seqs)); got != last {
		t.Fatalf("%s: up to %d, want %d", name, got, last)
	}
}

// TestFollowerPositions: streams of one task joining at, behind and ahead
// of the follower's position each get every event after their own, once,
// in order, from one follower whose queries follow the events, not the
// streams.
func TestFollowerPositions(t *testing.T) {
	s, fake, hints := followService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	a := startStream(t, ctx, s, fake, 0, nil)
	hints.Notify("task-1", fake.add(5))
	a.waitFor(t, "a", 5)
	b := startStream(t, ctx, s, fake, 2, nil) // behind the follower, within its log
	fake.add(2)                               // events the follower has not heard of yet
	c := startStream(t, ctx, s, fake, 7, nil) // ahead of the follower: it queries at once
	a.waitFor(t, "a", 7)                      // without a hint: C's joining had the follower query
	hints.Notify("task-1", fake.add(3))
	for name, st := range map[string]*testStream{"a": a, "b": b, "c": c} {
		st.waitFor(t, name, 10)
	}
	if got := s.followers.count(); got != 1 {
		t.Errorf("%d followers for one task, want 1", got)
	}
	// Far behind: the follower's log no longer holds D's position.
	for range 5 {
		hints.Notify("task-1", fake.add(10))
		a.waitFor(t, "a", fake.add(0))
		b.waitFor(t, "b", fake.add(0))
		c.waitFor(t, "c", fake.add(0))
	}
	d := startStream(t, ctx, s, fake, 1, nil)
	d.waitFor(t, "d", 60)
	hints.Notify("task-1", fake.add(1))
	for name, st := range map[string]*testStream{"a": a, "b": b, "c": c, "d": d} {
		st.waitFor(t, name, 61)
	}
	a.check(t, "a", 0, 61)
	b.check(t, "b", 2, 61)
	c.check(t, "c", 7, 61)
	d.check(t, "d", 1, 61)
	// One query at the start, one for C, one per hint (8), one for D.
	if got := fake.count(); got > 11 {
		t.Errorf("%d queries for 4 streams and 8 hints, want at most 11", got)
	}
	cancel()
	for _, st := range []*testStream{a, b, c, d} {
		<-st.done
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.followers.count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the follower is still registered after its streams left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFollowerSlowStream: a stream whose client stops reading delays no
// other stream of its task; once more than followerMaxBacklog events
// behind, it is ended cleanly after the events it had taken, with no gap.
func TestFollowerSlowStream(t *testing.T) {
	s, fake, hints := followService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := make(chan struct{})
	slow := startStream(t, ctx, s, fake, 0, block)
	fast := startStream(t, ctx, s, fake, 0, nil)
	hints.Notify("task-1", fake.add(1))
	fast.waitFor(t, "fast", 1)
	<-slow.blocked // the slow one is writing event 1
	for range 11 {
		hints.Notify("task-1", fake.add(100))
		fast.waitFor(t, "fast", fake.add(0))
	}
	fast.check(t, "fast", 0, 1101)
	close(block)
	select {
	case <-slow.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow stream still runs 10 s after falling behind by more than the backlog")
	}
	slow.check(t, "slow", 0, 1) // the event it was writing, then the end
	hints.Notify("task-1", fake.add(1))
	fast.waitFor(t, "fast", 1102)
}

// TestFollowerPollInterval: with hints, polls are only a safety net: an
// idle follower queries its task once per poll interval, and a poll finds
// an event whose hint was lost. Without hints, polling is the streams' only
// way to learn of events, at the same interval.
func TestFollowerPollInterval(t *testing.T) {
	for _, hinted := range []bool{true, false} {
		s, fake, _ := followService(t)
		s.pollInterval = 200 * time.Millisecond
		if !hinted {
			s.notifier = nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		st := startStream(t, ctx, s, fake, 0, nil)
		time.Sleep(time.Second)
		n := fake.count()
		fake.add(1) // no hint
		start := time.Now()
		st.waitFor(t, "stream", 1) // found by a poll
		took := time.Since(start)
		cancel()
		<-st.done
		// The first query, then one every 200 ms: 6 in a second.
		if n < 3 || n > 8 {
			t.Errorf("hinted %v: %d queries of an idle task in a second, want about 6 (every 200 ms)", hinted, n)
		}
		if took > time.Second {
			t.Errorf("hinted %v: an event without a hint found after %s, want within the 200 ms poll", hinted, took)
		}
	}
}
