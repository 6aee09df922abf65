package workflows

import (
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Current details: what the Temporal UI shows on a task's workflow page
// as it runs (workflow.SetCurrentDetails, served by the SDK's
// __temporal_workflow_metadata query; docs/guides/inspecting-runs.md).
// They are rebuilt from the run's state by showDetails, which every
// change of what the task waits for or does calls: a status change
// (setStatus: a question, approvals, waitpoints, a credential request), a
// decision, an activity scheduled or an await (the task's interceptor,
// fork.go). Setting them is no command: it records nothing and changes no
// replay. They never hold a secret: of the user's messages only the
// first line of the first, of a credential request its service and type.

// maxDetailItems bounds each list of the details (approvals, waitpoints,
// calls under way, delegations).
const maxDetailItems = 5

// callInFlight is an activity or local activity of the task under way, as
// its current details show it.
type callInFlight struct {
	summary string
	since   time.Time
	done    workflow.Future
}

// callStarted adds a call under way to the details and shows them. The
// first call starts the run's coroutine that shows them again whenever a
// call ends, the task waiting or not (an approval's notices end while it
// waits for the approvers). The coroutine changes no state but the
// details: it records nothing, and the skill's coroutines run as before.
func (r *run) callStarted(ctx workflow.Context, summary string, fut workflow.Future) {
	r.calls = append(r.calls, &callInFlight{summary: summary, since: workflow.Now(ctx).UTC(), done: fut})
	r.showDetails(ctx)
	if r.watchingCalls {
		return
	}
	r.watchingCalls = true
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	workflow.GoNamed(ctx, "a2aflow-details", func(ctx workflow.Context) {
		ended := func() bool {
			for _, c := range r.calls {
				if c.done.IsReady() {
					return true
				}
			}
			return false
		}
		for workflow.Await(ctx, ended) == nil {
			r.showEndedCalls(ctx)
		}
	})
}

// showDetails sets the run's current details from its state.
func (r *run) showDetails(ctx workflow.Context) {
	if r.task == nil {
		return
	}
	r.dropEndedCalls()
	workflow.SetCurrentDetails(ctx, r.details())
}

// showEndedCalls shows the details again when a call under way ended:
// before the skill blocks, nothing else of them changed.
func (r *run) showEndedCalls(ctx workflow.Context) {
	if r.dropEndedCalls() {
		r.showDetails(ctx)
	}
}

// dropEndedCalls drops the calls that ended from those under way and
// reports whether there were any.
func (r *run) dropEndedCalls() bool {
	kept := r.calls[:0]
	for _, c := range r.calls {
		if !c.done.IsReady() {
			kept = append(kept, c)
		}
	}
	dropped := len(kept) < len(r.calls)
	clear(r.calls[len(kept):])
	r.calls = kept
	return dropped
}

// details renders the run's current details in markdown.
func (r *run) details() string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**%s**\n\n", wire.MD(wire.TaskSummary(r.agentName, r.first), 2*wire.SummaryRunes)))
	status := r.task.Status
	b.WriteString(fmt.Sprintf("**State:** %s", stateName(status.State)))
	if status.Timestamp != nil {
		b.WriteString(fmt.Sprintf(" since %s", stamp(*status.Timestamp)))
	}
	if r.runs > 0 {
		b.WriteString(fmt.Sprintf(" (run %d of the task: it continued as new)", r.runs+1))
	}
	b.WriteString("\n")
	list(&b, "Waiting for", r.waitingFor())
	list(&b, "Doing", r.doing())
	if u, ok := r.task.Metadata[wire.UsageMetadataKey].(TokenUsage); ok && u.Calls > 0 {
		b.WriteString(fmt.Sprintf("\n**Cost so far:** %d model call(s), %d input and %d output tokens", u.Calls, u.InputTokens, u.OutputTokens))
		if u.CostUSD > 0 {
			b.WriteString(fmt.Sprintf(", %.4f USD", u.CostUSD))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// list writes a titled markdown list of at most maxDetailItems items.
func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	b.WriteString(fmt.Sprintf("\n**%s:**\n\n", title))
	for i, it := range items {
		if i == maxDetailItems {
			b.WriteString(fmt.Sprintf("- and %d more\n", len(items)-i))
			break
		}
		b.WriteString(fmt.Sprintf("- %s\n", it))
	}
}

// waitingFor lists what the task waits for: its pending approvals and
// waitpoints, a credential, the user's answer, remote tasks.
func (r *run) waitingFor() []string {
	var out []string
	for _, a := range r.approvals.list {
		if a.State == ApprovalPending {
			out = append(out, approvalDetail(a))
		}
	}
	for _, w := range r.waitpoints.list {
		if w.State == WaitpointPending {
			s := fmt.Sprintf("waitpoint %s (%s)", wire.MDCode(w.ID), wire.MD(w.Name, 60))
			if w.Deadline != nil {
				s += ", deadline " + stamp(*w.Deadline)
			}
			out = append(out, s)
		}
	}
	state := r.task.Status.State
	switch {
	case state == a2a.TaskStateAuthRequired && r.credentials.wait != nil:
		out = append(out, credentialDetail(r.credentials.wait))
	case state == a2a.TaskStateInputRequired && !r.approvals.waiting && !r.waitpoints.waiting:
		out = append(out, "the user's answer to: "+wire.MD(MessageText(r.task.Status.Message), 200))
	}
	if !state.Terminal() {
		for _, d := range r.delegations.list {
			if !d.State.Terminal() && d.TaskID != "" {
				out = append(out, fmt.Sprintf("remote agent %s, its task %s (%s)", wire.MDCode(d.Agent), wire.MDCode(string(d.TaskID)), stateName(d.State)))
			}
		}
	}
	return out
}

// approvalDetail describes a pending approval: its ID, title, the groups
// that decide it, its quorum and deadline.
func approvalDetail(a *Approval) string {
	groups := make([]string, len(a.Groups))
	for i, g := range a.Groups {
		groups[i] = wire.MDCode(g)
	}
	required, approved := max(a.Request.Required, 1), 0
	for _, d := range a.Decisions {
		if d.Approved {
			approved++
		}
	}
	s := fmt.Sprintf("approval %s \"%s\" by %s, %d of %d approval(s)", wire.MDCode(a.ID), wire.MD(a.Request.Title, 120),
		strings.Join(groups, " or "), approved, required)
	if a.Deadline != nil {
		s += ", deadline " + stamp(*a.Deadline)
	}
	if a.Escalated {
		s += " (escalated)"
	}
	return s
}

// credentialDetail describes a credential request: what it is for, never
// a secret (the task holds none).
func credentialDetail(c *wire.CredentialRequest) string {
	s := fmt.Sprintf("a credential for %s (%s)", wire.MDCode(c.Service), wire.MD(c.AuthType, 40))
	if c.Agent != "" {
		s += fmt.Sprintf(", asked by remote agent %s", wire.MDCode(c.Agent))
		if c.RemoteTask != "" {
			s += ", its task " + wire.MDCode(c.RemoteTask)
		}
	}
	return s
}

// doing lists the calls under way, by their summaries.
func (r *run) doing() []string {
	var out []string
	for _, c := range r.calls {
		out = append(out, fmt.Sprintf("%s (since %s)", wire.MD(c.summary, 200), stamp(c.since)))
	}
	return out
}

// stateName is a task state as people say it: input-required, working.
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// stamp is a time as the details show it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
