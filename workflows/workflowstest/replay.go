package workflowstest

import (
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// Replayer replays recorded runs of tasks (their workflow histories) against
// the current code of agents. A run that replays makes the same decisions
// with the new code as it made with the code that recorded it: a task parked
// on that run resumes on the new code without breaking. A run that does not
// replay fails with an error for which [IsNondeterminism] is true, naming
// the first step that differs; such a change needs workflow.GetVersion, or
// must wait until the tasks parked on the old code have ended.
//
// Replay histories of real tasks in CI before deploying changed agent code:
// fixtures saved with `a2aflow replay --task ID --save DIR` or `a2aflow
// replay --running --save DIR` (or your program's own replay command, which
// a2aflow.Main gives it).
type Replayer struct {
	r *engine.Replayer
}

// NewReplayer returns a Replayer of agents, configured as a worker with
// default settings runs them (their idle timeouts included).
func NewReplayer(agents ...*workflows.Agent) (*Replayer, error) {
	reg, err := engine.NewRegistry(agents...)
	if err != nil {
		return nil, err
	}
	r, err := engine.NewReplayer(reg, engine.ReplayOptions{})
	if err != nil {
		return nil, err
	}
	return &Replayer{r: r}, nil
}

// ReplayFile replays the run recorded in a JSON file: Temporal's history
// JSON as `a2aflow replay --save`, `temporal workflow show --output json`
// and the Web UI's download write it. Its error names the task and the run.
func (r *Replayer) ReplayFile(path string) error { return r.r.ReplayFile(path) }

// IsNondeterminism reports whether err says that the code no longer makes
// the decisions a recorded run made.
func IsNondeterminism(err error) bool { return engine.IsNondeterminism(err) }
