package harness

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/prometheus/common/expfmt"

	"github.com/a2aflow/a2aflow/workflows"
)

// EventLabel renders a stream event as "task:STATE", "status:STATE" or
// "artifact:NAME" (tests/js/a2a_client.mjs renders the JS SDK's alike).
func EventLabel(e a2a.Event) string {
	switch v := e.(type) {
	case *a2a.Task:
		return "task:" + string(v.Status.State)
	case *a2a.TaskStatusUpdateEvent:
		return "status:" + string(v.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact:" + v.Artifact.Name
	case *a2a.Message:
		return "message"
	}
	return fmt.Sprintf("unknown:%T", e)
}

// DetailedLabel is EventLabel with the status message: "status:STATE:text"
// (booking references masked), so that equal lists mean the same events.
func DetailedLabel(e a2a.Event) string {
	var status *a2a.TaskStatus
	switch v := e.(type) {
	case *a2a.Task:
		status = &v.Status
	case *a2a.TaskStatusUpdateEvent:
		status = &v.Status
	default:
		return EventLabel(e)
	}
	return EventLabel(e) + ":" + bookingRefPattern.ReplaceAllString(workflows.MessageText(status.Message), "AF-XXXXXX")
}

// bookingRefPattern matches a travel booking's reference.
var bookingRefPattern = regexp.MustCompile(`AF-[A-Z0-9]{6}`)

// Subscription is a SubscribeToTask stream read in the background.
type Subscription struct {
	Name   string             // the subscriber's, in failures
	Cancel context.CancelFunc // ends the stream
	live   chan struct{}      // closed at the first event or the end
	Done   chan struct{}      // closed at the end

	mu     sync.Mutex
	events []string      // DetailedLabel of each event
	First  a2a.Event     // the first event: the task when subscribing
	times  []time.Time   // arrival of each event
	Err    error         // what the stream ended on, if not its end
	grew   chan struct{} // closed and replaced at each event
}

// Subscribe starts reading SubscribeToTask(taskID) from c.
func Subscribe(ctx context.Context, name string, c *a2aclient.Client, taskID a2a.TaskID) *Subscription {
	ctx, cancel := context.WithCancel(ctx)
	s := &Subscription{Name: name, Cancel: cancel, live: make(chan struct{}), Done: make(chan struct{}), grew: make(chan struct{})}
	go func() {
		defer close(s.Done)
		var once sync.Once
		defer once.Do(func() { close(s.live) })
		for e, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
			now := time.Now()
			s.mu.Lock()
			if err != nil {
				s.Err = err
				s.mu.Unlock()
				return
			}
			if len(s.events) == 0 {
				s.First = e
			}
			s.events = append(s.events, DetailedLabel(e))
			s.times = append(s.times, now)
			close(s.grew)
			s.grew = make(chan struct{})
			s.mu.Unlock()
			once.Do(func() { close(s.live) })
		}
	}()
	return s
}

// WaitLive waits for the first event: from then on the subscription sees
// every later event.
func (s *Subscription) WaitLive(t testing.TB) {
	t.Helper()
	select {
	case <-s.live:
	case <-time.After(30 * time.Second):
		t.Fatalf("subscriber %s got no event within 30s", s.Name)
	}
}

// WaitEvents waits until the subscription has n events.
func (s *Subscription) WaitEvents(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		got, grew := len(s.events), s.grew
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-grew:
		case <-s.Done:
			t.Fatalf("subscriber %s ended with %d events (%v), want %d", s.Name, got, s.Err, n)
		case <-deadline:
			t.Fatalf("subscriber %s has %d events after 30s, want %d", s.Name, got, n)
		}
	}
}

// AwaitEvents waits until the subscription has n events; it fails when the
// stream ends first or timeout passes.
func (s *Subscription) AwaitEvents(n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, grew, err := len(s.events), s.grew, s.Err
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-grew:
		case <-s.Done:
			s.mu.Lock()
			got, err = len(s.events), s.Err
			s.mu.Unlock()
			if got >= n {
				return nil
			}
			return fmt.Errorf("%s ended after %d of %d events: %v", s.Name, got, n, err)
		case <-deadline:
			return fmt.Errorf("%s has %d of %d events after %s (%v)", s.Name, got, n, timeout, err)
		}
	}
}

// EventsSoFar returns the events so far, a channel closed at the next one and
// the stream's error, if it ended on one.
func (s *Subscription) EventsSoFar() (events []string, grew <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...), s.grew, s.Err
}

// Arrivals returns when each event so far arrived.
func (s *Subscription) Arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.times)
}

// Wait waits for the stream to end and returns its events and error.
func (s *Subscription) Wait(t testing.TB) ([]string, error) {
	t.Helper()
	select {
	case <-s.Done:
	case <-time.After(30 * time.Second):
		s.Cancel()
		<-s.Done
		t.Errorf("subscriber %s did not end within 30s", s.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...), s.Err
}

// askDate is the status message of a travel task waiting for the date.
const askDate = "On which date? (YYYY-MM-DD)"

// APIPoll is the poll interval of `a2aflow api` (api.Config's default
// without a notifier).
const APIPoll = 250 * time.Millisecond

// StreamClient returns an a2a-go client (JSON-RPC) of the agent at
// baseURL whose HTTP transport keeps a connection for each of conns
// concurrent streams.
func StreamClient(b testing.TB, ctx context.Context, baseURL string, conns int) *a2aclient.Client {
	b.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		b.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = 2 * conns
	transport.MaxIdleConnsPerHost = 2 * conns
	b.Cleanup(transport.CloseIdleConnections)
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: transport}))
	if err != nil {
		b.Fatalf("client for %s: %v", baseURL, err)
	}
	b.Cleanup(func() { _ = c.Destroy() })
	return c
}

// WaitingTravelTask starts a travel task and answers its first
// question, so that it waits for a date.
func WaitingTravelTask(b testing.TB, ctx context.Context, c *a2aclient.Client) *a2a.Task {
	b.Helper()
	task, err := TrySend(ctx, c, "", "Book a flight")
	if err != nil {
		b.Fatal(err)
	}
	if task, err = TrySend(ctx, c, task.ID, "Lisbon"); err != nil {
		b.Fatal(err)
	}
	if asked := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateInputRequired || asked != askDate {
		b.Fatalf("task %s is %s asking %q, want it to ask %q", task.ID, task.Status.State, asked, askDate)
	}
	return task
}

// AnswerNotADate answers the waiting task with something that is not a
// date: it works, then asks again.
func AnswerNotADate(b testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, i int) {
	b.Helper()
	task, err := TrySend(ctx, c, taskID, fmt.Sprintf("not a date %d", i))
	if err != nil {
		b.Fatal(err)
	}
	if asked := workflows.MessageText(task.Status.Message); task.Status.State != a2a.TaskStateInputRequired || !strings.HasSuffix(asked, askDate) {
		b.Fatalf("task %s is %s asking %q, want it to ask again for the date", task.ID, task.Status.State, asked)
	}
}

// LongContext is a context for a benchmark's calls: canceled after 30
// minutes, or when it ends.
func LongContext(b testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// Percentile is the p-th percentile (nearest rank) of lat in milliseconds.
func Percentile(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// StreamQueryCounts scrapes the API's a2aflow_stream_queries_total by
// reason (start, hint, poll, join, retry) and a2aflow_stream_followers (as
// "followers").
func StreamQueryCounts(t testing.TB, apiURL string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(apiURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	families, err := new(expfmt.TextParser).TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s/metrics: %v", apiURL, err)
	}
	out := map[string]float64{}
	for _, m := range families["a2aflow_stream_queries_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" {
				out[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	for _, m := range families["a2aflow_stream_followers"].GetMetric() {
		out["followers"] = m.GetGauge().GetValue()
	}
	return out
}

// FollowQueries is how many queries the followers made between two
// counts (every reason but a stream's first query).
func FollowQueries(before, after map[string]float64) float64 {
	n := 0.0
	for _, r := range []string{"hint", "poll", "join", "retry"} {
		n += after[r] - before[r]
	}
	return n
}
