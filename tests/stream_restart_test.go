package tests

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2aflow/a2aflow/workflows"
)

// splitDeployment is a2aflow as separate processes: `a2aflow temporal`,
// `a2aflow worker` and API replicas, which share nothing but Temporal.
type splitDeployment struct {
	t       testing.TB
	env     []string
	APIURLs []string
	apis    []*proc
	// grpcAddrs are the replicas' gRPC binding addresses, when on.
	grpcAddrs []string
	// database is the worker's and the replicas' --database, when set.
	database string
	// worker is the worker process, started with workerArgs.
	worker     *proc
	workerArgs []string
}

// startSplit starts Temporal, a worker and n API replicas on fresh ports.
func startSplit(t testing.TB, n int) *splitDeployment {
	t.Helper()
	return startSplitWith(t, n, false)
}

// startSplitWith is startSplit, the replicas serving the gRPC binding too
// (--grpc-addr) when withGRPC.
func startSplitWith(t testing.TB, n int, withGRPC bool) *splitDeployment {
	t.Helper()
	return startSplitDB(t, n, withGRPC, "")
}

// startSplitDB is startSplitWith, the worker and the replicas given
// --database database when it is set.
func startSplitDB(t testing.TB, n int, withGRPC bool, database string) *splitDeployment {
	t.Helper()
	dataDir := t.TempDir()
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// Every process shares the data dir's payload store (as they would share
	// a folder or S3 in production).
	d := &splitDeployment{t: t, env: []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + testSecretsKey}}
	tp := start(t, "a2aflow temporal", d.env, "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.waitOutput("Temporal is serving", 2*time.Minute)
	d.database = database
	workerArgs := []string{"worker", "--data-dir", dataDir}
	if database != "" {
		workerArgs = append(workerArgs, "--database", database)
	}
	d.workerArgs = workerArgs
	d.startWorker()
	for i := range n {
		d.APIURLs = append(d.APIURLs, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
		if withGRPC {
			d.grpcAddrs = append(d.grpcAddrs, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		}
		d.apis = append(d.apis, nil)
		d.startAPI(i)
	}
	return d
}

// startWorker starts the worker (again, after a kill).
func (d *splitDeployment) startWorker() {
	d.t.Helper()
	d.worker = start(d.t, "a2aflow worker", d.env, d.workerArgs...)
	d.worker.waitOutput("a2aflow worker is running", time.Minute)
}

// startAPI starts API replica i (again, after a kill) on its port.
func (d *splitDeployment) startAPI(i int) {
	d.t.Helper()
	args := []string{"api", "--http-addr", strings.TrimPrefix(d.APIURLs[i], "http://")}
	if len(d.grpcAddrs) > i {
		args = append(args, "--grpc-addr", d.grpcAddrs[i])
	}
	if d.database != "" {
		args = append(args, "--database", d.database)
	}
	p := start(d.t, fmt.Sprintf("a2aflow api %d", i+1), d.env, args...)
	p.waitOutput("a2aflow API is serving", time.Minute)
	waitHealthy(d.t, d.APIURLs[i])
	d.apis[i] = p
}

// streamClient returns an a2a-go client (JSON-RPC, A2A 1.0) of the agent at
// baseURL with HTTP connections of its own, so that no connection to a killed
// process is reused by another client.
func streamClient(t testing.TB, ctx context.Context, baseURL string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: transport}))
	if err != nil {
		t.Fatalf("client for %s: %v", baseURL, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// grpcStreamClient is streamClient over the gRPC binding (A2A 1.0,
// a2a-go's a2agrpc/v1 transport), which the agent's card lists; each
// client dials a connection of its own.
func grpcStreamClient(t testing.TB, ctx context.Context, baseURL string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		grpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatalf("gRPC client for %s: %v", baseURL, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

var bookingRefPattern = regexp.MustCompile(`AF-[A-Z0-9]{6}`)

// detailedLabel is eventLabel with the status message: "status:STATE:text"
// (booking references masked), so that equal lists mean the same events.
func detailedLabel(e a2a.Event) string {
	var status *a2a.TaskStatus
	switch v := e.(type) {
	case *a2a.Task:
		status = &v.Status
	case *a2a.TaskStatusUpdateEvent:
		status = &v.Status
	default:
		return eventLabel(e)
	}
	return eventLabel(e) + ":" + bookingRefPattern.ReplaceAllString(workflows.MessageText(status.Message), "AF-XXXXXX")
}

// subscription is a SubscribeToTask stream read in the background.
type subscription struct {
	name   string
	cancel context.CancelFunc
	live   chan struct{} // closed at the first event or the end
	done   chan struct{} // closed at the end

	mu     sync.Mutex
	events []string
	first  a2a.Event   // the first event: the task when subscribing
	times  []time.Time // arrival of each event
	err    error
	grew   chan struct{} // closed and replaced at each event
}

// subscribe starts reading SubscribeToTask(taskID) from c.
func subscribe(ctx context.Context, name string, c *a2aclient.Client, taskID a2a.TaskID) *subscription {
	ctx, cancel := context.WithCancel(ctx)
	s := &subscription{name: name, cancel: cancel, live: make(chan struct{}), done: make(chan struct{}), grew: make(chan struct{})}
	go func() {
		defer close(s.done)
		var once sync.Once
		defer once.Do(func() { close(s.live) })
		for e, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
			now := time.Now()
			s.mu.Lock()
			if err != nil {
				s.err = err
				s.mu.Unlock()
				return
			}
			if len(s.events) == 0 {
				s.first = e
			}
			s.events = append(s.events, detailedLabel(e))
			s.times = append(s.times, now)
			close(s.grew)
			s.grew = make(chan struct{})
			s.mu.Unlock()
			once.Do(func() { close(s.live) })
		}
	}()
	return s
}

// waitLive waits for the first event: from then on the subscription sees
// every later event.
func (s *subscription) waitLive(t testing.TB) {
	t.Helper()
	select {
	case <-s.live:
	case <-time.After(30 * time.Second):
		t.Fatalf("subscriber %s got no event within 30s", s.name)
	}
}

// waitEvents waits until the subscription has n events.
func (s *subscription) waitEvents(t testing.TB, n int) {
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
		case <-s.done:
			t.Fatalf("subscriber %s ended with %d events (%v), want %d", s.name, got, s.err, n)
		case <-deadline:
			t.Fatalf("subscriber %s has %d events after 30s, want %d", s.name, got, n)
		}
	}
}

// eventsSoFar returns the events so far, a channel closed at the next one and
// the stream's error, if it ended on one.
func (s *subscription) eventsSoFar() (events []string, grew <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...), s.grew, s.err
}

// wait waits for the stream to end and returns its events and error.
func (s *subscription) wait(t testing.TB) ([]string, error) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cancel()
		<-s.done
		t.Errorf("subscriber %s did not end within 30s", s.name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...), s.err
}

// travelEvents is every event of the travel flow (Lisbon, 2026-12-24, 2) from
// the moment the task asks "Where to?", as a subscriber sees it.
var travelEvents = []string{
	"task:TASK_STATE_INPUT_REQUIRED:Where to?",
	"status:TASK_STATE_WORKING:",
	"status:TASK_STATE_INPUT_REQUIRED:On which date? (YYYY-MM-DD)",
	"status:TASK_STATE_WORKING:",
	"status:TASK_STATE_INPUT_REQUIRED:How many travellers?",
	"status:TASK_STATE_WORKING:",
	"status:TASK_STATE_WORKING:Booking 2 traveller(s) to Lisbon on 2026-12-24...",
	"artifact:booking",
	"status:TASK_STATE_COMPLETED:Booked: 2 traveller(s) to Lisbon on 2026-12-24, reference AF-XXXXXX.",
}

// TestSubscribeOnOtherReplica drives a task through one API replica while
// subscribers on both replicas of a three-process deployment (temporal,
// worker, two APIs) watch it: the replica that serves no request of the task
// streams every event too, as it only reads the workflow.
func TestSubscribeOnOtherReplica(t *testing.T) {
	d := startSplit(t, 2)
	ctx := testContext(t)
	driver := streamClient(t, ctx, d.APIURLs[0])
	task := send(t, ctx, driver, "", "Book a flight")
	wantState(t, task, a2a.TaskStateInputRequired, "Where to?")

	subs := []*subscription{
		subscribe(ctx, "on the other replica", streamClient(t, ctx, d.APIURLs[1]), task.ID),
		subscribe(ctx, "on the driving replica", streamClient(t, ctx, d.APIURLs[0]), task.ID),
	}
	for _, s := range subs {
		s.waitLive(t)
	}
	// Late subscribers join, on either replica, just as each answer goes
	// out, so that their subscription races with the answer's events: each
	// must get the task as it was when it joined and then every later event.
	lateClients := make([]*a2aclient.Client, 8)
	for i := range lateClients {
		lateClients[i] = streamClient(t, ctx, d.APIURLs[i%2])
	}
	var late []*subscription
	for i, answer := range []string{"Lisbon", "2026-12-24", "2", ""} {
		for j := 2 * i; j < 2*i+2; j++ {
			late = append(late, subscribe(ctx, fmt.Sprintf("late %d", j+1), lateClients[j], task.ID))
		}
		if answer != "" {
			task = send(t, ctx, driver, task.ID, answer)
		}
	}
	wantState(t, task, a2a.TaskStateCompleted, "")
	for _, s := range subs {
		got, err := s.wait(t)
		if err != nil {
			t.Errorf("subscriber %s: %v", s.name, err)
		}
		if diff := cmp.Diff(travelEvents, got); diff != "" {
			t.Errorf("subscriber %s (-want +got):\n%s", s.name, diff)
		}
	}
	joined := 0
	for _, s := range late {
		got, err := s.wait(t)
		if len(got) == 0 && errors.Is(err, a2a.ErrUnsupportedOperation) {
			continue // it came after the end: a finished task has nothing to stream
		}
		if err != nil {
			t.Errorf("subscriber %s: %v", s.name, err)
		}
		joined++
		if diff := diffResumed(travelEvents, s.first, got); diff != "" {
			t.Errorf("subscriber %s (-want +got):\n%s", s.name, diff)
		}
	}
	t.Logf("%d of %d late subscribers joined before the end", joined, len(late))
}

// diffResumed checks that got, the events of a subscriber that joined while
// the task produced all, is the task at some point of all and then every
// event after that point; first is got's first event. It returns "" or a
// difference from such a list.
func diffResumed(all []string, first a2a.Event, got []string) string {
	task, ok := first.(*a2a.Task)
	if !ok {
		return cmp.Diff([]string{"task:..."}, got)
	}
	// The task's status and artifact count after each event of all (the
	// first event of all is the task itself).
	type point struct {
		status    string
		artifacts int
	}
	var at []point
	p := point{status: strings.Replace(all[0], "task:", "status:", 1)}
	for _, e := range all {
		switch {
		case strings.HasPrefix(e, "status:"):
			p.status = e
		case strings.HasPrefix(e, "artifact:"):
			p.artifacts++
		}
		at = append(at, p)
	}
	joined := point{status: strings.Replace(detailedLabel(task), "task:", "status:", 1), artifacts: len(task.Artifacts)}
	diff := "the task it started with is at no point of the event list: " + detailedLabel(task)
	for k, pk := range at {
		if pk != joined {
			continue
		}
		want := append([]string{detailedLabel(task)}, all[k+1:]...)
		if diff = cmp.Diff(want, got); diff == "" {
			return ""
		}
	}
	return diff
}

// TestSubscribeAcrossAPIRestart kills (SIGKILL) the API process a subscriber
// is connected to in the middle of a task, restarts it, and reconnects with
// SubscribeToTask: the subscriber gets the current task and then every later
// event. In the split deployment the task moves on while that API is down,
// and a witness subscribed to the other replica, which stays up, shows the
// full event list.
func TestSubscribeAcrossAPIRestart(t *testing.T) {
	tests := []struct {
		name string
		// deploy returns the URL the subscriber uses, the URL that drives the
		// task and serves the witness ("" for none), and the kill and restart
		// of the subscriber's API process.
		deploy func(t *testing.T) (subURL, driveURL string, kill, restart func())
		// subscriber makes the subscribers' clients; nil: streamClient
		// (JSON-RPC).
		subscriber func(t testing.TB, ctx context.Context, baseURL string) *a2aclient.Client
	}{
		{"api replica of a split deployment", func(t *testing.T) (string, string, func(), func()) {
			d := startSplit(t, 2)
			return d.APIURLs[0], d.APIURLs[1], func() { d.apis[0].kill() }, func() { d.startAPI(0) }
		}, nil},
		// With hints over Unix sockets beside a shared SQLite database: the
		// killed replica leaves its socket file behind, and the restarted
		// one binds a new one that the worker must find.
		{"api replica of a split deployment with SQLite hints", func(t *testing.T) (string, string, func(), func()) {
			d := startSplitDB(t, 2, false, sqliteHintsDB(t))
			return d.APIURLs[0], d.APIURLs[1], func() { d.apis[0].kill() }, func() { d.startAPI(0) }
		}, nil},
		{"a2aflow serve", func(t *testing.T) (string, string, func(), func()) {
			s := startServe(t, t.TempDir())
			return s.APIURL, "", func() { s.proc().kill() }, s.restart
		}, nil},
		// The subscribers on the gRPC binding (SubscribeToTask as a
		// server-streaming call); the driver and the witness on JSON-RPC.
		{"api replica of a split deployment over gRPC", func(t *testing.T) (string, string, func(), func()) {
			d := startSplitWith(t, 2, true)
			return d.APIURLs[0], d.APIURLs[1], func() { d.apis[0].kill() }, func() { d.startAPI(0) }
		}, grpcStreamClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subURL, driveURL, kill, restart := tt.deploy(t)
			ctx := testContext(t)
			split := driveURL != ""
			if !split {
				driveURL = subURL
			}
			subClient := tt.subscriber
			if subClient == nil {
				subClient = streamClient
			}
			driver := streamClient(t, ctx, driveURL)
			task := send(t, ctx, driver, "", "Book a flight")

			before := subscribe(ctx, "before the restart", subClient(t, ctx, subURL), task.ID)
			before.waitLive(t)
			var witness *subscription
			if split {
				witness = subscribe(ctx, "witness on the other replica", streamClient(t, ctx, driveURL), task.ID)
				witness.waitLive(t)
			}
			send(t, ctx, driver, task.ID, "Lisbon")
			before.waitEvents(t, 3)

			kill()
			gotBefore, err := before.wait(t)
			t.Logf("the subscriber's stream ended with %v after the kill", err)
			answers := []string{"2026-12-24", "2"}
			if split {
				// The task moves on while the subscriber's API is down.
				send(t, ctx, driver, task.ID, answers[0])
				answers = answers[1:]
			}
			restart()
			if !split {
				driver = streamClient(t, ctx, driveURL)
			}
			after := subscribe(ctx, "after the restart", subClient(t, ctx, subURL), task.ID)
			after.waitLive(t)
			for _, answer := range answers {
				task = send(t, ctx, driver, task.ID, answer)
			}
			wantState(t, task, a2a.TaskStateCompleted, "")
			gotAfter, err := after.wait(t)
			if err != nil {
				t.Errorf("subscriber after the restart: %v", err)
			}

			if diff := cmp.Diff(travelEvents[:3], gotBefore); diff != "" {
				t.Errorf("events before the kill (-want +got):\n%s", diff)
			}
			// The reconnected subscriber starts with the current task: the
			// state of the latest event, whatever happened while it was away,
			// and then every event after that one.
			want := resumedEvents(travelEvents, len(gotBefore), split)
			if diff := cmp.Diff(want, gotAfter); diff != "" {
				t.Errorf("events after reconnecting (-want +got):\n%s", diff)
			}
			if witness != nil {
				got, err := witness.wait(t)
				if err != nil {
					t.Errorf("witness: %v", err)
				}
				if diff := cmp.Diff(travelEvents, got); diff != "" {
					t.Errorf("witness (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// resumedEvents is what a subscriber reconnecting after seen events of all
// sees: the current task, then the rest. With moved, one answer (two events:
// working, then the next question) came while it was away.
func resumedEvents(all []string, seen int, moved bool) []string {
	current := seen - 1
	if moved {
		current += 2
	}
	task := "task:" + strings.TrimPrefix(all[current], "status:")
	return append([]string{task}, all[current+1:]...)
}
