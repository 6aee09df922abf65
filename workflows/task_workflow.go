package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TaskInput starts a task workflow. The workflow ID is the task ID.
type TaskInput struct {
	// Agent names the agent (in the worker's Registry) that serves the task.
	Agent string
	// ContextID is the A2A context the task belongs to.
	ContextID string
	// Owner is the principal that created the task ("" without auth).
	Owner string
	// Message is an optional first message, for tasks started outside the
	// API (Temporal UI, CLI, schedules). The API sends the first message with
	// the UpdateSendMessage update of Update-with-Start instead.
	Message *a2a.Message
	// LongTasks, set by the API for the tasks it starts, runs the task with
	// continue-as-new, history pages, idle timeouts and the first-message
	// grace period without asking workflow.GetVersion: its input, in the
	// history, decides, and the task records no version marker and no
	// TemporalChangeVersion search attribute (two events and one visibility
	// write fewer per task). A worker that does not know the field asks
	// GetVersion as before and gets the same behaviour; a newer one
	// replaying that history skips the marker (the SDK allows it).
	LongTasks bool `json:",omitempty"`
}

// runInput is the input of one run of the task workflow: the [TaskInput]
// the API (or the Temporal UI, or a schedule) starts a task with and, when
// this run continues an earlier run of the task (continue-as-new, see
// continued.go), the task's state; the fields share one JSON object.
type runInput struct {
	TaskInput
	Continued *ContinuedTask `json:",omitempty"`
}

// SendMessageInput is the argument of the UpdateSendMessage update.
type SendMessageInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// Message is the user's message; its ID is also the update ID, so a
	// retried request is applied once.
	Message *a2a.Message
	// ReturnImmediately returns the task as soon as the message is recorded
	// instead of waiting for it to be interrupted or terminal.
	ReturnImmediately bool
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
	// WantTask asks for the task itself in the result ([TaskUpdateResult]
	// Task), with HistoryLength applied, when it is small: a blocking
	// SendMessage then answers without a query that reads the task again.
	WantTask bool `json:",omitempty"`
	// PushConfig, when set, adds a webhook as [UpdateCreatePushConfig] does.
	PushConfig *a2a.PushConfig
	// Approver and ApproverGroups identify the sender when the message is
	// an approval decision (see approval.go): set by the API from
	// authentication, never from the message.
	Approver       string   `json:",omitempty"`
	ApproverGroups []string `json:",omitempty"`
	// Extensions are the URIs of the agent's extensions the request
	// activated (its A2A-Extensions header, checked by the API against
	// Agent.Extensions): recorded here, in history, so the skill reads them
	// deterministically ([Task.Extensions]).
	Extensions []string `json:",omitempty"`
}

// CancelTaskInput is the argument of the UpdateCancelTask update.
type CancelTaskInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
}

// GetTaskInput is the argument of the QueryGetTask query.
type GetTaskInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
}

// TaskWorkflow runs A2A tasks for the agents of a Registry. Register its Run
// method under [TaskWorkflowName]:
//
//	w.RegisterWorkflowWithOptions(workflows.NewTaskWorkflow(reg).Run,
//		workflow.RegisterOptions{Name: workflows.TaskWorkflowName})
type TaskWorkflow struct {
	agents      map[string]*Agent
	notifier    Notifier
	push        PushOptions
	retryBudget time.Duration
	limits      HistoryLimits
}

// TaskWorkflowOption configures a TaskWorkflow.
type TaskWorkflowOption func(*TaskWorkflow)

// WithNotifier hints n of every new task event (see [Notifier]), for an API
// in the same process as the worker.
func WithNotifier(n Notifier) TaskWorkflowOption {
	return func(w *TaskWorkflow) { w.notifier = n }
}

// NewTaskWorkflow returns the task workflow for the agents of reg.
func NewTaskWorkflow(reg *Registry, opts ...TaskWorkflowOption) *TaskWorkflow {
	w := &TaskWorkflow{agents: map[string]*Agent{}}
	for _, a := range reg.Agents() {
		w.agents[a.Name] = a
	}
	for _, opt := range opts {
		opt(w)
	}
	return w
}

func (w *TaskWorkflow) busyPolicy(agent string) BusyPolicy {
	if a, ok := w.agents[agent]; ok {
		return a.WhileWorking
	}
	return EnqueueMessage
}

// longTasksChange is the workflow.GetVersion change ID of continue-as-new,
// history pages, idle timeouts and the first-message grace period: histories
// recorded before them replay without them. Tasks the API starts say so in
// their input instead (TaskInput.LongTasks) and record no marker.
const longTasksChange = "a2aflow.long-tasks"

// firstMessageGrace is how long a task started without its first message
// waits for it. Update-with-Start delivers it with the start; a start whose
// update the validator refused, or whose update was lost with no worker to
// take it, leaves a workflow that would otherwise wait forever. A workflow
// without a message is no task (the API does not show it); after the grace
// it fails with [ErrTypeNoFirstMessage], which lets a retry of the same
// first message (the same workflow ID) start it again.
const firstMessageGrace = 10 * time.Minute

// ErrTypeNoFirstMessage is the error type a workflow that never received its
// first message fails with: it is no task.
const ErrTypeNoFirstMessage = "NoFirstMessage"

// Run is the workflow function of one A2A task. It returns the final task,
// whatever its terminal state (completed, failed, canceled or rejected); the
// Temporal run itself only fails on a bug. A task that continues as new
// returns a workflow.ContinueAsNewError instead (continued.go).
func (w *TaskWorkflow) Run(ctx workflow.Context, in runInput) (*TaskSnapshot, error) {
	info := workflow.GetInfo(ctx)
	r := &run{
		agentName: in.Agent,
		owner:     in.Owner,
		busy:      w.busyPolicy(in.Agent),
		notifier:  w.notifier,
		logger:    workflow.GetLogger(ctx),
		push:      pushState{opts: w.push},
		budget:    w.retryBudget,
		limits:    w.limits.withDefaults(),
	}
	if a, ok := w.agents[in.Agent]; ok {
		r.idleTimeout = a.IdleTimeout
	}
	if in.Continued != nil {
		// A continued run is new code by definition: no version marker.
		r.longTasks = true
		r.restore(in.Continued)
	} else {
		r.longTasks = in.LongTasks || workflow.GetVersion(ctx, longTasksChange, workflow.DefaultVersion, 1) == 1
		r.task = &a2a.Task{
			ID:        a2a.TaskID(info.WorkflowExecution.ID),
			ContextID: in.ContextID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: ptr(workflow.Now(ctx).UTC())},
		}
	}
	if err := r.registerHandlers(ctx); err != nil {
		return nil, err
	}
	agent, known := w.agents[in.Agent]
	var t *Task
	if c := in.Continued; c != nil {
		if !known {
			r.finish(ctx, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %q is not served by this worker", in.Agent), "UnknownAgent", nil), false)
			return r.result(), r.drain(ctx)
		}
		t = &Task{r: r, first: c.First, agent: agent, artifactBytes: c.ArtifactBytes, calls: c.Calls,
			delegations: slices.Clone(c.Delegations), resume: c.Skill}
		if c.Usage != nil {
			t.setTokenUsage(*c.Usage)
		}
		r.renotify(ctx)
	} else {
		if in.Message != nil {
			if err := validateMessage(r.task, in.Message); err != nil {
				return nil, err
			}
			r.receive(ctx, in.Message)
		}
		// Wait for the first message (it normally arrives with the start,
		// through Update-with-Start) or for a cancel before anything ran.
		ready := func() bool { return len(r.inbox) > 0 || r.cancelRequested }
		if r.longTasks && !ready() {
			ok, err := workflow.AwaitWithTimeout(ctx, firstMessageGrace, ready)
			if err == nil && !ok {
				r.logger.Info("no first message came: the workflow ends without being a task")
				if err := workflow.UpsertTypedSearchAttributes(ctx, TaskStateKey.ValueUnset()); err != nil {
					r.logger.Warn("unset task state search attribute", "error", err)
				}
				if err := r.drain(ctx); err != nil {
					return nil, err
				}
				return nil, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("no first message came within %s: this workflow is no task", firstMessageGrace), ErrTypeNoFirstMessage, nil)
			}
			if err != nil {
				r.finish(ctx, err, true)
				return r.result(), r.drain(ctx)
			}
		} else if err := workflow.Await(ctx, ready); err != nil {
			r.finish(ctx, err, true)
			return r.result(), r.drain(ctx)
		}
		if r.cancelRequested {
			r.finish(ctx, workflow.ErrCanceled, true)
			return r.result(), r.drain(ctx)
		}
		if !known {
			r.finish(ctx, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %q is not served by this worker", in.Agent), "UnknownAgent", nil), false)
			return r.result(), r.drain(ctx)
		}
		t = &Task{r: r, first: r.take(), agent: agent}
		r.setStatus(ctx, a2a.TaskStateWorking, nil)
	}

	skillCtx, cancelSkill := workflow.WithCancel(ctx)
	r.cancelSkill = cancelSkill
	r.watchLimits(skillCtx)
	err := agent.Handle(skillCtx, t)
	var continued *workflow.ContinueAsNewError
	if r.continuing && errors.As(err, &continued) {
		return nil, continued
	}
	if r.continuing {
		// The skill swallowed the continue-as-new error and ended: the
		// senders released for it learn the end from the events.
		r.logger.Warn("the skill did not return the continue-as-new error; the task ends here", "error", err)
	}
	if r.failure != nil && !r.cancelRequested {
		err = r.failure // the runtime refused something (an oversized artifact, a history limit)
	}
	r.finish(ctx, err, r.cancelRequested || ctx.Err() != nil)
	return r.result(), r.drain(ctx)
}

// run is the state of one task workflow execution.
type run struct {
	task      *a2a.Task // its History is unused: see history
	agentName string
	owner     string
	busy      BusyPolicy
	notifier  Notifier
	logger    log.Logger

	history historyState // the messages (history.go)

	events    []Event // the latest events, at most maxEvents
	lastSeq   int64   // number of the latest event
	statusSeq int64   // number of the latest status event

	inbox     []*a2a.Message // received, not yet taken by the skill
	received  int            // messages received so far
	taken     int            // messages taken by the skill so far
	recentIDs []string       // IDs of the latest user messages (continued.go)
	waiters   []*sendWaiter  // blocking SendMessage updates waiting for the skill

	approvals       approvals  // see approval.go
	waitingApproval bool       // the input-required status is the approvals'
	waitpoints      waitpoints // see waitpoint.go

	cancelRequested bool
	cancelReason    string // the canceled status message, when not a user's cancel
	cancelSkill     workflow.CancelFunc
	failure         error              // set by failWith: the task fails with it
	interrupts      []*interruptRegion // open Task.Interruptible regions

	messageSeq   int          // agent messages emitted, for deterministic IDs
	artifactSeq  int          // artifacts emitted, for deterministic IDs
	finalMessage *a2a.Message // status message of the completed task, set by Task.Reply

	push pushState // webhooks (push.go)

	metrics runMetrics // what the metrics need to remember (metrics.go)

	budget time.Duration // default RetryBudget of Task.CallAgent (delegate.go)

	extensions []string // activated by the latest message's request (Task.Extensions)

	// Long tasks (continued.go): whether this run may continue as new and
	// page its history (false when replaying histories recorded before),
	// when to, and whether it is doing so.
	longTasks   bool
	limits      HistoryLimits
	continuing  bool
	parked      *ParkedWait // the wait the skill was in when the last run continued as new
	runs        int         // runs of the task before this one
	updates     int         // updates accepted in this run
	idleTimeout time.Duration

	credentialWait *CredentialRequest // what RequireCredential waits for (credentials.go)
}

// sendWaiter is one blocking SendMessage update waiting for the skill.
type sendWaiter struct{ released bool }

// maxWaitingSends is how many blocking SendMessage updates may wait for the
// skill at once. Temporal allows 10 updates in flight per workflow; past
// this many, the oldest waiter is answered at once (unsettled: the API
// follows the task's events instead), so that new messages, cancels and
// decisions always find room.
const maxWaitingSends = 5

// result is the workflow's result: the task as it ends, with the pages of
// its earlier history.
func (r *run) result() *TaskSnapshot {
	return r.snapshot(nil)
}

func (r *run) registerHandlers(ctx workflow.Context) error {
	if err := r.registerApprovalHandlers(ctx); err != nil {
		return err
	}
	if err := r.registerWaitpointHandlers(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryGetTask, func(in GetTaskInput) (*TaskSnapshot, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return nil, err
		}
		return r.snapshot(in.HistoryLength), nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", QueryGetTask, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(in EventsInput) (EventsOutput, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return EventsOutput{}, err
		}
		return r.eventsAfter(in), nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", QueryEvents, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSendMessage, r.onSendMessage, workflow.UpdateHandlerOptions{
		Validator:   r.validateSendMessage,
		Description: "A2A SendMessage: add a user message to the task",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", UpdateSendMessage, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancelTask, r.onCancelTask, workflow.UpdateHandlerOptions{
		Validator:   r.validateCancelTask,
		Description: "A2A CancelTask: cancel the task",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", UpdateCancelTask, err)
	}
	return r.registerPush(ctx)
}

// checkAccess hides a task from the endpoints of other agents and from
// principals other than its owner. A workflow that never received a message
// is no task yet (its first message may have been refused): it is hidden too.
func (r *run) checkAccess(agent, owner string) error {
	if (agent != "" && agent != r.agentName) || (owner != "" && owner != r.owner) || (r.received == 0 && r.runs == 0) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", r.task.ID), ErrTypeTaskNotFound)
	}
	return nil
}

func (r *run) validateSendMessage(ctx workflow.Context, in SendMessageInput) error {
	if r.decisionOnly(in) {
		// An approver deciding on a task of another owner: the decision
		// path only (access.go).
		if err := r.checkAccess(in.Agent, ""); err != nil {
			return err
		}
		d, _ := r.decisionInMessage(in)
		if err := r.authorizeDecision(d, in.Owner); err != nil {
			return err
		}
		if in.PushConfig != nil {
			return temporal.NewApplicationError("a decision on a task of another owner cannot set a push notification config", ErrTypeInvalidParams)
		}
		if r.task.Status.State.Terminal() {
			return temporal.NewApplicationError(
				fmt.Sprintf("task %s is %s and accepts no more decisions", r.task.ID, r.task.Status.State), ErrTypeUnsupportedOperation)
		}
		if err := validateMessage(r.task, in.Message); err != nil {
			return err
		}
		return r.validateDecision(ctx, d)
	}
	if err := r.checkAccessOrFirst(in.Agent, in.Owner); err != nil {
		return err
	}
	if in.Message != nil && r.seenMessage(in.Message.ID) {
		// A retry of a message an earlier run received (Temporal recognises
		// update IDs only within one run).
		return temporal.NewApplicationError(
			fmt.Sprintf("message %s was already received by task %s", in.Message.ID, r.task.ID), ErrTypeDuplicateMessage)
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is %s and accepts no more messages", r.task.ID, r.task.Status.State), ErrTypeUnsupportedOperation)
	}
	if r.continuing {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is continuing as new; send the message again", r.task.ID), ErrTypeContinuing)
	}
	if r.busy == RejectMessage && r.task.Status.State == a2a.TaskStateWorking {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is working and takes messages only while it waits for input; try again when it asks", r.task.ID), ErrTypeUnsupportedOperation)
	}
	if err := validateMessage(r.task, in.Message); err != nil {
		return err
	}
	if c, ok := waitpointPart(in.Message); ok {
		// The owner completing a waitpoint (waitpoint.go).
		if err := r.validateWaitpointMessage(ctx, c); err != nil {
			return err
		}
	} else if d, ok := r.decisionInMessage(in); ok {
		// The owner's own decision: the access rule too (no self-approval).
		if err := r.authorizeDecision(d, in.Owner); err != nil {
			return err
		}
		if err := r.validateDecision(ctx, d); err != nil {
			return err
		}
	} else if err := r.validateCredentialAnswer(in.Message); err != nil {
		return err
	}
	return r.validatePushConfig(in.PushConfig)
}

func validateMessage(task *a2a.Task, m *a2a.Message) error {
	invalid := func(format string, args ...any) error {
		return temporal.NewApplicationError(fmt.Sprintf(format, args...), ErrTypeInvalidParams)
	}
	switch {
	case m == nil:
		return invalid("message is required")
	case m.ID == "":
		return invalid("message.messageId is required")
	case m.Role != a2a.MessageRoleUser:
		return invalid("message.role must be user, got %q", m.Role)
	case len(m.Parts) == 0:
		return invalid("message.parts must not be empty")
	case m.TaskID != "" && m.TaskID != task.ID:
		return invalid("message.taskId %q does not match task %q", m.TaskID, task.ID)
	case m.ContextID != "" && task.ContextID != "" && m.ContextID != task.ContextID:
		return invalid("message.contextId %q does not match the task's context %q", m.ContextID, task.ContextID)
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalid("message.parts[%d] has no content", i)
		}
	}
	return nil
}

// checkAccessOrFirst is checkAccess for a write that may be the task's
// first message.
func (r *run) checkAccessOrFirst(agent, owner string) error {
	if (agent != "" && agent != r.agentName) || (owner != "" && owner != r.owner) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", r.task.ID), ErrTypeTaskNotFound)
	}
	return nil
}

// sendResult is the result of the UpdateSendMessage update: the bounded
// [TaskUpdateResult] and, for an approver's decision on a task of another
// owner, the approval it decided (never the task: access.go).
type sendResult struct {
	TaskUpdateResult
	Decision *Approval `json:"decision,omitempty"`
}

func (r *run) onSendMessage(ctx workflow.Context, in SendMessageInput) (sendResult, error) {
	res, err := r.sendMessage(ctx, in)
	if err == nil && in.WantTask && res.Decision == nil {
		res.Task = r.smallSnapshot(in.HistoryLength)
	}
	return res, err
}

// MaxResultTaskBytes bounds the task a SendMessage result carries
// ([SendMessageInput] WantTask): a larger one is left out, and the caller
// reads it with a query. It keeps every update result in history small,
// whatever the task's age (2,000 such results are 16 MB at most).
const MaxResultTaskBytes = 8 << 10

// smallSnapshot is the task as GetTask would read it, when its JSON is at
// most MaxResultTaskBytes and needs no history pages, else nil.
func (r *run) smallSnapshot(historyLength *int) *TaskSnapshot {
	snap := r.snapshot(historyLength)
	if len(snap.EarlierHistory) > 0 || snap.NoTask {
		return nil
	}
	b, err := json.Marshal(snap) //workflowcheck:ignore (the JSON of the same task is the same bytes)
	if err != nil || len(b) > MaxResultTaskBytes {
		return nil
	}
	return snap
}

func (r *run) sendMessage(ctx workflow.Context, in SendMessageInput) (sendResult, error) {
	r.updates++
	if c, ok := waitpointPart(in.Message); ok && !r.decisionOnly(in) {
		res, err := r.onWaitpointMessage(ctx, in, c)
		return sendResult{TaskUpdateResult: res}, err
	}
	if d, ok := r.decisionInMessage(in); ok {
		return r.onDecisionMessage(ctx, in, d)
	}
	res, err := r.receiveUserMessage(ctx, in)
	return sendResult{TaskUpdateResult: res}, err
}

// receiveUserMessage records a user message for the skill and, for a
// blocking send, waits until the skill took it and stopped to wait or ended.
func (r *run) receiveUserMessage(ctx workflow.Context, in SendMessageInput) (TaskUpdateResult, error) {
	r.addPushConfig(in.PushConfig)
	r.extensions = in.Extensions
	waitingForApprovals := (r.waitingApproval || r.waitpoints.waiting) && r.task.Status.State == a2a.TaskStateInputRequired
	index := r.receive(ctx, in.Message)
	r.interruptWork()
	if in.ReturnImmediately || waitingForApprovals {
		// While the task waits for approvals, a message that decides
		// nothing is queued for the skill's next question: the task is
		// already waiting, so a blocking send answers at once.
		return r.updateResult(true), nil
	}
	// Blocking send: answer once the skill took this message and then stopped
	// to wait (input-required, auth-required) or ended. The wait survives a
	// cancellation of the workflow itself, which ends the task canceled: the
	// caller then gets that task, not an error.
	settled := func() bool {
		return r.task.Status.State.Terminal() || (r.taken > index && interrupted(r.task.Status.State))
	}
	return r.waitFor(ctx, settled)
}

// waitFor waits, for a blocking update, until settled or until the waiter
// is released (too many waiting, or the task continues as new), and
// answers with the task's state then.
func (r *run) waitFor(ctx workflow.Context, settled func() bool) (TaskUpdateResult, error) {
	if settled() {
		return r.updateResult(true), nil
	}
	w := &sendWaiter{}
	r.waiters = append(r.waiters, w)
	if len(r.waiters) > maxWaitingSends {
		r.waiters[0].released = true
		r.waiters = r.waiters[1:]
	}
	defer func() { r.waiters = slices.DeleteFunc(r.waiters, func(o *sendWaiter) bool { return o == w }) }()
	waitCtx, _ := workflow.NewDisconnectedContext(ctx)
	if err := workflow.Await(waitCtx, func() bool { return settled() || w.released || r.continuing }); err != nil {
		return TaskUpdateResult{}, err
	}
	return r.updateResult(settled()), nil
}

// updateResult is the bounded answer of the SendMessage and CancelTask
// updates: the API reads the task itself with a query.
func (r *run) updateResult(settled bool) TaskUpdateResult {
	status := r.task.Status
	return TaskUpdateResult{EventSeq: r.lastSeq, State: status.State, Settled: settled,
		Status: &status, Messages: r.history.total(), Artifacts: len(r.task.Artifacts)}
}

func (r *run) validateCancelTask(ctx workflow.Context, in CancelTaskInput) error {
	// A workflow still waiting for its first message may be canceled too.
	if err := r.checkAccessOrFirst(in.Agent, in.Owner); err != nil {
		return err
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is already %s", r.task.ID, r.task.Status.State), ErrTypeTaskNotCancelable)
	}
	return nil
}

func (r *run) onCancelTask(ctx workflow.Context, in CancelTaskInput) (TaskUpdateResult, error) {
	r.updates++
	r.cancelRequested = true
	if r.cancelSkill != nil {
		r.cancelSkill()
	}
	return r.waitFor(ctx, func() bool { return r.task.Status.State.Terminal() })
}

// receive records a user message in history and queues it for the skill. It
// returns the message's position among received messages.
func (r *run) receive(ctx workflow.Context, m *a2a.Message) int {
	stored := *m
	stored.TaskID = r.task.ID
	stored.ContextID = r.task.ContextID
	r.record(ctx, &stored)
	r.rememberMessageID(m.ID)
	r.inbox = append(r.inbox, &stored)
	r.received++
	return r.received - 1
}

// take hands the oldest queued message to the skill.
func (r *run) take() *a2a.Message {
	m := r.inbox[0]
	r.inbox[0] = nil
	r.inbox = r.inbox[1:]
	r.taken++
	return m
}

// setStatus moves the task to state with an optional agent message, which is
// also appended to history, and keeps the A2ATaskState search attribute in step.
func (r *run) setStatus(ctx workflow.Context, state a2a.TaskState, msg *a2a.Message) {
	prev, prevAt := r.task.Status.State, r.task.Status.Timestamp
	if msg != nil {
		r.record(ctx, msg)
	}
	r.task.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: ptr(workflow.Now(ctx).UTC())}
	r.countStatus(ctx, prev, prevAt, state) // metrics.go
	r.emit(ctx, Event{Status: &a2a.TaskStatusUpdateEvent{
		TaskID: r.task.ID, ContextID: r.task.ContextID, Status: r.task.Status,
	}})
	r.statusSeq = r.lastSeq
	if prev != state {
		if err := workflow.UpsertTypedSearchAttributes(ctx, TaskStateKey.ValueSet(string(state))); err != nil {
			r.logger.Warn("upsert task state search attribute", "error", err)
		}
	}
}

// agentMessage builds an agent message with a deterministic ID.
func (r *run) agentMessage(parts ...*a2a.Part) *a2a.Message {
	r.messageSeq++
	return &a2a.Message{
		ID:        fmt.Sprintf("%s-agent-%d", r.task.ID, r.messageSeq),
		Role:      a2a.MessageRoleAgent,
		TaskID:    r.task.ID,
		ContextID: r.task.ContextID,
		Parts:     parts,
	}
}

// finish moves the task to its terminal state from the handler's outcome.
func (r *run) finish(ctx workflow.Context, err error, canceled bool) {
	// The skill context may be canceled; the last writes must still happen.
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	r.cancelPendingApprovals(ctx)
	r.cancelPendingWaitpoints()
	var rejected *RejectedError
	switch {
	case canceled:
		reason := r.cancelReason
		if reason == "" {
			reason = "The task was canceled."
		}
		r.setStatus(ctx, a2a.TaskStateCanceled, r.agentMessage(a2a.NewTextPart(reason)))
	case errors.As(err, &rejected):
		r.setStatus(ctx, a2a.TaskStateRejected, r.agentMessage(a2a.NewTextPart(rejected.Reason)))
	case err != nil:
		r.setStatus(ctx, a2a.TaskStateFailed, r.agentMessage(a2a.NewTextPart(userMessage(err))))
	default:
		r.setStatus(ctx, a2a.TaskStateCompleted, r.finalMessage)
	}
	r.inbox = nil
}

// drain lets running update handlers answer before the workflow completes, so
// a blocked SendMessage or CancelTask gets the final task, and lets webhooks
// get every event.
func (r *run) drain(ctx workflow.Context) error {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	return workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) && r.pushIdle() && r.noticesIdle() && !r.history.storing
	})
}

// snapshot returns a copy of the task with the last historyLength messages
// (nil: all): the recent ones in Task.History, the pages holding the rest in
// EarlierHistory.
func (r *run) snapshot(historyLength *int) *TaskSnapshot {
	t := *r.task
	var pages []HistoryPage
	t.History, pages = r.historySnapshot(historyLength)
	t.Artifacts = append([]*a2a.Artifact(nil), r.task.Artifacts...)
	return &TaskSnapshot{Task: &t, EventSeq: r.lastSeq, EarlierHistory: pages, HistoryLength: r.history.total(),
		Agent: r.agentName, Owner: r.owner, NoTask: r.received == 0 && r.runs == 0}
}

// LastMessages applies A2A's historyLength: nil keeps all, 0 none, N the last N.
func LastMessages(history []*a2a.Message, historyLength *int) []*a2a.Message {
	if historyLength == nil {
		return append([]*a2a.Message(nil), history...)
	}
	n := *historyLength
	if n <= 0 {
		return nil
	}
	if n > len(history) {
		n = len(history)
	}
	return append([]*a2a.Message(nil), history[len(history)-n:]...)
}

func interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// userMessage is the text a failed task shows: the skill's own words with
// Temporal's activity wrapping ("activity error (type: ..., scheduledEventID:
// ...)") replaced by the activity's application error message.
func userMessage(err error) string {
	var actErr *temporal.ActivityError
	if errors.As(err, &actErr) {
		inner := actErr.Unwrap()
		var appErr *temporal.ApplicationError
		if errors.As(inner, &appErr) && appErr.Message() != "" {
			inner = errors.New(appErr.Message())
		}
		if inner != nil {
			return strings.TrimSuffix(err.Error(), actErr.Error()) + inner.Error()
		}
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Message() != "" {
		return appErr.Message()
	}
	return err.Error()
}

func ptr[T any](v T) *T { return &v }

// WorkerOptions returns the worker options the task workflow needs. Its
// deadlock detection allows DeadlockDetectionTimeout instead of the SDK's 1
// second: a task's artifacts may hold up to [MaxArtifactBytes], and turning
// tens of MiB into JSON (the workflow's result, its continue-as-new input)
// takes seconds inside the workflow's coroutine on a busy machine, which
// the SDK would otherwise take for a deadlock and retry forever.
func WorkerOptions() worker.Options {
	return worker.Options{
		DeadlockDetectionTimeout:         DeadlockDetectionTimeout,
		MaxConcurrentWorkflowTaskPollers: WorkflowTaskPollers,
		MaxConcurrentActivityTaskPollers: ActivityTaskPollers,
	}
}

// WorkflowTaskPollers and ActivityTaskPollers are the long polls of
// [WorkerOptions] (the SDK's default is 2 of each). A workflow task that
// finds no poll waiting on the server is written to the task queue's backlog
// in the database and read back: with the SDK's 2 (one of them on the sticky
// queue), 8 concurrent new tasks sent more than half of their first workflow
// tasks through that backlog on the embedded SQLite server, and none with 16.
// An idle poll is one open gRPC call.
const (
	WorkflowTaskPollers = 16
	ActivityTaskPollers = 8
)

// DeadlockDetectionTimeout is the deadlock detection of [WorkerOptions].
const DeadlockDetectionTimeout = 30 * time.Second
