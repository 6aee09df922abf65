package tests

import (
	"os"
	"path/filepath"
	"testing"

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

	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	h := &history.History{}
	iter := tc.GetWorkflowHistory(ctx, string(task.ID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	last := h.Events[len(h.Events)-1].GetEventType()
	if last != enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		t.Fatalf("last history event = %v, want WorkflowExecutionCompleted", last)
	}

	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.NewTaskWorkflow(agents.Builtin()).Run, workflow.RegisterOptions{Name: workflows.TaskWorkflowName})
	if err := replayer.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replay of a fresh travel history: %v", err)
	}

	if os.Getenv("A2AFLOW_RECORD_HISTORY") == "1" {
		raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "agents", "testdata", "travel.history.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d events to %s", len(h.Events), path)
	}
}
