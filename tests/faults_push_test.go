package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// pushArrival is one request the push receiver got: the event's
// Idempotency-Key, number and kind, and when.
type pushArrival struct {
	key string
	p   pushed
	at  time.Time
}

// faultReceiver is a webhook behind a fault proxy. It accepts every
// request (200) and records it; before answering the first request of an
// event whose number has a hook, it runs the hook: the test breaks the
// link there, after the receiver took the event and before a2aflow hears
// so, which is the case a duplicate comes from.
type faultReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []pushArrival
	hooks    map[int64]func()
	bad      []string
}

func newFaultReceiver(t *testing.T) *faultReceiver {
	r := &faultReceiver{hooks: map[int64]func(){}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var sr a2a.StreamResponse
		if err := json.Unmarshal(body, &sr); err != nil {
			r.mu.Lock()
			r.bad = append(r.bad, fmt.Sprintf("%s: %v", body, err))
			r.mu.Unlock()
			http.Error(w, "not a StreamResponse", http.StatusBadRequest)
			return
		}
		var p pushed
		var meta map[string]any
		switch e := sr.Event.(type) {
		case *a2a.TaskStatusUpdateEvent:
			p.Kind, meta = string(e.Status.State), e.Metadata
		case *a2a.TaskArtifactUpdateEvent:
			p.Kind, meta = "artifact:"+e.Artifact.Name, e.Metadata
		}
		seq, _ := meta["a2aflowEventSeq"].(float64)
		p.Seq = int64(seq)
		r.mu.Lock()
		r.arrivals = append(r.arrivals, pushArrival{key: req.Header.Get("Idempotency-Key"), p: p, at: time.Now()})
		hook := r.hooks[p.Seq]
		delete(r.hooks, p.Seq)
		r.mu.Unlock()
		if hook != nil {
			hook()
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// on runs f before answering the first delivery of event seq.
func (r *faultReceiver) on(seq int64, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks[seq] = f
}

// distinct returns the events received, each once, in the order of their
// first arrival.
func (r *faultReceiver) distinct() []pushed {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []pushed
	seen := map[string]bool{}
	for _, a := range r.arrivals {
		if !seen[a.key] {
			seen[a.key] = true
			out = append(out, a.p)
		}
	}
	return out
}

// waitDistinct waits until n distinct events arrived.
func (r *faultReceiver) waitDistinct(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(r.distinct()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d distinct events within %v, want %d: %v", len(r.distinct()), timeout, n, r.distinct())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// firstAfter is the first arrival at or after when.
func (r *faultReceiver) firstAfter(when time.Time) (pushArrival, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.arrivals {
		if !a.at.Before(when) {
			return a, true
		}
	}
	return pushArrival{}, false
}

// faultsPush delivers a travel task's ten push notifications to a webhook
// through a fault proxy that breaks the link at three events, each after
// the receiver took the event and before a2aflow heard its answer:
//
//   - event 1: latency of 11 s on the answers, beyond the 10 s a delivery
//     attempt waits (outbound.Webhook), removed once the attempt gave up;
//   - event 3: the connection reset;
//   - event 5: a 5 s partition (data stops both ways; the connection
//     closes at its end), event 6 queued behind it.
//
// Push delivery is at least once, in order: each of the three events
// arrives again (twice or three times), with the same Idempotency-Key
// ({taskId}:{seq}), each repeat right after the first try, and no event
// overtakes another: a receiver that drops a key it has seen gets every
// event once, in order. Every other event arrives once.
func faultsPush(t *testing.T, ctx context.Context, apiURL string) {
	recv := newFaultReceiver(t)
	proxy := newFaultProxy(t, "push", strings.TrimPrefix(recv.URL, "http://"))
	var mu sync.Mutex
	healed := map[int64]time.Time{} // when each fault ended
	heal := func(seq int64, after time.Duration, names ...string) {
		time.AfterFunc(after, func() {
			for _, n := range names {
				proxy.remove(n)
			}
			mu.Lock()
			healed[seq] = time.Now()
			mu.Unlock()
		})
	}
	recv.on(1, func() {
		proxy.add("slow", "latency", "downstream", `{"latency":11000}`)
		heal(1, 10300*time.Millisecond, "slow")
	})
	recv.on(3, func() {
		proxy.add("reset", "reset_peer", "downstream", `{"timeout":0}`)
		heal(3, 300*time.Millisecond, "reset")
	})
	recv.on(5, func() {
		proxy.add("partition-up", "timeout", "upstream", `{"timeout":5000}`)
		proxy.add("partition-down", "timeout", "downstream", `{"timeout":5000}`)
		heal(5, 5*time.Second, "partition-up", "partition-down")
	})
	c, _ := harness.NewClient(t, ctx, apiURL)
	began := time.Now()
	task := sendWithPush(t, ctx, c, &a2a.PushConfig{URL: proxy.URL() + "/hook", Token: "faults"})
	answerTravel(t, ctx, c, task.ID)
	t.Logf("the client's four requests were answered in %v (push faults do not hold them)", time.Since(began).Round(time.Millisecond))

	want := travelPushes()
	recv.waitDistinct(t, len(want), 90*time.Second)
	time.Sleep(1500 * time.Millisecond) // a late duplicate would come now
	if diff := cmp.Diff(want, recv.distinct()); diff != "" {
		t.Errorf("events received, each once, in order of arrival (-want +got):\n%s", diff)
	}
	recv.mu.Lock()
	arrivals := append([]pushArrival(nil), recv.arrivals...)
	recv.mu.Unlock()
	count := map[int64]int{}
	for i, a := range arrivals {
		count[a.p.Seq]++
		if a.key != fmt.Sprintf("%s:%d", task.ID, a.p.Seq) {
			t.Errorf("delivery %d: Idempotency-Key %q, want %s:%d", i, a.key, task.ID, a.p.Seq)
		}
		if i > 0 && a.p.Seq < arrivals[i-1].p.Seq {
			t.Errorf("delivery %d: event %d after event %d: out of order", i, a.p.Seq, arrivals[i-1].p.Seq)
		}
	}
	for _, p := range want {
		lo, hi := 1, 1
		if p.Seq == 1 || p.Seq == 3 || p.Seq == 5 {
			// Taken, its answer lost, delivered again: by Temporal's retry
			// of the activity, and maybe before it by Go's HTTP client, which
			// replays a POST that carries an Idempotency-Key on a new
			// connection when a reused one breaks before the answer.
			lo, hi = 2, 3
		}
		if n := count[p.Seq]; n < lo || n > hi {
			t.Errorf("event %d arrived %d times, want %d to %d", p.Seq, n, lo, hi)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, seq := range []int64{1, 3, 5} {
		if a, ok := recv.firstAfter(healed[seq]); ok {
			t.Logf("event %d: delivered again %v after its fault ended", seq, a.at.Sub(healed[seq]).Round(time.Millisecond))
		}
	}
	t.Logf("all %d events delivered %v after the task started", len(want), arrivals[len(arrivals)-1].at.Sub(began).Round(time.Millisecond))
}

// faultsPushSlowClose delivers a travel task's push notifications through
// a link whose closes are delayed 3 s (Toxiproxy's slow_close), to a
// receiver that closes each connection after its answer (Connection:
// close): every delivery opens a connection while the last one is still
// closing. Every event arrives once, in order, and a late close holds no
// delivery: the ten take well under the 3 s of one close each.
func faultsPushSlowClose(t *testing.T, ctx context.Context, apiURL string) {
	recv := newFaultReceiver(t)
	inner := recv.Config.Handler
	recv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		inner.ServeHTTP(w, r)
	})
	proxy := newFaultProxy(t, "push-slow-close", strings.TrimPrefix(recv.URL, "http://"))
	proxy.add("slow-close", "slow_close", "downstream", `{"delay":3000}`)
	proxy.add("slow-close-up", "slow_close", "upstream", `{"delay":3000}`)
	c, _ := harness.NewClient(t, ctx, apiURL)
	task := sendWithPush(t, ctx, c, &a2a.PushConfig{URL: proxy.URL() + "/hook"})
	answerTravel(t, ctx, c, task.ID)
	done := time.Now()
	want := travelPushes()
	recv.waitDistinct(t, len(want), 60*time.Second)
	took := time.Since(done)
	time.Sleep(time.Second) // a duplicate would come now
	recv.mu.Lock()
	var got []pushed
	for _, a := range recv.arrivals {
		got = append(got, a.p)
	}
	recv.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events received through slow closes (-want +got):\n%s", diff)
	}
	t.Logf("through 3 s slow closes, the last event arrived %v after the task completed", took.Round(time.Millisecond))
	if took > 6*time.Second {
		t.Errorf("the events took %v after the task completed: slow closes held the deliveries", took)
	}
}
