package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// NewClient resolves the card at baseURL and returns an a2a-go client for it.
func NewClient(t testing.TB, ctx context.Context, baseURL string) (*a2aclient.Client, *a2a.AgentCard) {
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

// ClientsOver resolves the card at baseURL and makes n clients of it over
// binding (A2A 1.0): gRPC clients each dial a connection of their own, the
// others share one HTTP transport that keeps conns idle connections per
// host (Go's default keeps 2). A request may take 2 minutes.
func ClientsOver(t testing.TB, ctx context.Context, baseURL string, n int, binding a2a.TransportProtocol, conns int) []*a2aclient.Client {
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

// Send sends text as a new user message (to taskID when set) and returns the task.
func Send(t testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, text string) *a2a.Task {
	t.Helper()
	task, err := TrySend(ctx, c, taskID, text)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TrySend sends text with blocking SendMessage (to taskID when set) and
// returns the task, or an error that wraps the A2A error (errors.Is finds
// it).
func TrySend(ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, text string) (*a2a.Task, error) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.TaskID = taskID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, fmt.Errorf("SendMessage(%q): %w", text, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("SendMessage(%q) returned %T, want *a2a.Task", text, res)
	}
	return task, nil
}

// WantState fails unless task is in state; for interrupted states it also
// checks that the status message contains question.
func WantState(t testing.TB, task *a2a.Task, state a2a.TaskState, question string) {
	t.Helper()
	if task.Status.State != state {
		t.Fatalf("task %s state = %s, want %s (status message %v)", task.ID, task.Status.State, state, StatusText(task))
	}
	if question != "" && StatusText(task) != question {
		t.Fatalf("task %s status message = %q, want %q", task.ID, StatusText(task), question)
	}
}

// StatusText is the text of task's status message.
func StatusText(task *a2a.Task) string { return Text(task.Status.Message) }

// Text is the text of m's parts, joined as they are; "" for nil.
func Text(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var s string
	for _, p := range m.Parts {
		s += p.Text()
	}
	return s
}

// BookingOf returns the JSON booking artifact of a completed travel task.
func BookingOf(t testing.TB, task *a2a.Task) map[string]any {
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

// TravelBooking runs the travel agent's conversation to completion on c.
func TravelBooking(t testing.TB, ctx context.Context, c *a2aclient.Client) *a2a.Task {
	t.Helper()
	task := Send(t, ctx, c, "", "Book a flight")
	WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	task = Send(t, ctx, c, task.ID, "Lisbon")
	WantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
	task = Send(t, ctx, c, task.ID, "2026-12-24")
	WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	task = Send(t, ctx, c, task.ID, "2")
	WantState(t, task, a2a.TaskStateCompleted, "")
	return task
}

// AddAgent runs `a2aflow agents add URL --name NAME [extra...]` on dataDir.
func AddAgent(t testing.TB, dataDir, name, url string, extra ...string) {
	t.Helper()
	out, err := Command(append([]string{"agents", "add", url, "--name", name, "--data-dir", dataDir}, extra...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("agents add %s: %v\n%s", name, err, out)
	}
}
