// Package workflowstest runs an agent's tasks in Temporal's test environment
// (go.temporal.io/sdk/testsuite) the way a2aflow's worker and API run them:
// the task workflow with the agent's handler, the agent's own activities
// registered as the worker registers them, messages and approval decisions
// sent as the API sends them. The environment's clock jumps over waits, so a
// task that waits two days for a manager runs in milliseconds.
//
//	func TestOrder(t *testing.T) {
//		env := workflowstest.New(t, purchaseOrder())
//		env.Answer(time.Hour, "3 desks")                                           // the answer to the first question
//		env.Decide(2*time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("mia", "managers"))
//		task := env.RunText("purchase-order", "Order desks")
//		if task.Status.State != a2a.TaskStateCompleted { ... }
//	}
//
// Activities the test does not want to run for real are replaced with the
// embedded environment's OnActivity, by name.
package workflowstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TaskID is the task ID (the workflow ID) of the task an Env runs.
const TaskID a2a.TaskID = "task-1"

// DeadlockDetectionTimeout is how long a workflow task of an [Env] may run
// without yielding before the SDK calls it a deadlock: 10 s, not the SDK's
// 1 s, so that a race-detector build on a loaded machine does not fail
// honest code. Blocking calls in workflow code are still caught.
const DeadlockDetectionTimeout = 10 * time.Second

// ApprovalID is the ID of the task's n-th approval (1 for the first Approve).
func ApprovalID(n int) string { return fmt.Sprintf("%s-approval-%d", TaskID, n) }

// Env is one task of the given agents under test. Its methods schedule what
// happens while the task runs (answers, decisions, reads) at workflow times;
// Run then runs the task to its end.
type Env struct {
	*testsuite.TestWorkflowEnvironment
	t       testing.TB
	remotes map[string]func(*a2a.Message) *a2a.Task
}

// New returns an Env running the agents' tasks, their Activities
// registered, and a2aflow's approval webhook notice a no-op (as for a group
// without a webhook). Agents that cannot be served fail the test.
func New(t testing.TB, agents ...*workflows.Agent) *Env {
	t.Helper()
	reg, err := engine.NewRegistry(agents...)
	if err != nil {
		t.Fatalf("workflowstest: %v", err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	// The SDK fails a workflow task that runs for more than 1 s without
	// yielding (a deadlock). A test binary under -race on a loaded CI machine
	// can take that long for honest work; a real deadlock never yields, so a
	// longer bound still catches it.
	// The task interceptor, as a2aflow's worker has it: forks, the task's
	// current details and its calls' summaries.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: DeadlockDetectionTimeout,
		Interceptors: []interceptor.WorkerInterceptor{engine.NewForkInterceptor()}})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: string(TaskID)})
	if err := engine.RegisterActivities(env, reg.Agents()...); err != nil {
		t.Fatalf("workflowstest: %v", err)
	}
	env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
	return &Env{TestWorkflowEnvironment: env, t: t}
}

// Answer sends the user's text to the task after d of workflow time, as
// SendMessage does. An answer the task refuses fails the test.
func (e *Env) Answer(after time.Duration, text string) {
	e.AnswerMessage(after, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)))
}

// AnswerMessage sends m (any parts) to the task after d of workflow time.
func (e *Env) AnswerMessage(after time.Duration, m *a2a.Message) {
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(wire.UpdateSendMessage, m.ID, &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { e.t.Errorf("workflowstest: message %q refused: %v", workflows.MessageText(m), err) },
			OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: m, ReturnImmediately: true})
	}, after)
}

// Decision is an approver's verdict on an approval.
type Decision struct {
	Approver string
	// Groups are the approver's groups; nil means any group (no group
	// membership configured).
	Groups   []string
	Approved bool
	Comment  string
	// Arguments, for an approval, are edited arguments approved instead of
	// the proposed ones (marshaled to JSON): a gated tool call's.
	Arguments any
	// Grant, for an approval, approves the request's GrantKey for the rest
	// of the task (a gated tool's later calls).
	Grant bool
}

// Approve is the approving Decision of approver, a member of groups.
func Approve(approver string, groups ...string) Decision {
	return Decision{Approver: approver, Groups: groups, Approved: true}
}

// Reject is the rejecting Decision of approver, a member of groups.
func Reject(approver, comment string, groups ...string) Decision {
	return Decision{Approver: approver, Groups: groups, Comment: comment}
}

// Decide decides the approval approvalID after d of workflow time, as the
// approvals API does. A decision the task refuses fails the test unless
// the refusal is what the test expects: use DecideRefused.
func (e *Env) Decide(after time.Duration, approvalID string, d Decision) {
	e.decide(after, approvalID, d, func(err error) {
		e.t.Errorf("workflowstest: decision of %s on %s refused: %v", d.Approver, approvalID, err)
	})
}

// DecideRefused sends a decision the task must refuse (not an approver of
// the group, a contradicting verdict...) and passes the refusal to check.
func (e *Env) DecideRefused(after time.Duration, approvalID string, d Decision, check func(error)) {
	accepted := false
	e.decide(after, approvalID, d, check, func() { accepted = true })
	e.RegisterDelayedCallback(func() {
		if accepted {
			e.t.Errorf("workflowstest: decision of %s on %s was accepted, want it refused", d.Approver, approvalID)
		}
	}, after+time.Nanosecond)
}

func (e *Env) decide(after time.Duration, approvalID string, d Decision, onReject func(error), onAccept ...func()) {
	var args json.RawMessage
	if d.Arguments != nil {
		raw, err := json.Marshal(d.Arguments)
		if err != nil {
			e.t.Fatalf("workflowstest: decision arguments: %v", err)
		}
		args = raw
	}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(wire.UpdateDecideApproval, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {
				for _, f := range onAccept {
					f()
				}
			},
			OnReject:   onReject,
			OnComplete: func(any, error) {},
		}, wire.DecideApprovalInput{
			ApprovalID: approvalID, Approved: d.Approved, Comment: d.Comment,
			Approver: d.Approver, ApproverGroups: d.Groups, Via: "test",
			Arguments: args, Grant: d.Grant,
		})
	}, after)
}

// Look reads the task after d of workflow time, as GetTask does, and passes
// it to f.
func (e *Env) Look(after time.Duration, f func(*a2a.Task)) {
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
		var task a2a.Task
		if err == nil {
			err = v.Get(&task)
		}
		if err != nil {
			e.t.Errorf("workflowstest: read at %s: %v", after, err)
			return
		}
		f(&task)
	}, after)
}

// LookApprovals reads the task's approvals after d of workflow time, as the
// approvals API and the inbox read them (pending and decided, each with its
// request: for a gated tool call the tool, its arguments and the model's
// reason in Request.Action), and passes them to f.
func (e *Env) LookApprovals(after time.Duration, f func([]workflows.Approval)) {
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(wire.QueryApprovals, wire.Caller{})
		var list []workflows.Approval
		if err == nil {
			err = v.Get(&list)
		}
		if err != nil {
			e.t.Errorf("workflowstest: read the approvals at %s: %v", after, err)
			return
		}
		f(list)
	}, after)
}

// LookDetails reads the task's current details after d of workflow time,
// as the Temporal UI reads them (the __temporal_workflow_metadata query):
// the markdown the run keeps of what it waits for and does (see
// docs/guides/inspecting-runs.md), and passes them to f.
func (e *Env) LookDetails(after time.Duration, f func(details string)) {
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(workflowMetadataQuery)
		var md sdkpb.WorkflowMetadata
		if err == nil {
			err = v.Get(&md)
		}
		if err != nil {
			e.t.Errorf("workflowstest: read the current details at %s: %v", after, err)
			return
		}
		f(md.GetCurrentDetails())
	}, after)
}

// workflowMetadataQuery is the SDK's query of a workflow's metadata,
// which serves its current details.
const workflowMetadataQuery = "__temporal_workflow_metadata"

// RemoteAgent answers the task's calls to the remote agent name
// (Task.CallAgent) with the task answer returns for the message sent: end
// it (completed with artifacts, rejected, failed) for a call that returns at
// once. Without it a CallAgent fails with "activity not registered".
func (e *Env) RemoteAgent(name string, answer func(*a2a.Message) *a2a.Task) {
	e.remoteAgents()[name] = answer
}

// remoteAgents registers the delegation activity once and returns its
// table of answers.
func (e *Env) remoteAgents() map[string]func(*a2a.Message) *a2a.Task {
	if e.remotes == nil {
		e.remotes = map[string]func(*a2a.Message) *a2a.Task{}
		remotes := e.remotes
		e.RegisterActivityWithOptions(func(_ context.Context, in wire.RemoteSendInput) (wire.RemoteTaskResult, error) {
			answer, ok := remotes[in.Agent]
			if !ok {
				return wire.RemoteTaskResult{}, fmt.Errorf("workflowstest: no remote agent %q (Env.RemoteAgent)", in.Agent)
			}
			return wire.RemoteTaskResult{Task: answer(in.Message)}, nil
		}, activity.RegisterOptions{Name: wire.ActivitySendRemoteMessage})
	}
	return e.remotes
}

// Run starts a task of agent with the user's first message, runs it to its
// end and returns it. The task records as the API's do
// (wire.CurrentRecording).
func (e *Env) Run(agent string, first *a2a.Message) *a2a.Task {
	e.t.Helper()
	e.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: agent, Message: first, Recording: wire.CurrentRecording})
	var task a2a.Task
	err := e.GetWorkflowError()
	if err == nil {
		err = e.GetWorkflowResult(&task)
	}
	var timeout *temporal.TimeoutError
	switch {
	case !e.IsWorkflowCompleted() || errors.As(err, &timeout):
		// The environment ends a workflow blocked with nothing scheduled.
		e.t.Fatalf("workflowstest: the task of %s did not end: it still waits (for an answer or a decision the test does not send?)", agent)
	case err != nil:
		e.t.Fatalf("workflowstest: the task of %s: %v", agent, err)
	}
	return &task
}

// RunText is Run with a first message of text.
func (e *Env) RunText(agent, text string) *a2a.Task {
	e.t.Helper()
	return e.Run(agent, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)))
}
