package taskservice

import (
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Origin is where a task comes from, as its static details say: a
// message sent to the agent (the zero Origin), a schedule's run, a fork
// or retry of another task.
type Origin struct {
	// Schedule is the ID of the schedule the task is a run of, and
	// ScheduleName its name, if it has one.
	Schedule, ScheduleName string
	// ForkOf is the task a fork copies, at its AtMessage-th message; Retry
	// says it is a retry of that failed task.
	ForkOf    a2a.TaskID
	AtMessage int
	Retry     bool
}

// StartUserMetadata is the static summary and details a task's workflow
// starts with, which the Temporal UI shows in its list of workflows and
// on the workflow's page (docs/guides/inspecting-runs.md): the summary is
// the agent and the first line of the first message (wire.TaskSummary);
// the details, in markdown, the agent, owner, context and where the task
// came from. A delegation from another server's task is read from the
// first message (wire.DelegatedFromKey). Neither holds more of the
// message than its first line, nor anything the message does not.
func StartUserMetadata(agent *workflows.Agent, owner, contextID string, first *a2a.Message, o Origin) (summary, details string) {
	summary = wire.TaskSummary(agent.Name, first)
	var b strings.Builder
	row := func(name, value string) { fmt.Fprintf(&b, "**%s:** %s  \n", name, value) }
	row("Agent", wire.MDCode(agent.Name))
	if owner == "" {
		row("Owner", "none (no authentication)")
	} else {
		row("Owner", wire.MDCode(owner))
	}
	if contextID == "" {
		row("Context", "none")
	} else {
		row("Context", wire.MDCode(contextID))
	}
	row("Came from", origin(o, first))
	if line := wire.FirstLine(first); line != "" {
		row("First message", wire.MD(line, 200))
	}
	return summary, strings.TrimSuffix(b.String(), "  \n")
}

// origin says in markdown where a task came from.
func origin(o Origin, first *a2a.Message) string {
	switch {
	case o.Schedule != "" && o.ScheduleName != "":
		return fmt.Sprintf("a run of schedule %s (%s)", wire.MDCode(o.Schedule), wire.MD(o.ScheduleName, 80))
	case o.Schedule != "":
		return "a run of schedule " + wire.MDCode(o.Schedule)
	case o.ForkOf != "" && o.Retry:
		return "a retry of failed task " + wire.MDCode(string(o.ForkOf))
	case o.ForkOf != "":
		return fmt.Sprintf("a fork of task %s at its message %d", wire.MDCode(string(o.ForkOf)), o.AtMessage)
	}
	if d, ok := wire.DelegatedFromOf(first); ok {
		if d.Agent != "" {
			return fmt.Sprintf("a delegation from task %s of agent %s (another server's, or this one's)", wire.MDCode(d.TaskID), wire.MDCode(d.Agent))
		}
		return fmt.Sprintf("a delegation from task %s (another server's, or this one's)", wire.MDCode(d.TaskID))
	}
	return "a message sent to the agent"
}
