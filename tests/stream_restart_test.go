package tests

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2aflow/a2aflow/tests/harness"
)

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
	d := harness.StartSplit(t, 2)
	ctx := harness.Context(t)
	driver := streamClient(t, ctx, d.APIURLs[0])
	task := harness.Send(t, ctx, driver, "", "Book a flight")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")

	subs := []*harness.Subscription{
		harness.Subscribe(ctx, "on the other replica", streamClient(t, ctx, d.APIURLs[1]), task.ID),
		harness.Subscribe(ctx, "on the driving replica", streamClient(t, ctx, d.APIURLs[0]), task.ID),
	}
	for _, s := range subs {
		s.WaitLive(t)
	}
	// Late subscribers join, on either replica, just as each answer goes
	// out, so that their subscription races with the answer's events: each
	// must get the task as it was when it joined and then every later event.
	lateClients := make([]*a2aclient.Client, 8)
	for i := range lateClients {
		lateClients[i] = streamClient(t, ctx, d.APIURLs[i%2])
	}
	var late []*harness.Subscription
	for i, answer := range []string{"Lisbon", "2026-12-24", "2", ""} {
		for j := 2 * i; j < 2*i+2; j++ {
			late = append(late, harness.Subscribe(ctx, fmt.Sprintf("late %d", j+1), lateClients[j], task.ID))
		}
		if answer != "" {
			task = harness.Send(t, ctx, driver, task.ID, answer)
		}
	}
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	for _, s := range subs {
		got, err := s.Wait(t)
		if err != nil {
			t.Errorf("subscriber %s: %v", s.Name, err)
		}
		if diff := cmp.Diff(travelEvents, got); diff != "" {
			t.Errorf("subscriber %s (-want +got):\n%s", s.Name, diff)
		}
	}
	joined := 0
	for _, s := range late {
		got, err := s.Wait(t)
		if len(got) == 0 && errors.Is(err, a2a.ErrUnsupportedOperation) {
			continue // it came after the end: a finished task has nothing to stream
		}
		if err != nil {
			t.Errorf("subscriber %s: %v", s.Name, err)
		}
		joined++
		if diff := diffResumed(travelEvents, s.First, got); diff != "" {
			t.Errorf("subscriber %s (-want +got):\n%s", s.Name, diff)
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
	joined := point{status: strings.Replace(harness.DetailedLabel(task), "task:", "status:", 1), artifacts: len(task.Artifacts)}
	diff := "the task it started with is at no point of the event list: " + harness.DetailedLabel(task)
	for k, pk := range at {
		if pk != joined {
			continue
		}
		want := append([]string{harness.DetailedLabel(task)}, all[k+1:]...)
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
			d := harness.StartSplit(t, 2)
			return d.APIURLs[0], d.APIURLs[1], func() { d.APIs[0].Kill() }, func() { d.StartAPI(0) }
		}, nil},
		// With hints over Unix sockets beside a shared SQLite database: the
		// killed replica leaves its socket file behind, and the restarted
		// one binds a new one that the worker must find.
		{"api replica of a split deployment with SQLite hints", func(t *testing.T) (string, string, func(), func()) {
			d := harness.StartSplitDB(t, 2, false, harness.SQLiteHintsDB(t))
			return d.APIURLs[0], d.APIURLs[1], func() { d.APIs[0].Kill() }, func() { d.StartAPI(0) }
		}, nil},
		{"a2aflow serve", func(t *testing.T) (string, string, func(), func()) {
			s := harness.StartServe(t, t.TempDir())
			return s.APIURL, "", func() { s.Proc().Kill() }, s.Restart
		}, nil},
		// The subscribers on the gRPC binding (SubscribeToTask as a
		// server-streaming call); the driver and the witness on JSON-RPC.
		{"api replica of a split deployment over gRPC", func(t *testing.T) (string, string, func(), func()) {
			d := harness.StartSplitWith(t, 2, true)
			return d.APIURLs[0], d.APIURLs[1], func() { d.APIs[0].Kill() }, func() { d.StartAPI(0) }
		}, grpcStreamClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subURL, driveURL, kill, restart := tt.deploy(t)
			ctx := harness.Context(t)
			split := driveURL != ""
			if !split {
				driveURL = subURL
			}
			subClient := tt.subscriber
			if subClient == nil {
				subClient = streamClient
			}
			driver := streamClient(t, ctx, driveURL)
			task := harness.Send(t, ctx, driver, "", "Book a flight")

			before := harness.Subscribe(ctx, "before the restart", subClient(t, ctx, subURL), task.ID)
			before.WaitLive(t)
			var witness *harness.Subscription
			if split {
				witness = harness.Subscribe(ctx, "witness on the other replica", streamClient(t, ctx, driveURL), task.ID)
				witness.WaitLive(t)
			}
			harness.Send(t, ctx, driver, task.ID, "Lisbon")
			before.WaitEvents(t, 3)

			kill()
			gotBefore, err := before.Wait(t)
			t.Logf("the subscriber's stream ended with %v after the kill", err)
			answers := []string{"2026-12-24", "2"}
			if split {
				// The task moves on while the subscriber's API is down.
				harness.Send(t, ctx, driver, task.ID, answers[0])
				answers = answers[1:]
			}
			restart()
			if !split {
				driver = streamClient(t, ctx, driveURL)
			}
			after := harness.Subscribe(ctx, "after the restart", subClient(t, ctx, subURL), task.ID)
			after.WaitLive(t)
			for _, answer := range answers {
				task = harness.Send(t, ctx, driver, task.ID, answer)
			}
			harness.WantState(t, task, a2a.TaskStateCompleted, "")
			gotAfter, err := after.Wait(t)
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
				got, err := witness.Wait(t)
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
