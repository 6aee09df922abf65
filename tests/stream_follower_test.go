package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// rawSubscription is a JSON-RPC SubscribeToTask stream on a connection of
// its own that the test reads only when it wants: a client that stops
// reading for a while.
type rawSubscription struct {
	resp *http.Response
	r    *bufio.Reader
}

func rawSubscribe(t testing.TB, ctx context.Context, apiURL string, taskID a2a.TaskID) *rawSubscription {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":%q}}`, taskID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("SubscribeToTask: %d %s", resp.StatusCode, b)
	}
	return &rawSubscription{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads the stream's next event as a harness.DetailedLabel.
func (s *rawSubscription) next(t testing.TB) string {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("raw subscription: %v", err)
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok {
			continue
		}
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &env); err != nil || env.Error != nil {
			t.Fatalf("raw subscription event %s: %v", data, err)
		}
		var resp a2a.StreamResponse
		if err := json.Unmarshal(env.Result, &resp); err != nil {
			t.Fatalf("raw subscription event %s: %v", env.Result, err)
		}
		return harness.DetailedLabel(resp.Event)
	}
}

// checkFollowed checks that a subscriber's events are the task it started
// with followed by every later event of all (the events of a subscriber
// from before the first answer), in order, none missing nor twice.
func checkFollowed(t *testing.T, name string, all, got []string) {
	t.Helper()
	if len(got) == 0 || !strings.HasPrefix(got[0], "task:") {
		t.Errorf("%s: got %v, want the task first", name, got)
		return
	}
	if len(got) > len(all) {
		t.Errorf("%s: %d events, more than the %d there are: %v", name, len(got), len(all), got)
		return
	}
	tail := all[len(all)-len(got)+1:]
	at := all[len(all)-len(got)]
	if want := "task:" + strings.TrimPrefix(strings.TrimPrefix(at, "task:"), "status:"); got[0] != want {
		t.Errorf("%s started from %q, but the events it got follow %q", name, got[0], at)
	}
	for i := range tail {
		if got[1+i] != tail[i] {
			t.Errorf("%s: event %d is %q, want %q (got %v)", name, i+1, got[1+i], tail[i], got)
			return
		}
	}
}

// TestStreamFollowerFanout: many subscribers of one task on one API
// process share one follower: each gets every event in order, none missed
// nor twice, also those that join while the task works, and one that stops
// reading for a while delays no one and then reads every event; the
// followers' queries are about one per event however many subscribers
// (the per-subscriber cost is the one query of its start).
func TestStreamFollowerFanout(t *testing.T) {
	const subscribers, joiners, answers = 40, 20, 8
	srv := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	driver := harness.StreamClient(t, ctx, srv.APIURL, 1)
	watcher := harness.StreamClient(t, ctx, srv.APIURL, subscribers+joiners)
	task := harness.WaitingTravelTask(t, ctx, driver)

	before := harness.StreamQueryCounts(t, srv.APIURL)
	subs := make([]*harness.Subscription, 0, subscribers+joiners)
	for i := range subscribers {
		subs = append(subs, harness.Subscribe(ctx, fmt.Sprintf("subscriber %d", i), watcher, task.ID))
	}
	for _, s := range subs {
		s.WaitLive(t)
	}
	slow := rawSubscribe(t, ctx, srv.APIURL, task.ID)
	slowFirst := slow.next(t)
	if c := harness.StreamQueryCounts(t, srv.APIURL); c["followers"] != 1 {
		t.Errorf("%v followers for %d streams of one task, want 1", c["followers"], subscribers+1)
	}

	// The answers run while joiners subscribe, one every few milliseconds.
	start := time.Now()
	answered := make(chan error, 1)
	go func() {
		for i := range answers {
			if _, err := harness.TrySend(ctx, driver, task.ID, fmt.Sprintf("not a date %d", i)); err != nil {
				answered <- err
				return
			}
		}
		answered <- nil
	}()
	for i := range joiners {
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		subs = append(subs, harness.Subscribe(ctx, fmt.Sprintf("joiner %d", i), watcher, task.ID))
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	events := 2 * answers // each answer: working, then input-required again
	// Every subscriber that read along has every event, while the slow one
	// has read nothing yet.
	for _, s := range subs[:subscribers] {
		s.WaitEvents(t, 1+events)
	}
	elapsed := time.Since(start)
	full, _, _ := subs[0].EventsSoFar()
	if len(full) != 1+events {
		t.Fatalf("subscriber 0 has %d events, want %d: %v", len(full), 1+events, full)
	}
	for _, s := range subs {
		// A joiner is done when it has the task's last event.
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, grew, _ := s.EventsSoFar()
			if len(got) > 0 && (got[len(got)-1] == full[len(full)-1] || strings.TrimPrefix(got[len(got)-1], "task:") == strings.TrimPrefix(full[len(full)-1], "status:")) {
				checkFollowed(t, s.Name, full, got)
				break
			}
			select {
			case <-grew:
			case <-s.Done:
				t.Fatalf("%s ended (%v) with %v", s.Name, s.Err, got)
			case <-time.After(time.Until(deadline)):
				t.Fatalf("%s has %v after 30 s, want up to %q", s.Name, got, full[len(full)-1])
			}
		}
	}
	slowGot := []string{slowFirst}
	for range events {
		slowGot = append(slowGot, slow.next(t))
	}
	checkFollowed(t, "the slow subscriber", full, slowGot)

	after := harness.StreamQueryCounts(t, srv.APIURL)
	follow := harness.FollowQueries(before, after)
	// One query per event at most (often one for both events of an
	// answer), the polls of the follower (every 5 minutes in serve), and a few
	// for joiners whose first query saw more than the follower had yet.
	polls := elapsed.Seconds()/2 + 1
	t.Logf("%d subscribers (%d joined while the task worked), %d events in %s: %.0f follower queries (%v), %.0f first queries",
		len(subs)+1, joiners, events, elapsed.Round(time.Millisecond), follow, after, after["start"]-before["start"])
	if max := float64(events) + polls + joiners; follow > max {
		t.Errorf("the followers made %.0f queries for %d events and %d subscribers, want at most %.0f", follow, events, len(subs)+1, max)
	}
	if got, want := after["start"]-before["start"], float64(len(subs)+1); got != want {
		t.Errorf("%.0f first queries of streams, want one per subscriber (%.0f)", got, want)
	}
	for _, s := range subs {
		s.Cancel()
		<-s.Done
	}
	slow.resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for harness.StreamQueryCounts(t, srv.APIURL)["followers"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the follower still runs 10 s after its last subscriber left")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
