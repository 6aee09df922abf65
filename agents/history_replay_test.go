package agents

import (
	"os"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// TestReplayHistories replays tasks recorded on a real server. A workflow
// change that would break tasks already running fails here. Record a new
// fixture only for an intended, versioned change, e.g.:
//
//	A2AFLOW_RECORD_HISTORY=1 go test ./tests/ -run TestReplayRecordedExpensesHistory
//
// The *-continued-* fixtures are single runs of tasks that continued as new;
// they hold no payload-store references, so they replay without the store.
// Record them, and only them (-run TestReplayRecorded alone would rewrite
// every fixture above too), with:
//
//	A2AFLOW_RECORD_HISTORY=1 go test ./tests/ -run 'TestReplayRecorded.*Continued'
func TestReplayHistories(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
	}{
		// Book a flight: three answers, a booking activity, completion.
		{name: "travel", fixture: "testdata/travel.history.json"},
		// An expense over the limit: it waits for finance (the approval
		// webhook activity runs), is approved through REST, and completes
		// with its receipt.
		{name: "expenses", fixture: "testdata/expenses.history.json"},
		// The router delegates "@ext ask" to a remote agent (a2a-go's
		// server): our task waits with the remote question, forwards the
		// answer, and copies the remote artifact.
		{name: "router-delegation", fixture: "testdata/router-delegation.history.json"},
		// The router's LLM routes to the remote agent and answers the remote
		// question itself (HANDLE_DIRECTLY).
		{name: "router-llm", fixture: "testdata/router-llm.history.json"},
		// The router's LLM finds the city missing (human_input): the task
		// asks the user, and routes again with the answer (the clock tool).
		{name: "router-human-input", fixture: "testdata/router-human-input.history.json"},
		// Continue-as-new mid-conversation (Temporal suggesting it after 40
		// events): the first run of a travel task asks for the destination
		// and the date, takes invalid dates and continues as new while the
		// date question waits, handing over the slots and the parked wait.
		{name: "travel-continued-ask", fixture: "testdata/travel-continued-ask.history.json"},
		// The last run of that task: it starts from the continued task,
		// picks up the waiting date question without asking it again, takes
		// the date and the travellers, books once and completes.
		{name: "travel-continued-resume", fixture: "testdata/travel-continued-resume.history.json"},
		// Continue-as-new mid-approval: an expense over the limit waits for
		// finance (webhook notice, 48 h timer); plain messages queued while
		// it waits grow the run until it continues as new, the approval
		// pending.
		{name: "expenses-continued-approval", fixture: "testdata/expenses-continued-approval.history.json"},
		// The next run: it starts from the continued task, waits for the same
		// approval (no second notice, a timer for what is left of the
		// deadline), is approved through REST and completes with its receipt.
		{name: "expenses-continued-resume", fixture: "testdata/expenses-continued-resume.history.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(tt.fixture)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatalf("%s: %v", tt.fixture, err)
			}
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(workflows.NewTaskWorkflow(Builtin()).Run, workflow.RegisterOptions{Name: workflows.TaskWorkflowName})
			// The workflow ID is the task ID, from which approval IDs
			// derive: replay under the recorded one.
			started := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
			err = replayer.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()},
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
