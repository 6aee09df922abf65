package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestNondeterminismAndRollback deploys, without Worker Versioning, a v2
// whose orders agent cannot replay a task parked on v1: the task is not
// lost nor failed, a2aflow says why it cannot go on (GetTask, SendMessage,
// the worker's error log), and rolling back to v1 lets it finish.
func TestNondeterminismAndRollback(t *testing.T) {
	v1, v2 := buildVersioned(t, "v1"), buildVersioned(t, "v2")
	if t.Failed() {
		return
	}
	dataDir := t.TempDir()
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	args := []string{"serve", "--http-addr", strings.TrimPrefix(apiURL, "http://"),
		"--temporal-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)), "--ui-addr", "", "--data-dir", dataDir,
		"--log-level", "warn", "--wait-timeout", "5s"}
	serve := func(program, name string) *harness.Proc {
		p := harness.StartProgram(t, program, name, nil, args...)
		p.WaitOutput("a2aflow is serving", 2*time.Minute)
		harness.WaitHealthy(t, apiURL)
		return p
	}

	p := serve(v1, "v1 serve")
	ctx := harness.Context(t)
	orders, _ := harness.NewClient(t, ctx, apiURL+"/agents/orders")
	parked := harness.Send(t, ctx, orders, "", "hello")
	harness.WantState(t, parked, a2a.TaskStateInputRequired, "What should we order?")
	p.Kill()

	// v2 cannot replay the parked task: the answer is refused, retryable,
	// saying why; the task is not failed, its answer not lost.
	p = serve(v2, "v2 serve")
	orders, _ = harness.NewClient(t, ctx, apiURL+"/agents/orders")
	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("desks"))
	answer.TaskID = parked.ID
	_, err := orders.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer})
	wantStuck(t, "SendMessage", err)
	if _, err := orders.GetTask(ctx, &a2a.GetTaskRequest{ID: parked.ID}); err != nil {
		// A read may still be answered from the history; if not, it says why.
		wantStuck(t, "GetTask", err)
	}
	p.WaitOutput("task stuck: its workflow task keeps failing", 10*time.Second)
	if out := p.Out.String(); !strings.Contains(out, "reason=NONDETERMINISM") || !strings.Contains(out, string(parked.ID)) {
		t.Errorf("the error log does not name the task and the cause:\n%s", out)
	}
	if families, body := scrapeMetrics(t, apiURL+"/metrics"); !hasSeries(families["a2aflow_stuck_tasks_answered_total"], map[string]string{"reason": "NONDETERMINISM"}) {
		t.Errorf("/metrics does not count the stuck answer:\n%s", body)
	}
	p.Kill()

	// Rolled back, the task goes on where it stopped; the same answer sent
	// again (same messageId, as the error says) is applied once.
	serve(v1, "v1 serve again")
	orders, _ = harness.NewClient(t, ctx, apiURL+"/agents/orders")
	task := send2(t, ctx, orders, answer)
	harness.WantState(t, task, a2a.TaskStateCompleted, "v1 ordered desks")
	before, err := orders.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	send2(t, ctx, orders, answer)
	after, err := orders.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.History) != len(before.History) {
		t.Errorf("the answer sent again changed the history: %d messages, then %d", len(before.History), len(after.History))
	}
}

// wantStuck checks err is the retryable NONDETERMINISM answer.
func wantStuck(t *testing.T, call string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s on a task the deployed code cannot replay: no error", call)
	}
	if !errors.Is(err, a2a.ErrInternalError) || !strings.Contains(err.Error(), "no longer replays it (non-determinism)") {
		t.Fatalf("%s: %v, want the internal error naming the non-determinism", call, err)
	}
}

// send2 sends msg (an answer to its task) and returns the task.
func send2(t *testing.T, ctx context.Context, c *a2aclient.Client, msg *a2a.Message) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a task", res)
	}
	return task
}
