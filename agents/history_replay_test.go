package agents

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// TestReplayTravelHistory replays a travel task recorded on a real server
// (Book a flight, three answers, a booking activity, completion). A workflow
// change that would break tasks already running fails here. Record a new
// fixture only for an intended, versioned change:
//
//	A2AFLOW_RECORD_HISTORY=1 go test ./tests/ -run TestReplayRecordedTravelHistory
func TestReplayTravelHistory(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.NewTaskWorkflow(Builtin()).Run, workflow.RegisterOptions{Name: workflows.TaskWorkflowName})
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/travel.history.json"); err != nil {
		t.Fatal(err)
	}
}
