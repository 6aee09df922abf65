package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
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
	// PushConfig, when set, adds a webhook as [UpdateCreatePushConfig] does.
	PushConfig *a2a.PushConfig
	// Approver and ApproverGroups identify the sender when the message is
	// an approval decision (see approval.go): set by the API from
	// authentication, never from the message.
	Approver       string   `json:",omitempty"`
	ApproverGroups []string `json:",omitempty"`
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
	agents      *Registry
	notifier    Notifier
	push        PushOptions
	retryBudget time.Duration
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
	w := &TaskWorkflow{agents: reg}
	for _, opt := range opts {
		opt(w)
	}
	return w
}

func (w *TaskWorkflow) busyPolicy(agent string) BusyPolicy {
	if a, ok := w.agents.Get(agent); ok {
		return a.WhileWorking
	}
	return EnqueueMessage
}

// Run is the workflow function of one A2A task. It returns the final task,
// whatever its terminal state (completed, failed, canceled or rejected); the
// Temporal run itself only fails on a bug.
func (w *TaskWorkflow) Run(ctx workflow.Context, in TaskInput) (*a2a.Task, error) {
	info := workflow.GetInfo(ctx)
	r := &run{
		task: &a2a.Task{
			ID:        a2a.TaskID(info.WorkflowExecution.ID),
			ContextID: in.ContextID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: ptr(workflow.Now(ctx).UTC())},
		},
		agentName: in.Agent,
		owner:     in.Owner,
		busy:      w.busyPolicy(in.Agent),
		notifier:  w.notifier,
		logger:    workflow.GetLogger(ctx),
		push:      pushState{opts: w.push},
		budget:    w.retryBudget,
	}
	if err := r.registerHandlers(ctx); err != nil {
		return nil, err
	}
	if in.Message != nil {
		if err := validateMessage(r.task, in.Message); err != nil {
			return nil, err
		}
		r.receive(in.Message)
	}

	// Wait for the first message (it normally arrives with the start, through
	// Update-with-Start) or for a cancel before anything ran.
	if err := workflow.Await(ctx, func() bool { return len(r.inbox) > 0 || r.cancelRequested }); err != nil {
		r.finish(ctx, err, true)
		return r.task, r.drain(ctx)
	}
	if r.cancelRequested {
		r.finish(ctx, workflow.ErrCanceled, true)
		return r.task, r.drain(ctx)
	}

	agent, ok := w.agents.Get(in.Agent)
	if !ok {
		r.finish(ctx, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %q is not served by this worker", in.Agent), "UnknownAgent", nil), false)
		return r.task, r.drain(ctx)
	}

	skillCtx, cancelSkill := workflow.WithCancel(ctx)
	r.cancelSkill = cancelSkill
	t := &Task{r: r, first: r.take(), agent: agent}
	r.setStatus(ctx, a2a.TaskStateWorking, nil)
	err := agent.Handle(skillCtx, t)
	if r.failure != nil && !r.cancelRequested {
		err = r.failure // the runtime refused something (an oversized artifact)
	}
	r.finish(ctx, err, r.cancelRequested || ctx.Err() != nil)
	return r.task, r.drain(ctx)
}

// run is the state of one task workflow execution.
type run struct {
	task      *a2a.Task
	agentName string
	owner     string
	busy      BusyPolicy
	notifier  Notifier
	logger    log.Logger

	events    []Event // the latest events, at most maxEvents
	lastSeq   int64   // number of the latest event
	statusSeq int64   // number of the latest status event

	inbox    []*a2a.Message // received, not yet taken by the skill
	received int            // messages received so far
	taken    int            // messages taken by the skill so far

	approvals       approvals // see approval.go
	waitingApproval bool      // the input-required status is the approvals'

	cancelRequested bool
	cancelSkill     workflow.CancelFunc
	failure         error              // set by failWith: the task fails with it
	interrupts      []*interruptRegion // open Task.Interruptible regions

	messageSeq   int          // agent messages emitted, for deterministic IDs
	artifactSeq  int          // artifacts emitted, for deterministic IDs
	finalMessage *a2a.Message // status message of the completed task, set by Task.Reply

	push pushState // webhooks (push.go)

	budget time.Duration // default RetryBudget of Task.CallAgent (delegate.go)
}

func (r *run) registerHandlers(ctx workflow.Context) error {
	if err := r.registerApprovalHandlers(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryGetTask, func(in GetTaskInput) (*a2a.Task, error) {
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
// principals other than its owner.
func (r *run) checkAccess(agent, owner string) error {
	if (agent != "" && agent != r.agentName) || (owner != "" && owner != r.owner) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", r.task.ID), ErrTypeTaskNotFound)
	}
	return nil
}

func (r *run) validateSendMessage(ctx workflow.Context, in SendMessageInput) error {
	owner := in.Owner
	if _, _, _, ok := decisionPart(in.Message); ok && in.Approver != "" {
		// An authenticated approver deciding by message need not own the
		// task; validateDecision checks the approver's groups instead.
		owner = ""
	}
	if err := r.checkAccess(in.Agent, owner); err != nil {
		return err
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is %s and accepts no more messages", r.task.ID, r.task.Status.State), ErrTypeUnsupportedOperation)
	}
	if r.busy == RejectMessage && r.task.Status.State == a2a.TaskStateWorking {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is working and takes messages only while it waits for input; try again when it asks", r.task.ID), ErrTypeUnsupportedOperation)
	}
	if err := validateMessage(r.task, in.Message); err != nil {
		return err
	}
	if d, ok := r.decisionInMessage(in); ok {
		if err := r.validateDecision(ctx, d); err != nil {
			return err
		}
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

func (r *run) onSendMessage(ctx workflow.Context, in SendMessageInput) (TaskSnapshot, error) {
	if d, ok := r.decisionInMessage(in); ok {
		return r.onDecisionMessage(ctx, in, d)
	}
	r.addPushConfig(in.PushConfig)
	index := r.receive(in.Message)
	r.interruptWork()
	if in.ReturnImmediately {
		return TaskSnapshot{Task: r.snapshot(in.HistoryLength), EventSeq: r.lastSeq}, nil
	}
	// Blocking send: answer once the skill took this message and then stopped
	// to wait (input-required, auth-required) or ended. The wait survives a
	// cancellation of the workflow itself, which ends the task canceled: the
	// caller then gets that task, not an error.
	waitCtx, _ := workflow.NewDisconnectedContext(ctx)
	err := workflow.Await(waitCtx, func() bool {
		return r.task.Status.State.Terminal() || (r.taken > index && interrupted(r.task.Status.State))
	})
	if err != nil {
		return TaskSnapshot{}, err
	}
	return TaskSnapshot{Task: r.snapshot(in.HistoryLength), EventSeq: r.lastSeq}, nil
}

func (r *run) validateCancelTask(ctx workflow.Context, in CancelTaskInput) error {
	if err := r.checkAccess(in.Agent, in.Owner); err != nil {
		return err
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is already %s", r.task.ID, r.task.Status.State), ErrTypeTaskNotCancelable)
	}
	return nil
}

func (r *run) onCancelTask(ctx workflow.Context, in CancelTaskInput) (*a2a.Task, error) {
	r.cancelRequested = true
	if r.cancelSkill != nil {
		r.cancelSkill()
	}
	waitCtx, _ := workflow.NewDisconnectedContext(ctx)
	if err := workflow.Await(waitCtx, func() bool { return r.task.Status.State.Terminal() }); err != nil {
		return nil, err
	}
	return r.snapshot(in.HistoryLength), nil
}

// receive records a user message in history and queues it for the skill. It
// returns the message's position among received messages.
func (r *run) receive(m *a2a.Message) int {
	stored := *m
	stored.TaskID = r.task.ID
	stored.ContextID = r.task.ContextID
	r.task.History = append(r.task.History, &stored)
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
	prev := r.task.Status.State
	if msg != nil {
		r.task.History = append(r.task.History, msg)
	}
	r.task.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: ptr(workflow.Now(ctx).UTC())}
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
	var rejected *RejectedError
	switch {
	case canceled:
		r.setStatus(ctx, a2a.TaskStateCanceled, r.agentMessage(a2a.NewTextPart("The task was canceled.")))
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
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && r.pushIdle() && r.noticesIdle() })
}

// snapshot returns a copy of the task whose history is cut to historyLength.
func (r *run) snapshot(historyLength *int) *a2a.Task {
	t := *r.task
	t.History = LastMessages(r.task.History, historyLength)
	t.Artifacts = append([]*a2a.Artifact(nil), r.task.Artifacts...)
	return &t
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
