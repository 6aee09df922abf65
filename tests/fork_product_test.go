package tests

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// productCalls reads the lines the product program's activities wrote to
// its PRODUCT_CALLS file: one per run.
func productCalls(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

// decideByMessage sends an approval decision as an A2A message on the task,
// as approver: a message in the task's history.
func decideByMessage(t testing.TB, ctx context.Context, c *a2aclient.Client, taskID a2a.TaskID, approvalID, approver string) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": approvalID, "approved": true}))
	msg.TaskID = taskID
	res, err := c.SendMessage(withHeader(ctx, "X-Approver", approver), &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("decision of %s on %s: %v", approver, approvalID, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("decision of %s: answered %T", approver, res)
	}
	return task
}

// forkHistoryEvents counts the event types of a workflow's history.
func forkHistoryEvents(t testing.TB, ctx context.Context, temporalAddr string, id a2a.TaskID) map[enums.EventType]int {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	counts := map[enums.EventType]int{}
	it := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		counts[e.GetEventType()]++
	}
	return counts
}

// TestForkQuorum: the product's council task needs two approvals (a
// quorum); ann and bob decide with A2A messages, then RecordDecision runs.
// Forked after both decisions, the fork completes at once from the records
// (not asked again, RecordDecision not run again); forked between them, it
// waits for the second approval only, with ann's decision recorded, and
// completes once bob decides again.
func TestForkQuorum(t *testing.T) {
	program := buildVersioned(t, "v1")
	calls := filepath.Join(t.TempDir(), "calls")
	s := harness.StartServeProgram(t, program, t.TempDir(), []string{"PRODUCT_CALLS=" + calls})
	ctx := harness.Context(t)
	url := s.APIURL + "/agents/council"
	c, _ := harness.NewClient(t, ctx, url)

	task, approvalID := expense(t, ctx, c, "the budget")
	task = decideByMessage(t, ctx, c, task.ID, approvalID, "ann")
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("after one of two approvals the task is %s %q, want still waiting", task.Status.State, harness.StatusText(task))
	}
	mid, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	task = decideByMessage(t, ctx, c, task.ID, approvalID, "bob")
	done := waitTaskState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
	if got := workflows.MessageText(done.Status.Message); got != "recorded ann+bob" {
		t.Fatalf("the council task answered %q", got)
	}
	if got := productCalls(t, calls); len(got) != 1 {
		t.Fatalf("RecordDecision ran %v, want once", got)
	}

	t.Run("after both decisions", func(t *testing.T) {
		began := time.Now()
		fork := harness.ForkREST(t, url, task.ID, len(done.History))
		if fork.Status.State != a2a.TaskStateCompleted || workflows.MessageText(fork.Status.Message) != "recorded ann+bob" {
			t.Fatalf("the fork after both decisions is %s %q, want completed from the records without asking again",
				fork.Status.State, harness.StatusText(fork))
		}
		if got := productCalls(t, calls); len(got) != 1 {
			t.Errorf("RecordDecision ran %v, want once (not in the fork)", got)
		}
		t.Logf("forked after both decisions in %s", time.Since(began).Round(time.Millisecond))
	})

	t.Run("between the decisions", func(t *testing.T) {
		fork := harness.ForkREST(t, url, task.ID, len(mid.History))
		if fork.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("the fork between the decisions is %s %q, want waiting for the second approval", fork.Status.State, harness.StatusText(fork))
		}
		forkApproval := string(fork.ID) + "-approval-1"
		var view struct {
			State     string `json:"state"`
			Decisions []struct {
				Approver string `json:"approver"`
			} `json:"decisions"`
		}
		if code := getJSON(t, s.APIURL+"/approvals/"+forkApproval, &view); code != http.StatusOK || view.State != "pending" ||
			len(view.Decisions) != 1 || view.Decisions[0].Approver != "ann" {
			t.Fatalf("GET /approvals/%s = %d %+v, want pending with ann's recorded decision", forkApproval, code, view)
		}
		decideByMessage(t, ctx, c, fork.ID, forkApproval, "bob")
		end := waitTaskState(t, ctx, c, fork.ID, a2a.TaskStateCompleted)
		if got := workflows.MessageText(end.Status.Message); got != "recorded ann+bob" {
			t.Errorf("the fork answered %q", got)
		}
		if got := productCalls(t, calls); len(got) != 2 {
			t.Errorf("RecordDecision ran %v, want twice in all (the original, the fork decided live)", got)
		}
	})
}

// TestForkTimersAndLocalActivities: the product's pause task stamps its
// first answer with a local activity, sleeps (a durable timer) and asks
// again. A fork after the sleep does not sleep again (no timer in its
// history, answered at once) and does not run the local activity again
// (its result comes from the original's marker); a fork at the first
// answer asks the second question at once.
func TestForkTimersAndLocalActivities(t *testing.T) {
	const sleep = 4 * time.Second
	program := buildVersioned(t, "v1")
	calls := filepath.Join(t.TempDir(), "calls")
	s := harness.StartServeProgram(t, program, t.TempDir(), []string{"PRODUCT_CALLS=" + calls})
	ctx := harness.Context(t)
	url := s.APIURL + "/agents/pause"
	c, _ := harness.NewClient(t, ctx, url)

	task := harness.Send(t, ctx, c, "", sleep.String())
	harness.WantState(t, task, a2a.TaskStateInputRequired, "First?")
	began := time.Now()
	task = harness.Send(t, ctx, c, task.ID, "alpha")
	if task.Status.State != a2a.TaskStateInputRequired {
		task = waitTaskState(t, ctx, c, task.ID, a2a.TaskStateInputRequired)
	}
	if slept := time.Since(began); slept < sleep {
		t.Fatalf("the original asked again after %s, want after its %s sleep", slept, sleep)
	}
	task = harness.Send(t, ctx, c, task.ID, "beta")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	if got := workflows.MessageText(task.Status.Message); got != "stamped alpha, then beta" {
		t.Fatalf("the pause task answered %q", got)
	}
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := productCalls(t, calls); len(got) != 1 {
		t.Fatalf("Stamp ran %v, want once", got)
	}

	t.Run("at its end", func(t *testing.T) {
		began := time.Now()
		fork := harness.ForkREST(t, url, task.ID, len(full.History))
		took := time.Since(began)
		if fork.Status.State != a2a.TaskStateCompleted || workflows.MessageText(fork.Status.Message) != "stamped alpha, then beta" {
			t.Fatalf("the fork at the end is %s %q, want completed from the records", fork.Status.State, harness.StatusText(fork))
		}
		if took >= sleep {
			t.Errorf("the fork took %s: it slept again", took)
		}
		events := forkHistoryEvents(t, ctx, s.TemporalAddr, fork.ID)
		if n := events[enums.EVENT_TYPE_TIMER_STARTED]; n != 0 {
			t.Errorf("the fork started %d timers, want none (the original's fired before the fork point)", n)
		}
		if n := events[enums.EVENT_TYPE_MARKER_RECORDED]; n != 0 {
			t.Errorf("the fork recorded %d markers, want no local activity run again", n)
		}
		if got := productCalls(t, calls); len(got) != 1 {
			t.Errorf("Stamp ran %v, want once (not in the fork)", got)
		}
		t.Logf("forked past a %s sleep in %s", sleep, took.Round(time.Millisecond))
	})

	t.Run("at its first answer", func(t *testing.T) {
		fork := harness.ForkREST(t, url, task.ID, 3)
		harness.WantState(t, fork, a2a.TaskStateInputRequired, "Second?")
		end := harness.Send(t, ctx, c, fork.ID, "gamma")
		harness.WantState(t, end, a2a.TaskStateCompleted, "")
		if got := workflows.MessageText(end.Status.Message); got != "stamped alpha, then gamma" {
			t.Errorf("the fork answered %q", got)
		}
		if got := productCalls(t, calls); len(got) != 1 {
			t.Errorf("Stamp ran %v, want once", got)
		}
	})
}
