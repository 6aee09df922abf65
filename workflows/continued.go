package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// Continue-as-new: a task that lives for months, or for ten thousand turns,
// outgrows one workflow run (Temporal caps a run's history at 50 MB and
// 51,200 events, and its updates at 2,000). The task then continues as new:
// the run ends and a new run of the same workflow ID (= the task ID) starts
// with the task's state as its input ([continuedTask]). Pending approvals
// with their deadlines, queued messages, webhooks and how far each got, the
// event numbering and the recent history all carry over; older messages are
// in history pages in the payload store (history.go).
//
// The skill's own progress is Go code in the middle of a function, which no
// runtime can carry. A skill that may run long says where it can be
// restarted and with what state: [Resumable] on a wait (Ask, RequireAuth,
// Approve) or [Task.Checkpoint] between two steps. The task continues as new
// only there, when Temporal suggests it (or past [HistoryLimits]); the skill
// then runs again from its start, reads its state with [Task.Resume], and
// its next wait of the same kind (and slot) picks up the wait in progress
// instead of asking again. A skill that never says so runs in one workflow
// run; should it come near Temporal's limits, the task fails with
// [ErrHistoryLimit] rather than being terminated by Temporal.

// ErrHistoryLimit is the error (wrapped) a task fails with when its run comes
// near Temporal's history limits and its skill offered no point to continue
// as new from (see [Resumable] and [Task.Checkpoint]).
var ErrHistoryLimit = errors.New("the task reached Temporal's history limit")

// continuedTask is a task's state handed from one workflow run to the next
// when the task continues as new. It is the input's [TaskInput.Continued].
type continuedTask struct {
	// Task is the task: status, metadata, artifacts and the recent history
	// (older messages are in HistoryPages).
	Task *a2a.Task `json:"task"`
	// HistoryPages are the older messages, in the payload store, oldest first.
	HistoryPages []wire.HistoryPage `json:"historyPages,omitempty"`
	// First is the message that started the task ([Task.Message]).
	First *a2a.Message `json:"first,omitempty"`
	// Inbox holds the messages received and not yet taken by the skill.
	Inbox    []*a2a.Message `json:"inbox,omitempty"`
	Received int            `json:"received"`
	Taken    int            `json:"taken"`
	// RecentMessageIDs are the IDs of the latest user messages, so a retried
	// request is recognised across runs (Temporal's own update IDs are per run).
	RecentMessageIDs []string `json:"recentMessageIds,omitempty"`

	// Events are the latest events kept for subscribers; LastSeq and
	// StatusSeq continue the numbering.
	Events    []wire.Event `json:"events,omitempty"`
	LastSeq   int64        `json:"lastSeq"`
	StatusSeq int64        `json:"statusSeq"`
	// GenerationClaim is the generation at which the latest conditional
	// message (IfGenerationMatch) was accepted (generation.go).
	GenerationClaim int64 `json:"generationClaim,omitempty"`

	MessageSeq    int              `json:"messageSeq"`
	ArtifactSeq   int              `json:"artifactSeq"`
	ArtifactBytes int              `json:"artifactBytes"`
	FinalMessage  *a2a.Message     `json:"finalMessage,omitempty"`
	Calls         int              `json:"calls"`
	Delegations   []Delegation     `json:"delegations,omitempty"`
	Usage         *TokenUsage      `json:"usage,omitempty"`
	Approvals     carriedApprovals `json:"approvals"`
	Push          []carriedPush    `json:"push,omitempty"`
	// Waitpoints are the waitpoints unit's (waitpoint.go); absent from the
	// state of runs recorded before waitpoints crossed continue-as-new.
	Waitpoints carriedWaitpoints `json:"waitpoints"`
	// Grants are the grants unit's (grants.go).
	Grants []grant `json:"grants,omitempty"`
	// Fork is the fork unit's (fork.go), for a fork only.
	Fork *carriedFork `json:"fork,omitempty"`
	// Budgets are the budgets unit's (budget.go).
	Budgets []budgetRaise `json:"budgets,omitempty"`

	// Skill is what the skill said it can be restarted from.
	Skill *skillState `json:"skill,omitempty"`
	// CredentialWait is the credential the task waits for, if any.
	CredentialWait *wire.CredentialRequest `json:"credentialWait,omitempty"`
	// Runs counts the task's workflow runs before this one.
	Runs int `json:"runs"`
	// Extensions are the extensions the latest message's request activated.
	Extensions []string `json:"extensions,omitempty"`
}

// carriedApprovals is the approvals part of a [continuedTask].
type carriedApprovals struct {
	// List holds the pending approvals and the latest settled ones
	// (maxCarriedApprovals); Count numbers the next one.
	List  []*Approval `json:"list,omitempty"`
	Count int         `json:"count"`
	// Early are decisions for approvals not requested yet, in the order
	// they came.
	Early []earlyDecision `json:"early,omitempty"`
	// Waiting says the input-required status is the approvals'.
	Waiting bool `json:"waiting,omitempty"`
	// Notices are the approval webhook notices not yet delivered.
	Notices []wire.ApprovalNotice `json:"notices,omitempty"`
}

// earlyDecision is a decision kept until the skill requests its approval.
type earlyDecision struct {
	ApprovalID string           `json:"approvalId"`
	Decision   ApprovalDecision `json:"decision"`
	// Groups are the approver's groups, checked once the request exists.
	Groups []string `json:"groups,omitempty"`
}

// carriedPush is one webhook in a [continuedTask] and how far it got.
type carriedPush struct {
	Config   *a2a.PushConfig `json:"config"`
	After    int64           `json:"after"`
	Disabled bool            `json:"disabled,omitempty"`
	// Generation: an A2A 1.1 config (pushSub.generation).
	Generation bool `json:"generation,omitempty"`
}

// skillState is the skill's side of a [continuedTask].
type skillState struct {
	// State is the value the skill gave to Resumable or Checkpoint, as JSON.
	State json.RawMessage `json:"state,omitempty"`
	// Wait is the wait the skill was in when the task continued as new,
	// picked up by its next wait of the same kind; nil after a Checkpoint.
	Wait *parkedWait `json:"wait,omitempty"`
}

// parkedWait names a wait in progress across continue-as-new.
type parkedWait struct {
	// Kind is "input", "auth", "approval" or "waitpoint".
	Kind string `json:"kind"`
	// Slot is the slot of an Ask or RequireAuth, the name of a WaitFor.
	Slot string `json:"slot,omitempty"`
	// ApprovalID is the approval an Approve waits for.
	ApprovalID string `json:"approvalId,omitempty"`
	// WaitpointID is the waitpoint a WaitFor waits for.
	WaitpointID string `json:"waitpointId,omitempty"`
}

// Wait kinds of [parkedWait].
const (
	waitInput     = "input"
	waitAuth      = "auth"
	waitApproval  = "approval"
	waitWaitpoint = "waitpoint"
)

// How much of the recent past a continued run keeps: enough for a
// subscriber that reconnects or a webhook that retries, bounded so that the
// state handed over does not grow with the task's age.
const (
	maxCarriedEvents      = 100
	maxCarriedEventBytes  = 256 << 10
	maxCarriedApprovals   = 100
	maxCarriedDelegations = 100
	maxRecentMessageIDs   = 500
)

// Resumable marks a wait (Ask, RequireAuth, Approve) as a point the skill
// can be restarted from with state: while the task waits there, it may
// continue as new, and the wait then returns an error wrapping
// [workflow.ContinueAsNewError], which the skill must return as it is (as
// it returns ctx's errors). The next run starts the skill again; it reads
// state with [Task.Resume] and, when it reaches a wait of the same kind
// (and slot), that wait goes on where the old one was: the question is not
// asked again, the approval keeps its deadline. state must marshal to JSON
// and hold everything the skill needs to get back there without repeating
// side effects (activities it ran before the wait run again otherwise).
func Resumable(state any) AskOption {
	return func(o *askOptions) { o.resumable, o.state = true, state }
}

// Checkpoint tells the runtime that the skill can be restarted from here
// with state. When the task's run has grown enough to continue as new, it
// does so now: Checkpoint returns an error wrapping
// [workflow.ContinueAsNewError], which the skill must return as it is;
// the next run starts the skill again and [Task.Resume] gives it state.
// Otherwise Checkpoint returns nil and the skill goes on. Use it in loops
// that do not wait for anyone (a wait takes [Resumable] instead).
func (t *Task) Checkpoint(ctx workflow.Context, state any) error {
	raw, err := marshalState(state)
	if err != nil {
		return err
	}
	if !t.r.continueDue(ctx) {
		return nil
	}
	return t.r.continueAsNew(ctx, t, &skillState{State: raw})
}

// Resume fills state (a pointer) with the state the skill gave to
// [Resumable] or [Task.Checkpoint] before the task continued as new, and
// reports whether there was one. A skill that supports continue-as-new
// calls it first.
func (t *Task) Resume(state any) bool {
	if t.resume == nil || len(t.resume.State) == 0 {
		return false
	}
	// Decoding the JSON the last run handed over gives the same value on
	// every replay.
	err := json.Unmarshal(t.resume.State, state) //workflowcheck:ignore
	if err != nil {
		t.r.logger.Error("resume state does not fit the skill's state type", "error", err)
		return false
	}
	return true
}

// Resumed reports whether this run continued the task from an earlier run.
func (t *Task) Resumed() bool { return t.r.runs > 0 }

// waitOptions applies a wait's options and returns them with the state
// Resumable gave, as JSON (nil without Resumable).
func waitOptions(opts []AskOption) (askOptions, json.RawMessage, error) {
	var o askOptions
	for _, opt := range opts {
		opt(&o)
	}
	if !o.resumable {
		return o, nil, nil
	}
	raw, err := marshalState(o.state)
	return o, raw, err
}

func marshalState(state any) (json.RawMessage, error) {
	// encoding/json writes map keys sorted: the bytes are deterministic.
	raw, err := json.Marshal(state) //workflowcheck:ignore
	if err != nil {
		return nil, fmt.Errorf("skill state does not marshal to JSON: %w", err)
	}
	return raw, nil
}

// continueDue reports whether the run should continue as new at the next
// resumable point.
func (r *run) continueDue(ctx workflow.Context) bool {
	if !r.recording.LongTasks() || r.cancelRequested || r.failure != nil || r.task.Status.State.Terminal() {
		return false
	}
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() ||
		info.GetCurrentHistoryLength() >= r.limits.ContinueAfterEvents ||
		info.GetCurrentHistorySize() >= r.limits.ContinueAfterBytes
}

// pastFailLimit reports whether a run that cannot continue as new must end
// now, before Temporal terminates it.
func (r *run) pastFailLimit(ctx workflow.Context) bool {
	if !r.recording.LongTasks() {
		return false
	}
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() >= r.limits.FailAfterEvents ||
		info.GetCurrentHistorySize() >= r.limits.FailAfterBytes ||
		r.updates >= r.limits.FailAfterUpdates
}

// watchLimits fails the task when its run comes near Temporal's limits, for
// skills that never reach a resumable point.
func (r *run) watchLimits(ctx workflow.Context) {
	if !r.recording.LongTasks() {
		return
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		if err := workflow.Await(ctx, func() bool { return r.task.Status.State.Terminal() || r.pastFailLimit(ctx) }); err != nil {
			return
		}
		if r.task.Status.State.Terminal() {
			return
		}
		info := workflow.GetInfo(ctx)
		r.failWith(ctx, fmt.Errorf("%w (%d events, %d bytes, %d updates in this run) and its agent's skill offers no point to continue as new from",
			ErrHistoryLimit, info.GetCurrentHistoryLength(), info.GetCurrentHistorySize(), r.updates))
	})
}

// continueAsNew ends the run and hands the task to a new run, which starts
// the skill again with skill. The returned error is what the skill must
// return (Run returns it to Temporal).
func (r *run) continueAsNew(ctx workflow.Context, t *Task, skill *skillState) error {
	// Blocking senders waiting for the skill are answered now: the API
	// follows the task's events for the rest (see TaskUpdateResult.Settled).
	r.continuing = true
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if err := workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) }); err != nil {
		return err
	}
	if r.cancelRequested {
		// A cancel came in meanwhile: the task ends here, canceled.
		r.continuing = false
		return workflow.ErrCanceled
	}
	r.flushWrites(dctx, true) // the next run starts with this run's search attributes and memo
	state := r.carry(t, skill)
	r.logger.Info("task continues as new", "run", state.Runs, "events", workflow.GetInfo(ctx).GetCurrentHistoryLength(),
		"bytes", workflow.GetInfo(ctx).GetCurrentHistorySize())
	return workflow.NewContinueAsNewError(dctx, wire.TaskWorkflowName, runInput{
		TaskInput: wire.TaskInput{Agent: r.agentName, ContextID: r.task.ContextID, Owner: r.owner, Recording: r.recording},
		Continued: state,
	})
}

// carry builds the state handed to the next run: the run's own state
// here, each unit's by its carry (units.go).
func (r *run) carry(t *Task, skill *skillState) *continuedTask {
	task := *r.task
	task.History = slices.Clone(r.history.recent)
	task.Artifacts = slices.Clone(r.task.Artifacts)
	c := &continuedTask{
		Task:             &task,
		HistoryPages:     slices.Clone(r.history.pages),
		First:            r.first,
		Inbox:            slices.Clone(r.inbox),
		Received:         r.received,
		Taken:            r.taken,
		RecentMessageIDs: slices.Clone(r.recentIDs),
		LastSeq:          r.lastSeq,
		StatusSeq:        r.statusSeq,
		GenerationClaim:  r.generationClaim,
		MessageSeq:       r.messageSeq,
		ArtifactSeq:      r.artifactSeq,
		ArtifactBytes:    r.artifactBytes,
		FinalMessage:     r.finalMessage,
		Skill:            skill,
		Runs:             r.runs + 1,
		Extensions:       slices.Clone(r.extensions),
	}
	if u := t.TokenUsage(); u != (TokenUsage{}) {
		c.Usage = &u
	}
	// The newest events, as many as fit.
	size := 0
	first := len(r.events)
	for first > 0 && len(r.events)-first < maxCarriedEvents {
		n := eventSize(r.events[first-1])
		if size+n > maxCarriedEventBytes && first < len(r.events) {
			break
		}
		size += n
		first--
	}
	c.Events = slices.Clone(r.events[first:])
	for _, u := range r.units() {
		u.carry(c)
	}
	return c
}

// restore sets up the run from the state an earlier run handed over: the
// run's own state here, each unit's by its restore.
func (r *run) restore(c *continuedTask) {
	task := *c.Task
	r.task = &task
	r.history.recent = slices.Clone(c.Task.History)
	r.history.pages = slices.Clone(c.HistoryPages)
	r.task.History = nil // the history lives in r.history
	r.first = c.First
	r.inbox = slices.Clone(c.Inbox)
	r.extensions = slices.Clone(c.Extensions)
	r.received, r.taken = c.Received, c.Taken
	r.recentIDs = slices.Clone(c.RecentMessageIDs)
	r.events = slices.Clone(c.Events)
	r.lastSeq, r.statusSeq = c.LastSeq, c.StatusSeq
	r.generationClaim = c.GenerationClaim
	r.messageSeq, r.artifactSeq = c.MessageSeq, c.ArtifactSeq
	r.artifactBytes = c.ArtifactBytes
	r.finalMessage = c.FinalMessage
	r.runs = c.Runs
	if c.Skill != nil {
		r.parked = c.Skill.Wait
	}
	for _, u := range r.units() {
		u.restore(c)
	}
}

// resumeWait reports whether a wait of kind (and slot) picks up the wait the
// skill was in when the task continued as new; it does so once.
func (r *run) resumeWait(kind, slot string) (*parkedWait, bool) {
	p := r.parked
	if p == nil || p.Kind != kind || (kind != waitApproval && p.Slot != slot) {
		return nil, false
	}
	r.parked = nil
	return p, true
}

// rememberMessageID records a user message's ID for recognising retries.
func (r *run) rememberMessageID(id string) {
	r.recentIDs = append(r.recentIDs, id)
	if len(r.recentIDs) > maxRecentMessageIDs {
		r.recentIDs = slices.Clone(r.recentIDs[len(r.recentIDs)-maxRecentMessageIDs:])
	}
}

// seenMessage reports whether a message with id was already received.
func (r *run) seenMessage(id string) bool { return slices.Contains(r.recentIDs, id) }

// eventSize estimates the bytes an event adds to the state handed over,
// from its parts' sizes: turning a large artifact into JSON just to measure
// it would cost seconds in the workflow's coroutine.
func eventSize(e wire.Event) int {
	n := 256
	var parts a2a.ContentParts
	if e.Status != nil && e.Status.Status.Message != nil {
		parts = e.Status.Status.Message.Parts
	}
	if e.Artifact != nil && e.Artifact.Artifact != nil {
		parts = append(parts, e.Artifact.Artifact.Parts...)
	}
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			n += len(c)
		case a2a.Raw:
			n += len(c) * 4 / 3
		case a2a.URL:
			n += len(c)
		default:
			n += 1024 // data parts are small as a rule; an estimate is enough
		}
	}
	return n
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return slices.Clone(s)
}
