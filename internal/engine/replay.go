package engine

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Replayer replays recorded runs of tasks (their workflow histories) against
// the current code of a registry's agents. A run that replays makes the same
// decisions with the new code as it made with the code that recorded it: a
// task parked on that run resumes on the new code without breaking. A run
// that does not replay fails with a non-determinism error naming the first
// step that differs; such a change needs workflow.GetVersion (see the
// package documentation, "Changing an agent"), or must wait until the tasks
// parked on the old code have ended.
//
// Replay histories of real tasks in CI before deploying changed agent code:
// fixtures recorded with `a2aflow replay --save DIR`, or the running tasks of
// a cluster with `a2aflow replay --running`.
type Replayer struct {
	r worker.WorkflowReplayer
}

// ReplayOptions configures a Replayer.
type ReplayOptions struct {
	// ExternalStorage reads the payloads a history holds by reference (those
	// of 256 KiB or more): blobstore.ExternalStorage of the store the worker
	// used. Without it such a history does not replay.
	ExternalStorage converter.ExternalStorage
	// Workflow are the options the worker built its task workflow with:
	// some change what a task does (RetryBudget, Limits, Push).
	Workflow Options
}

// NewReplayer returns a Replayer of reg's agents, configured as the worker
// that will run them is (the agents' idle timeouts included).
func NewReplayer(reg *Registry, o ReplayOptions) (*Replayer, error) {
	if reg == nil {
		return nil, fmt.Errorf("engine: NewReplayer needs a registry")
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{ExternalStorage: o.ExternalStorage,
		Interceptors: []interceptor.WorkerInterceptor{NewForkInterceptor()}})
	if err != nil {
		return nil, err
	}
	r.RegisterWorkflowWithOptions(TaskWorkflow(reg, o.Workflow), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	return &Replayer{r: r}, nil
}

// Replay replays one run. Its error names the task (the workflow ID) and the
// run, and says whether the code no longer matches the history
// (IsNondeterminism) or the history could not be replayed at all.
func (r *Replayer) Replay(h *historypb.History) error {
	events := h.GetEvents()
	if len(events) == 0 {
		return fmt.Errorf("replay: empty history")
	}
	started := events[0].GetWorkflowExecutionStartedEventAttributes()
	if started == nil {
		return fmt.Errorf("replay: history does not start with WorkflowExecutionStarted (event 1 is %s)", events[0].GetEventType())
	}
	if name := started.GetWorkflowType().GetName(); name != wire.TaskWorkflowName {
		return fmt.Errorf("replay: workflow type %q is not a task (%s)", name, wire.TaskWorkflowName)
	}
	// The workflow ID is the task ID, from which approval IDs derive: replay
	// under the recorded IDs, not the replayer's defaults. A continued run's
	// own run ID is not in its history; the original one stands in for it,
	// as nothing a task decides reads its run ID.
	id := started.GetWorkflowId()
	run := started.GetOriginalExecutionRunId()
	err := r.r.ReplayWorkflowHistoryWithOptions(quiet, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: run},
	})
	if err != nil {
		return fmt.Errorf("task %s run %s (%d events): %w", id, run, len(events), err)
	}
	return nil
}

// quiet drops the replayer's own logs: a failed replay is the error Replay
// returns, not a panic with its stack on standard error.
var quiet = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// ReplayFile replays the run recorded in a JSON file: Temporal's history JSON
// as `a2aflow replay --save`, `temporal workflow show --output json` and the
// Web UI's download write it.
func (r *Replayer) ReplayFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return fmt.Errorf("replay %s: not a workflow history: %w", path, err)
	}
	if err := r.Replay(h); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// IsNondeterminism reports whether err is a replay that found the code no
// longer making the decisions the history recorded: the SDK's TMPRL1100
// errors (a command missing, extra or different, an event without the
// command that caused it).
func IsNondeterminism(err error) bool {
	return err != nil && strings.Contains(err.Error(), "[TMPRL1100]")
}
