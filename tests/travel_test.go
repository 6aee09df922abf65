package tests

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// newClient resolves the card at baseURL and returns an a2a-go client for it.
func newClient(t testing.TB, ctx context.Context, baseURL string) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client for %s: %v", baseURL, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, card
}

// clientsOver resolves the card at baseURL and makes n clients of it over
// binding (A2A 1.0): gRPC clients each dial a connection of their own, the
// others share one HTTP transport that keeps conns idle connections per
// host (Go's default keeps 2). A request may take 2 minutes.
func clientsOver(t testing.TB, ctx context.Context, baseURL string, n int, binding a2a.TransportProtocol, conns int) []*a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = conns
	transport.MaxIdleConnsPerHost = conns
	hc := &http.Client{Transport: transport, Timeout: 2 * time.Minute}
	t.Cleanup(transport.CloseIdleConnections)
	var clients []*a2aclient.Client
	for range n {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
			a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
			grpcv1.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			t.Fatalf("%s client for %s: %v", binding, baseURL, err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		clients = append(clients, c)
	}
	return clients
}

// send sends text as a new user message (to taskID when set) and returns the task.
func send(t testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, text string) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.TaskID = taskID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", text, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q) returned %T, want *a2a.Task", text, res)
	}
	return task
}

// wantState fails unless task is in state; for interrupted states it also
// checks that the status message contains question.
func wantState(t testing.TB, task *a2a.Task, state a2a.TaskState, question string) {
	t.Helper()
	if task.Status.State != state {
		t.Fatalf("task %s state = %s, want %s (status message %v)", task.ID, task.Status.State, state, statusText(task))
	}
	if question != "" && statusText(task) != question {
		t.Fatalf("task %s status message = %q, want %q", task.ID, statusText(task), question)
	}
}

// statusText is the text of task's status message.
func statusText(task *a2a.Task) string { return messageText(task.Status.Message) }

// travelBooking runs the travel agent's conversation to completion on c.
func travelBooking(t testing.TB, ctx context.Context, c *a2aclient.Client) *a2a.Task {
	t.Helper()
	task := send(t, ctx, c, "", "Book a flight")
	wantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	task = send(t, ctx, c, task.ID, "Lisbon")
	wantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
	task = send(t, ctx, c, task.ID, "2026-12-24")
	wantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	task = send(t, ctx, c, task.ID, "2")
	wantState(t, task, a2a.TaskStateCompleted, "")
	return task
}

// bookingOf returns the JSON booking artifact of a completed travel task.
func bookingOf(t testing.TB, task *a2a.Task) map[string]any {
	t.Helper()
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "booking" || len(task.Artifacts[0].Parts) != 1 {
		raw, _ := json.Marshal(task.Artifacts)
		t.Fatalf("artifacts = %s, want one booking artifact with one part", raw)
	}
	data, ok := task.Artifacts[0].Parts[0].Data().(map[string]any)
	if !ok {
		t.Fatalf("booking part = %#v, want JSON object data", task.Artifacts[0].Parts[0])
	}
	return data
}

func TestTravelFlowWithGoClient(t *testing.T) {
	s := startServe(t, t.TempDir())
	ctx := testContext(t)
	c, card := newClient(t, ctx, s.APIURL)

	if card.Name != "travel" || len(card.Skills) == 0 || len(card.SupportedInterfaces) < 2 {
		t.Fatalf("root card = %+v, want the travel agent with skills and two interfaces", card)
	}

	task := travelBooking(t, ctx, c)
	booking := bookingOf(t, task)
	if booking["destination"] != "Lisbon" || booking["date"] != "2026-12-24" || booking["travellers"] != float64(2) {
		t.Errorf("booking = %v, want Lisbon, 2026-12-24, 2 travellers", booking)
	}
	if ref, _ := booking["reference"].(string); len(ref) != 9 {
		t.Errorf("booking reference = %q, want AF-XXXXXX", booking["reference"])
	}

	// GetTask returns the whole conversation: 4 user messages, 3 questions,
	// the "Booking..." progress message and the final reply.
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var roles []a2a.MessageRole
	for _, m := range got.History {
		roles = append(roles, m.Role)
	}
	u, a := a2a.MessageRoleUser, a2a.MessageRoleAgent
	if diff := cmp.Diff([]a2a.MessageRole{u, a, u, a, u, a, u, a, a}, roles); diff != "" {
		t.Errorf("history roles (-want +got):\n%s", diff)
	}
	// historyLength: 0 none, 2 the last two.
	for _, n := range []int{0, 2} {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &n})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History) != n {
			t.Errorf("GetTask(historyLength=%d) returned %d messages", n, len(got.History))
		}
	}

	// A terminal task is immutable: a further message is UnsupportedOperation.
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("one more"))
	msg.TaskID = task.ID
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("SendMessage to completed task: err = %v, want ErrUnsupportedOperation", err)
	}
}
