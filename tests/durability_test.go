package tests

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestKillAndRestart kills `a2aflow serve` with SIGKILL while a task waits for
// input, starts it again on the same data dir, and finishes the task.
func TestKillAndRestart(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, c, "", "Book a flight")
	task = harness.Send(t, ctx, c, task.ID, "Reykjavik")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")

	for i := range 3 {
		s.Proc().Kill()
		s.Restart()
		c, _ = harness.NewClient(t, ctx, s.APIURL)
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("GetTask after restart %d: %v", i+1, err)
		}
		harness.WantState(t, got, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
		if len(got.History) != 4 {
			t.Fatalf("after restart %d history has %d messages, want 4", i+1, len(got.History))
		}
	}

	task = harness.Send(t, ctx, c, task.ID, "2027-01-15")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	task = harness.Send(t, ctx, c, task.ID, "3")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	if b := harness.BookingOf(t, task); b["destination"] != "Reykjavik" || b["travellers"] != float64(3) {
		t.Errorf("booking = %v, want Reykjavik for 3", b)
	}
}

// TestThreeProcesses runs `a2aflow temporal`, `a2aflow worker` and `a2aflow
// api` as separate processes, and also a second API replica, and serves the
// travel flow through them.
func TestThreeProcesses(t *testing.T) {
	dataDir := t.TempDir()
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	api2URL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	env := []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + harness.SecretsKey}

	tp := harness.Start(t, "a2aflow temporal", env, "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	w := harness.Start(t, "a2aflow worker", env, "worker", "--data-dir", dataDir)
	w.WaitOutput("a2aflow worker is running", time.Minute)
	for _, u := range []string{apiURL, api2URL} {
		p := harness.Start(t, "a2aflow api "+u, env, "api", "--http-addr", strings.TrimPrefix(u, "http://"))
		p.WaitOutput("a2aflow API is serving", time.Minute)
		harness.WaitHealthy(t, u)
	}

	ctx := harness.Context(t)
	c1, _ := harness.NewClient(t, ctx, apiURL)
	c2, _ := harness.NewClient(t, ctx, api2URL)
	bookAcrossReplicas(t, ctx, c1, c2)
}

// TestTasksAreSearchable checks that a task's workflow carries the A2A
// search attributes and memo, so the Temporal UI and visibility queries find
// it by context, state and agent.
func TestTasksAreSearchable(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Book a flight"))
	msg.ContextID = "trip-planning-42"
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.ContextID != "trip-planning-42" {
		t.Errorf("contextId = %q, want the given one", task.ContextID)
	}

	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	query := `A2AContextId = "trip-planning-42" AND A2ATaskState = "TASK_STATE_INPUT_REQUIRED" AND A2AAgent = "travel" AND A2ASkill = "book-flight"`
	var found *workflowservice.ListWorkflowExecutionsResponse
	// Visibility is eventually consistent; give it a moment.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		found, err = tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatalf("ListWorkflow(%s): %v", query, err)
		}
		if len(found.Executions) > 0 {
			break
		}
	}
	if len(found.GetExecutions()) != 1 || found.Executions[0].Execution.WorkflowId != string(task.ID) {
		t.Fatalf("visibility query %s found %v, want the task %s", query, found.GetExecutions(), task.ID)
	}
	if got := string(found.Executions[0].Memo.GetFields()["text"].GetData()); got != `"Book a flight"` {
		t.Errorf("memo text = %s, want the first user text", got)
	}
}

// TestPortInUse checks that a taken port is one clear error line and a
// non-zero exit, not a crash inside the Temporal or UI libraries.
func TestPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	free := func() string { return fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)) }

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"API", []string{"--http-addr", addr, "--temporal-addr", free(), "--ui-addr", free()}, "a2aflow: the A2A API cannot listen on " + addr},
		{"Temporal frontend", []string{"--http-addr", free(), "--temporal-addr", addr, "--ui-addr", free()}, "temporal frontend " + addr + ": address already in use"},
		{"Temporal UI", []string{"--http-addr", free(), "--temporal-addr", free(), "--ui-addr", addr}, "temporal UI " + addr + ": address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := harness.Command(append([]string{"serve", "--data-dir", t.TempDir()}, tt.args...)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want exit code 1; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output does not say %q:\n%s", tt.want, out)
			}
			if strings.Contains(string(out), "panic") || strings.Count(strings.TrimSpace(string(out)), "\n") > 2 {
				t.Errorf("want one clear error line, got:\n%s", out)
			}
		})
	}
}

// bookAcrossReplicas books a trip to Kyoto with the travel agent, sending
// each answer to the other of two API replicas (c1, c2): they share
// nothing but Temporal, and the task moves between them. It returns the
// completed task.
func bookAcrossReplicas(t *testing.T, ctx context.Context, c1, c2 *a2aclient.Client) *a2a.Task {
	t.Helper()
	task := harness.Send(t, ctx, c1, "", "Book a flight")
	task = harness.Send(t, ctx, c2, task.ID, "Kyoto")
	task = harness.Send(t, ctx, c1, task.ID, "2027-04-01")
	task = harness.Send(t, ctx, c2, task.ID, "1")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	if b := harness.BookingOf(t, task); b["destination"] != "Kyoto" {
		t.Errorf("booking = %v, want Kyoto", b)
	}
	return task
}
