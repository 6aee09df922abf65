package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/link"
	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// runInput is the input of one run of the task workflow: the [TaskInput]
// the API (or the Temporal UI, or a schedule) starts a task with and, when
// this run continues an earlier run of the task (continue-as-new, see
// continued.go), the task's state; the fields share one JSON object.
type runInput struct {
	wire.TaskInput
	Continued *continuedTask `json:",omitempty"`
}

// taskWorkflow runs the A2A tasks of its agents: its run method is the
// workflow function of every task, registered under wire.TaskWorkflowName
// through package internal/engine (see link.go).
type taskWorkflow struct {
	agents map[string]*Agent
	opts   link.Options
}

// newTaskWorkflow returns the task workflow of agents, whose names are
// unique (engine.NewRegistry checked them).
func newTaskWorkflow(agents []*Agent, o link.Options) *taskWorkflow {
	w := &taskWorkflow{agents: map[string]*Agent{}, opts: o}
	for _, a := range agents {
		w.agents[a.Name] = a
	}
	return w
}

func (w *taskWorkflow) busyPolicy(agent string) BusyPolicy {
	if a, ok := w.agents[agent]; ok {
		return a.WhileWorking
	}
	return EnqueueMessage
}

// longTasksChange is the workflow.GetVersion change ID of continue-as-new,
// history pages, idle timeouts and the first-message grace period: histories
// recorded before them replay without them. Tasks the API starts say so in
// their input instead (wire.LongTasks) and record no marker.
const longTasksChange = "a2aflow.long-tasks"

// firstMessageGrace is how long a task started without its first message
// waits for it. Update-with-Start delivers it with the start; a start whose
// update the validator refused, or whose update was lost with no worker to
// take it, leaves a workflow that would otherwise wait forever. A workflow
// without a message is no task (the API does not show it); after the grace
// it fails with [ErrTypeNoFirstMessage], which lets a retry of the same
// first message (the same workflow ID) start it again.
const firstMessageGrace = 10 * time.Minute

// run is the workflow function of one A2A task. It returns the final task,
// whatever its terminal state (completed, failed, canceled or rejected); the
// Temporal run itself only fails on a bug. A task that continues as new
// returns a workflow.ContinueAsNewError instead (continued.go).
func (w *taskWorkflow) run(ctx workflow.Context, in runInput) (*wire.TaskSnapshot, error) {
	r := w.newRun(ctx, in.TaskInput)
	if err := r.begin(ctx, in); err != nil {
		return nil, err
	}
	if err := r.registerHandlers(ctx); err != nil {
		return nil, err
	}
	r.startWrites(ctx, in.Continued != nil) // writes.go
	agent, known := w.agents[in.Agent]
	var t *Task
	var err error
	if in.Continued != nil {
		t = r.resumeTask(ctx, in.Continued, agent, known)
	} else {
		t, err = r.startTask(ctx, in.TaskInput, agent, known)
	}
	switch {
	case err != nil:
		return nil, err
	case t == nil:
		// The task ended before its skill ran (finish recorded how).
		return r.result(), r.drain(ctx)
	}
	return r.runSkill(ctx, t)
}

// newRun returns the run of the task that in starts or continues,
// configured by the worker.
func (w *taskWorkflow) newRun(ctx workflow.Context, in wire.TaskInput) *run {
	r := &run{
		agentName: in.Agent,
		owner:     in.Owner,
		busy:      w.busyPolicy(in.Agent),
		notifier:  w.opts.Notifier,
		logger:    workflow.GetLogger(ctx),
		push:      pushState{opts: w.opts.Push},
		budget:    w.opts.RetryBudget,
		limits:    w.opts.Limits.WithDefaults(),
	}
	r.bind()
	if a, ok := w.agents[in.Agent]; ok {
		r.idleTimeout = a.IdleTimeout
	}
	return r
}

// begin sets what the run records and the task it starts from: a
// continued run's, restored from the state it carries, or a new task,
// submitted (a fork's, to replay its original).
func (r *run) begin(ctx workflow.Context, in runInput) error {
	r.recording = in.RecordingLevel()
	if in.Continued != nil {
		// A continued run is new code by definition: no version marker.
		r.recording |= wire.LongTasks
		r.restore(in.Continued)
		return nil
	}
	if !r.recording.LongTasks() && workflow.GetVersion(ctx, longTasksChange, workflow.DefaultVersion, 1) == 1 {
		r.recording |= wire.LongTasks
	}
	r.task = &a2a.Task{
		ID:        a2a.TaskID(workflow.GetInfo(ctx).WorkflowExecution.ID),
		ContextID: in.ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: ptr(workflow.Now(ctx).UTC())},
	}
	if in.Fork != nil {
		// A fork (a new input field: histories recorded before it never
		// take this path).
		return r.fork.begin(in.Fork)
	}
	return nil
}

// resumeTask returns the Task of a continued run, whose skill starts again
// from the state the run before carried, or nil when the run ended the task
// (its agent is not served here).
func (r *run) resumeTask(ctx workflow.Context, c *continuedTask, agent *Agent, known bool) *Task {
	if !known {
		r.finish(ctx, unknownAgent(r.agentName), false)
		return nil
	}
	t := &Task{r: r, agent: agent, resume: c.Skill}
	if c.Usage != nil {
		t.setTokenUsage(*c.Usage)
	}
	for _, u := range r.units() {
		u.resume(ctx)
	}
	r.showDetails(ctx) // details.go
	return t
}

// startTask takes a new task's first message (from its input, or the
// update that comes with its start) and returns its Task, working. It
// returns a nil Task when the run ended the task (canceled before its
// skill ran, its agent not served here) and an error when the workflow is
// no task.
func (r *run) startTask(ctx workflow.Context, in wire.TaskInput, agent *Agent, known bool) (*Task, error) {
	if in.Schedule != "" {
		// A run of a schedule (a new input field: histories recorded
		// before it never take this path). Its task names the schedule,
		// has the schedule's push config, and its message, the same in
		// every run, takes the task's ID as its own.
		r.task.Metadata = map[string]any{wire.ScheduleMetadataKey: in.Schedule}
		r.addPushConfig(in.PushConfig, false) // a schedule's: A2A 1.0
		if in.Message != nil {
			m := *in.Message
			m.ID = string(r.task.ID)
			in.Message = &m
		}
	}
	if in.Message != nil {
		if err := validateMessage(r.task, in.Message); err != nil {
			return nil, err
		}
		r.receive(ctx, in.Message)
		if in.Fork != nil {
			last := len(r.history.recent) - 1
			r.history.recent[last] = forkFirstMessage(r.history.recent[last], in.Fork.From)
		}
	}
	if ended, err := r.awaitFirstMessage(ctx); ended || err != nil {
		return nil, err
	}
	if !known {
		r.finish(ctx, unknownAgent(r.agentName), false)
		return nil, nil
	}
	r.first = r.take()
	t := &Task{r: r, agent: agent}
	r.setStatus(ctx, a2a.TaskStateWorking, nil)
	return t, nil
}

// awaitFirstMessage waits for the first message (it normally arrives with
// the start, through Update-with-Start) or for a cancel before anything
// ran. It reports whether the run ended instead: the task canceled
// (finish recorded it), or, with an error, no first message came.
func (r *run) awaitFirstMessage(ctx workflow.Context) (ended bool, err error) {
	ready := func() bool { return len(r.inbox) > 0 || r.cancelRequested }
	if r.recording.LongTasks() && !ready() {
		ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: firstMessageGrace,
			TimerOptions: workflow.TimerOptions{Summary: "grace for the first message: without it the workflow is no task"}}, ready)
		if err == nil && !ok {
			return true, r.noFirstMessage(ctx)
		}
		if err != nil {
			r.finish(ctx, err, true)
			return true, nil
		}
	} else if err := workflow.Await(ctx, ready); err != nil {
		r.finish(ctx, err, true)
		return true, nil
	}
	if r.cancelRequested {
		r.finish(ctx, workflow.ErrCanceled, true)
		return true, nil
	}
	return false, nil
}

// noFirstMessage ends a workflow whose first message did not come within
// firstMessageGrace: it is no task (the API does not show it), and fails
// with [wire.ErrTypeNoFirstMessage].
func (r *run) noFirstMessage(ctx workflow.Context) error {
	r.logger.Info("no first message came: the workflow ends without being a task")
	if err := workflow.UpsertTypedSearchAttributes(ctx, wire.TaskStateKey.ValueUnset()); err != nil {
		r.logger.Warn("unset task state search attribute", "error", err)
	}
	r.recording = r.recording.Without(wire.MergedWrites) // no more writes
	if err := r.drain(ctx); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("no first message came within %s: this workflow is no task", firstMessageGrace), wire.ErrTypeNoFirstMessage, nil)
}

// unknownAgent is the failure of a task whose agent this worker does not
// serve.
func unknownAgent(name string) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %q is not served by this worker", name), "UnknownAgent", nil)
}

// runSkill runs the agent's skill for t and ends the run: the task ends
// with the skill's outcome, or continues as new.
func (r *run) runSkill(ctx workflow.Context, t *Task) (*wire.TaskSnapshot, error) {
	skillCtx := wire.WithRunRecording(workflow.WithValue(ctx, taskKey{}, t), r) // package llm asks it (LocalModelCallNow)
	skillCtx = wire.WithPolicyJudge(skillCtx, r)                                // and its tool gates judge calls by the policies (policy.go)
	skillCtx, cancelSkill := workflow.WithCancel(skillCtx)
	r.cancelSkill = cancelSkill
	r.fork.afterReplay(func() { r.watchLimits(skillCtx) }) // the replay adds no event
	r.fork.deliverInputs(skillCtx)
	err := t.agent.Handle(skillCtx, t)
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

// run is the state of one task workflow execution. Every field crosses
// continue-as-new (carry and restore in continued.go, the units' own) unless
// it says `carry:"-"`: TestUnitsCarryTheirState holds that promise.
type run struct {
	task      *a2a.Task     // its History is unused: see history
	agentName string        `carry:"-"` // the next run's input
	owner     string        `carry:"-"` // the next run's input
	busy      BusyPolicy    `carry:"-"` // the agent's
	notifier  wire.Notifier `carry:"-"` // the worker's
	// usageMemo is the token usage last written to this run's memo
	// (RecordUsageMemo); a continued run writes it again at its first answer.
	usageMemo TokenUsage   `carry:"-"`
	logger    log.Logger   `carry:"-"`
	first     *a2a.Message // the message that started the task (Task.Message)
	history   historyState // the messages (history.go)
	events    []wire.Event // the latest events, at most maxEvents
	lastSeq   int64        // number of the latest event
	statusSeq int64        // number of the latest status event
	// generationClaim is the generation (lastSeq) at which the latest
	// conditional message was accepted (generation.go).
	generationClaim int64
	inbox           []*a2a.Message // received, not yet taken by the skill
	received        int            // messages received so far
	taken           int            // messages taken by the skill so far
	recentIDs       []string       // IDs of the latest user messages (continued.go)
	waiters         []*sendWaiter  `carry:"-"` // blocking SendMessage updates waiting for the skill, released when the run continues

	// The units (units.go), each a task feature with its state.
	waitpoints  waitpoints  // waitpoint.go
	approvals   approvals   // approval.go, approval_messages.go
	grants      grants      // approvals granted for the rest of the task: grants.go
	credentials credentials // credentials.go
	push        pushState   // webhooks: push.go
	delegations delegations // delegate.go
	fork        forkReplay  // a fork's replay of its original: fork.go
	budgets     budgets     // what approvers allowed beyond LLM budgets: budget.go

	// A task that is canceled or failing does not continue as new.
	cancelRequested bool                `carry:"-"`
	cancelReason    string              `carry:"-"` // the canceled status message, when not a user's cancel
	cancelSkill     workflow.CancelFunc `carry:"-"`
	failure         error               `carry:"-"` // set by failWith: the task fails with it
	interrupts      []*interruptRegion  `carry:"-"` // open Task.Interruptible regions, the skill's

	messageSeq    int          // agent messages emitted, for deterministic IDs
	artifactSeq   int          // artifacts emitted, for deterministic IDs
	artifactBytes int          // what the artifacts hold, against MaxArtifactBytes
	finalMessage  *a2a.Message // status message of the completed task, set by Task.Reply

	metrics runMetrics `carry:"-"` // what the metrics need to remember of this run (metrics.go)

	calls         []*callInFlight `carry:"-"` // the activities under way, for the current details (details.go)
	watchingCalls bool            `carry:"-"` // whether the coroutine showing the details when a call ends runs

	budget time.Duration `carry:"-"` // the worker's default RetryBudget of Task.CallAgent (delegate.go)

	extensions []string // activated by the latest message's request (Task.Extensions)

	// What the task records (wire.Recording): the run's input, with
	// wire.LongTasks when the run may continue as new and page its history
	// (continued.go; not when replaying histories recorded before), and
	// without wire.MergedWrites once it writes no more (noFirstMessage).
	recording wire.Recording `carry:"-"` // the next run's input

	// Long tasks (continued.go): when to continue as new, and whether the
	// run is doing so.
	limits      link.HistoryLimits `carry:"-"` // the worker's
	continuing  bool               `carry:"-"`
	parked      *parkedWait        `carry:"-"`       // the wait the skill was in when the last run continued as new, from the skill's state
	runs        int                `carry:"counted"` // runs of the task before this one
	updates     int                `carry:"-"`       // updates accepted in this run
	idleTimeout time.Duration      `carry:"-"`       // the agent's

	// Merged writes (wire.MergedWrites, writes.go): the A2ATaskState
	// visibility has, and the memo keys not written yet.
	visible     a2a.TaskState  `carry:"-"` // the state at the run's start: written before it continued
	memoPending map[string]any `carry:"-"` // written before the run continues
	// Lean writes (wire.LeanWrites, writes.go): the approvals' search
	// attributes waiting for the merged upsert.
	saPending []temporal.SearchAttributeUpdate `carry:"-"` // written before the run continues
	// Local model calls (wire.LocalModelCalls): the skill's LLM calls run
	// as local activities (package llm asks LocalModelCallNow), but those
	// made while an answer or a reader waits (below).
	//
	// answeredIn is the workflow task (its history length at the start)
	// in which an update last answered (a send, a decision, a waitpoint's
	// completion): a local activity started in it would hold the answer
	// back until the call ended, so the model calls made in that workflow
	// task are ordinary activities (LocalModelCallNow).
	answeredIn int64 `carry:"-"`
	answered   bool  `carry:"-"`
	// watched: the latest message came from a caller that does not wait
	// for the turn's end (a stream, a non-blocking send), who reads the
	// task while the skill works: the turn's model calls are ordinary
	// activities, since a local one holds every read until it ends.
	watched bool `carry:"-"` // a continued run starts a turn of its own
}

// answerSent notes that an update answers in the current workflow task.
func (r *run) answerSent(ctx workflow.Context) {
	r.answered, r.answeredIn = true, int64(workflow.GetInfo(ctx).GetCurrentHistoryLength())
}

// The run tells the skill's code how it records (package llm asks it).
var _ wire.RunRecording = (*run)(nil)

// Recording is the task's recording level.
func (r *run) Recording() wire.Recording { return r.recording }

// LocalModelCallNow reports whether the skill's LLM calls made now run as
// local activities: the task records them so (wire.LocalModelCalls), its
// latest message came from a caller that waits for the turn's end (a
// blocking send: a stream reads the task while the skill works, and a
// local activity holds every read, queries included, until the model
// answered), and no update answers in the current workflow task, whose
// completion carries the answer (an ordinary activity lets it complete at
// once, a local one would hold it until the model answered).
func (r *run) LocalModelCallNow(ctx workflow.Context) bool {
	return r.recording.LocalModelCalls() && !r.watched && !(r.answered && r.answeredIn == int64(workflow.GetInfo(ctx).GetCurrentHistoryLength()))
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
func (r *run) result() *wire.TaskSnapshot {
	return r.snapshot(nil)
}

// registerHandlers sets the task's own queries and updates (GetTask,
// Events, SendMessage, CancelTask), then each unit's.
func (r *run) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, wire.QueryGetTask, func(in wire.GetTaskInput) (*wire.TaskSnapshot, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return nil, err
		}
		return r.snapshot(r.sinceLength(in.HistorySince, in.HistoryLength)), nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryGetTask, err)
	}
	if err := workflow.SetQueryHandler(ctx, wire.QueryEvents, func(in wire.EventsInput) (wire.EventsOutput, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return wire.EventsOutput{}, err
		}
		return r.eventsAfter(in), nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryEvents, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateSendMessage, r.onSendMessage, workflow.UpdateHandlerOptions{
		Validator:   r.validateSendMessage,
		Description: "A2A SendMessage: add a user message to the task",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateSendMessage, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateCancelTask, r.onCancelTask, workflow.UpdateHandlerOptions{
		Validator:   r.validateCancelTask,
		Description: "A2A CancelTask: cancel the task",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateCancelTask, err)
	}
	for _, u := range r.units() {
		if err := u.register(ctx); err != nil {
			return err
		}
	}
	return nil
}

// checkAccess hides a task from the endpoints of other agents and from
// principals other than its owner. A workflow that never received a message
// is no task yet (its first message may have been refused): it is hidden too.
func (r *run) checkAccess(agent, owner string) error {
	if (agent != "" && agent != r.agentName) || (owner != "" && owner != r.owner) || (r.received == 0 && r.runs == 0) {
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", r.task.ID), wire.ErrTypeTaskNotFound)
	}
	return nil
}

// validateSendMessage is the SendMessage update's validator: the task's
// own checks, then each unit's part (units.go).
func (r *run) validateSendMessage(ctx workflow.Context, in wire.SendMessageInput) error {
	if r.approvals.foreign(in) {
		// An approver deciding on a task of another owner: the decision
		// path only (access.go).
		return r.approvals.validateForeign(ctx, in)
	}
	if err := r.checkAccessOrFirst(in.Agent, in.Owner); err != nil {
		return err
	}
	if err := r.checkGeneration(in); err != nil { // generation.go
		return err
	}
	if in.Message != nil && r.seenMessage(in.Message.ID) {
		// A retry of a message an earlier run received (Temporal recognises
		// update IDs only within one run).
		return temporal.NewApplicationError(
			fmt.Sprintf("message %s was already received by task %s", in.Message.ID, r.task.ID), wire.ErrTypeDuplicateMessage)
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is %s and accepts no more messages", r.task.ID, r.task.Status.State), wire.ErrTypeUnsupportedOperation)
	}
	if r.continuing {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is continuing as new; send the message again", r.task.ID), wire.ErrTypeContinuing)
	}
	if r.busy == RejectMessage && r.task.Status.State == a2a.TaskStateWorking {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is working and takes messages only while it waits for input; try again when it asks", r.task.ID), wire.ErrTypeUnsupportedOperation)
	}
	if err := validateMessage(r.task, in.Message); err != nil {
		return err
	}
	by := r.claimant(in)
	for _, u := range r.units() {
		if err := u.validateMessage(ctx, in, by); err != nil {
			return err
		}
	}
	return nil
}

func validateMessage(task *a2a.Task, m *a2a.Message) error {
	invalid := func(format string, args ...any) error {
		return temporal.NewApplicationError(fmt.Sprintf(format, args...), wire.ErrTypeInvalidParams)
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
		return temporal.NewApplicationError(fmt.Sprintf("task %s not found", r.task.ID), wire.ErrTypeTaskNotFound)
	}
	return nil
}

// sendResult is the result of the UpdateSendMessage update: the bounded
// [TaskUpdateResult] and, for an approver's decision on a task of another
// owner, the approval it decided (never the task: access.go).
type sendResult struct {
	wire.TaskUpdateResult
	Decision *Approval `json:"decision,omitempty"`
}

func (r *run) onSendMessage(ctx workflow.Context, in wire.SendMessageInput) (sendResult, error) {
	r.watched = in.ReturnImmediately // the turn this message starts (LocalModelCallNow)
	r.claimGeneration(in)            // generation.go: before anything that blocks
	res, err := r.sendMessage(ctx, in)
	r.answerSent(ctx)
	if err == nil && in.WantTask && res.Decision == nil {
		historyLength := in.HistoryLength
		if in.HistorySince && in.Message != nil {
			// Only sends that ask for it (new callers) take this path, so
			// recorded histories replay as they ran.
			historyLength = r.sinceLength(string(in.Message.ID), historyLength)
		}
		res.Task = r.smallSnapshot(historyLength)
	}
	return res, err
}

// sinceLength is the history length that starts at message id (included)
// when the workflow holds it among its recent messages and that is within
// limit (nil: no limit); else limit. id "" is limit.
func (r *run) sinceLength(id string, limit *int) *int {
	if id == "" {
		return limit
	}
	recent := r.history.recent
	for i := len(recent) - 1; i >= 0; i-- {
		if recent[i] != nil && string(recent[i].ID) == id {
			if n := len(recent) - i; limit == nil || n < *limit {
				return &n
			}
			return limit
		}
	}
	return limit
}

// smallSnapshot is the task as GetTask would read it, when its JSON is at
// most MaxResultTaskBytes and needs no history pages, else nil.
func (r *run) smallSnapshot(historyLength *int) *wire.TaskSnapshot {
	return r.boundedSnapshot(historyLength, wire.MaxResultTaskBytes)
}

// boundedSnapshot is smallSnapshot with at most limit bytes of JSON.
func (r *run) boundedSnapshot(historyLength *int, limit int) *wire.TaskSnapshot {
	snap := r.snapshot(historyLength)
	if len(snap.EarlierHistory) > 0 || snap.NoTask {
		return nil
	}
	b, err := json.Marshal(snap) //workflowcheck:ignore (the JSON of the same task is the same bytes)
	if err != nil || len(b) > limit {
		return nil
	}
	return snap
}

func (r *run) sendMessage(ctx workflow.Context, in wire.SendMessageInput) (sendResult, error) {
	r.updates++
	if u := r.claimant(in); u != nil {
		return u.receive(ctx, in)
	}
	res, err := r.receiveUserMessage(ctx, in)
	return sendResult{TaskUpdateResult: res}, err
}

// receiveUserMessage records a user message for the skill and, for a
// blocking send, waits until the skill took it and stopped to wait or ended.
func (r *run) receiveUserMessage(ctx workflow.Context, in wire.SendMessageInput) (wire.TaskUpdateResult, error) {
	r.addPushConfig(in.PushConfig, in.PushGeneration)
	r.extensions = in.Extensions
	waitingForApprovals := (r.approvals.waiting || r.waitpoints.waiting) && r.task.Status.State == a2a.TaskStateInputRequired
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
		return r.task.Status.State.Terminal() || (r.taken > index && wire.Interrupted(r.task.Status.State))
	}
	return r.waitFor(ctx, settled)
}

// waitFor waits, for a blocking update, until settled or until the waiter
// is released (too many waiting, or the task continues as new), and
// answers with the task's state then.
func (r *run) waitFor(ctx workflow.Context, settled func() bool) (wire.TaskUpdateResult, error) {
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
		return wire.TaskUpdateResult{}, err
	}
	return r.updateResult(settled()), nil
}

// updateResult is the bounded answer of the SendMessage and CancelTask
// updates: the API reads the task itself with a query.
func (r *run) updateResult(settled bool) wire.TaskUpdateResult {
	status := r.task.Status
	return wire.TaskUpdateResult{EventSeq: r.lastSeq, State: status.State, Settled: settled,
		Status: &status, Messages: r.history.total(), Artifacts: len(r.task.Artifacts)}
}

func (r *run) validateCancelTask(ctx workflow.Context, in wire.CancelTaskInput) error {
	// A workflow still waiting for its first message may be canceled too.
	if err := r.checkAccessOrFirst(in.Agent, in.Owner); err != nil {
		return err
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is already %s", r.task.ID, r.task.Status.State), wire.ErrTypeTaskNotCancelable)
	}
	return nil
}

func (r *run) onCancelTask(ctx workflow.Context, in wire.CancelTaskInput) (wire.TaskUpdateResult, error) {
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
	r.emit(ctx, wire.Event{Status: &a2a.TaskStatusUpdateEvent{
		TaskID: r.task.ID, ContextID: r.task.ContextID, Status: r.task.Status,
	}})
	r.statusSeq = r.lastSeq
	r.showDetails(ctx)                                // details.go
	if prev != state && !r.recording.MergedWrites() { // merged: written once per workflow task (writes.go)
		if err := workflow.UpsertTypedSearchAttributes(ctx, wire.TaskStateKey.ValueSet(string(state))); err != nil {
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
	for _, u := range r.units() {
		u.end(ctx)
	}
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
	r.flushWrites(ctx, true) // before the run ends: no pass of writes.go's coroutine may come
	r.inbox = nil
}

// drain lets running update handlers answer before the workflow completes, so
// a blocked SendMessage or CancelTask gets the final task, and lets webhooks
// get every event.
func (r *run) drain(ctx workflow.Context) error {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	return workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) && r.unitsIdle() && !r.history.storing
	})
}

// snapshot returns a copy of the task with the last historyLength messages
// (nil: all): the recent ones in Task.History, the pages holding the rest in
// EarlierHistory.
func (r *run) snapshot(historyLength *int) *wire.TaskSnapshot {
	t := *r.task
	var pages []wire.HistoryPage
	t.History, pages = r.historySnapshot(historyLength)
	t.Artifacts = append([]*a2a.Artifact(nil), r.task.Artifacts...)
	return &wire.TaskSnapshot{Task: &t, EventSeq: r.lastSeq, EarlierHistory: pages, HistoryLength: r.history.total(),
		Agent: r.agentName, Owner: r.owner, NoTask: r.received == 0 && r.runs == 0}
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
