package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2aflow/a2aflow/agents"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestReplayRecordedTravelHistory runs the travel flow on a real server,
// fetches the task's workflow history and replays it against the current
// workflow code, which must reproduce it exactly. With
// A2AFLOW_RECORD_HISTORY=1 it also writes the history to
// agents/testdata/travel.history.json, the fixture the agents package replays
// so that a change breaking running tasks fails CI.
func TestReplayRecordedTravelHistory(t *testing.T) {
	s := startServe(t, t.TempDir())
	ctx := testContext(t)
	c, _ := newClient(t, ctx, s.APIURL)
	task := travelBooking(t, ctx, c)
	replayAndRecord(t, ctx, s, task.ID, "travel.history.json")
}

// TestReplayRecordedExpensesHistory does the same for an expense that waits
// for the finance group (its approval webhook notice included) and is
// approved through the REST API; the fixture is
// agents/testdata/expenses.history.json.
func TestReplayRecordedExpensesHistory(t *testing.T) {
	s := startServe(t, t.TempDir())
	ctx := testContext(t)
	c, _ := newClient(t, ctx, s.APIURL+"/agents/expenses")
	task, id := expense(t, ctx, c, "250 EUR conference ticket")
	decision := map[string]any{"approved": true, "comment": "worth it"}
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, decision, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", id, code)
	}
	checkReceipt(t, "REST", waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted), true, "fiona", "rest", "worth it")
	replayAndRecord(t, ctx, s, task.ID, "expenses.history.json")
}

// replayAndRecord fetches the history of the completed task id, replays it
// against the current workflow code and, with A2AFLOW_RECORD_HISTORY=1,
// writes it to agents/testdata/fixture.
func replayAndRecord(t *testing.T, ctx context.Context, s *server, id a2a.TaskID, fixture string) {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	h := &history.History{}
	// The workflow completes a moment after the task does (it lets its
	// handlers answer first): wait for the last event.
	waitFor(t, 20*time.Second, func() bool {
		h.Events = nil
		iter := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, e)
		}
		return len(h.Events) > 0 && h.Events[len(h.Events)-1].GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	})

	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.NewTaskWorkflow(agents.Builtin()).Run, workflow.RegisterOptions{Name: workflows.TaskWorkflowName})
	// The workflow ID is the task ID, from which approval IDs derive: the
	// replay must run under the recorded one, not the replayer's default.
	started := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
	err = replayer.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()},
	})
	if err != nil {
		t.Fatalf("replay of a fresh %s: %v", fixture, err)
	}

	if os.Getenv("A2AFLOW_RECORD_HISTORY") == "1" {
		raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "agents", "testdata", fixture)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d events to %s", len(h.Events), path)
	}
}
