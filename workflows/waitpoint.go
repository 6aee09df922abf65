package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Waitpoints: a skill waits for an external system (a ticket system, a CI
// run, a payment provider) to hand it a result of any shape, as ADK's
// long-running tools and Trigger.dev's waitpoint tokens do. [Task.WaitFor]
// parks the task input-required with a waitpoint ID; the result is a JSON
// payload, checked against the waitpoint's JSON Schema, that comes by
//
//   - an A2A message from the task's owner with a data part
//     {"waitpointId": ID, "payload": {...}},
//   - POST /waitpoints/{id} with the waitpoint's token (api/waitpoints.go),
//   - `a2aflow waitpoint complete ID --token T --data JSON` (the same route).
//
// Every way ends in the [UpdateCompleteWaitpoint] update, whose validator
// refuses a payload the schema does not take, and any completion of a
// waitpoint that is no longer pending, before anything reaches history.
//
// The token is never stored: it is an HMAC of the waitpoint ID under a key
// derived from the secrets key that api and worker share (wire.WaitpointTokens),
// so history, task reads, streams and webhooks never carry it, and the API
// checks a token without asking the workflow (a wrong token tells nothing
// about whether the waitpoint exists). The task's owner reads it with GET
// /waitpoints/{id}, to hand it to the system that completes the waitpoint.

// Waitpoint states.
const (
	WaitpointPending   = "pending"
	WaitpointCompleted = "completed"
	// WaitpointExpired: the deadline passed and the waitpoint fails the wait.
	WaitpointExpired = "expired"
	// WaitpointCanceled: the task ended while the waitpoint was pending.
	WaitpointCanceled = "canceled"
)

// WaitpointDeadlineAction is what a waitpoint's deadline does.
type WaitpointDeadlineAction string

const (
	// FailAtDeadline ends the wait with an error wrapping
	// [ErrWaitpointExpired] (the default).
	FailAtDeadline WaitpointDeadlineAction = "fail"
	// DefaultAtDeadline completes the waitpoint with its Default payload.
	DefaultAtDeadline WaitpointDeadlineAction = "default"
)

// ErrWaitpointExpired is returned (wrapped) by WaitFor when the waitpoint's
// deadline passes and it says FailAtDeadline.
var ErrWaitpointExpired = errors.New("the waitpoint's deadline passed")

// WaitpointRequest is what a skill waits for.
type WaitpointRequest struct {
	// Name says what is awaited, e.g. "ticket"; shown in the task's status.
	// Required.
	Name string `json:"name"`
	// Description explains it to whoever completes the waitpoint.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema (draft 2020-12 unless it says otherwise)
	// the payload must satisfy; empty takes any JSON value. It may not
	// refer to other documents.
	Schema string `json:"schema,omitempty"`
	// Timeout is how long the waitpoint waits; zero waits forever.
	Timeout time.Duration `json:"timeout,omitempty"`
	// OnTimeout says what the deadline does; default FailAtDeadline.
	OnTimeout WaitpointDeadlineAction `json:"onTimeout,omitempty"`
	// Default is the payload of DefaultAtDeadline; it must satisfy Schema.
	Default any `json:"default,omitempty"`
}

// Waitpoint is a wait for an external result and how it ended.
type Waitpoint struct {
	ID          string     `json:"id"`
	TaskID      a2a.TaskID `json:"taskId"`
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	// Schema is the JSON Schema of the payload (absent: any JSON value).
	Schema    json.RawMessage         `json:"schema,omitempty"`
	State     string                  `json:"state"`
	Created   time.Time               `json:"created"`
	Deadline  *time.Time              `json:"deadline,omitempty"`
	OnTimeout WaitpointDeadlineAction `json:"onTimeout"`
	// Payload is the result, once completed.
	Payload     json.RawMessage `json:"payload,omitempty"`
	CompletedAt *time.Time      `json:"completedAt,omitempty"`
	// CompletedBy is the authenticated caller who completed it, "token"
	// for a token holder without one, "deadline" for a default payload.
	CompletedBy string `json:"completedBy,omitempty"`
	// Via says how: "a2a", "rest", "cli" or "deadline".
	Via string `json:"via,omitempty"`

	defaultPayload json.RawMessage
	// bound says that the waitpoint's tokens are bound to it (its ID and
	// Created time, wire.WaitpointTokens): a token minted for another
	// waitpoint of the same ID does not open it. Waitpoints created before
	// tokens were bound (by code the task's history recorded) take the
	// older tokens of their ID too.
	bound bool
}

// Decode unmarshals the waitpoint's payload into v.
func (w *Waitpoint) Decode(v any) error {
	if len(w.Payload) == 0 {
		return fmt.Errorf("waitpoint %s has no payload (%s)", w.ID, w.State)
	}
	// Decoding JSON into v is a pure function of the payload.
	return json.Unmarshal(w.Payload, v) //workflowcheck:ignore
}

// waitpoints is the waitpoints unit of a run (units.go).
type waitpoints struct {
	r *run `carry:"-"`

	list    []*Waitpoint
	count   int  // waitpoints created so far, including those an earlier run no longer carries
	waiting bool // the input-required status is a waitpoint's
}

// waitpointTokensChange is the workflow.GetVersion change of tokens bound
// to their waitpoint (Waitpoint.bound): a waitpoint that a history recorded
// before it keeps taking the tokens minted for its ID alone.
const waitpointTokensChange = "a2aflow.waitpoint-bound-tokens"

// maxCarriedWaitpoints is how many settled waitpoints a continued run keeps
// (every pending one is kept), so that their records and idempotent
// answers survive continue-as-new without growing with the task's age.
const maxCarriedWaitpoints = 100

// waitpointID is the deterministic ID of a task's n-th waitpoint (from 1).
func waitpointID(task a2a.TaskID, n int) string { return fmt.Sprintf("%s-waitpoint-%d", task, n) }

// WaitFor parks the task until an external system completes a waitpoint
// with a payload that satisfies req.Schema, and returns the completed
// waitpoint (read the payload with Decode). While it waits the task is
// input-required, its status message saying what is awaited with a data
// part {"waitpointId", "name", "description", "schema", "deadline"}. At the
// deadline, the waitpoint completes with req.Default (DefaultAtDeadline) or
// WaitFor returns an error wrapping [ErrWaitpointExpired]. WaitFor returns
// the context's error when the task is canceled while waiting. A schema
// that does not compile, or a default it refuses, is the skill's bug:
// WaitFor returns an error at once.
//
// Waitpoint IDs never repeat within a task, across continue-as-new too,
// and a waitpoint's token opens that waitpoint only. With [Resumable] the
// task may continue as new while it waits (see [Resumable]): the next run's
// first WaitFor of the same name goes on waiting for the same waitpoint,
// with its deadline and token as they were.
func (t *Task) WaitFor(ctx workflow.Context, req WaitpointRequest, opts ...AskOption) (*Waitpoint, error) {
	r := t.r
	if req.Name == "" {
		return nil, errors.New("waitpoint: a name is required")
	}
	if req.OnTimeout == "" {
		req.OnTimeout = FailAtDeadline
	}
	if req.OnTimeout != FailAtDeadline && req.OnTimeout != DefaultAtDeadline {
		return nil, fmt.Errorf("waitpoint %q: OnTimeout %q is neither %q nor %q", req.Name, req.OnTimeout, FailAtDeadline, DefaultAtDeadline)
	}
	o, resumeState, err := waitOptions(opts)
	if err != nil {
		return nil, err
	}
	var w *Waitpoint
	if p, ok := r.resumeWait(waitWaitpoint, req.Name); ok {
		w = r.waitpoints.find(p.WaitpointID)
	}
	if w == nil {
		if w, err = r.waitpoints.create(ctx, req); err != nil {
			return nil, err
		}
	}

	settled := func() bool { return w.State != WaitpointPending || (o.resumable && r.continueDue(ctx)) }
	ok := true
	if w.Deadline != nil {
		summary := wire.OneLine(fmt.Sprintf("deadline of waitpoint %s (%s): %s", w.ID, w.Name, w.OnTimeout), 200)
		ok, err = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: max(w.Deadline.Sub(workflow.Now(ctx)), time.Millisecond),
			TimerOptions: workflow.TimerOptions{Summary: summary}}, settled)
	} else {
		err = workflow.Await(ctx, settled)
	}
	if err != nil {
		return nil, err
	}
	if ok && w.State == WaitpointPending {
		// The run continues as new; the waitpoint goes with it.
		return nil, r.continueAsNew(ctx, t, &skillState{State: resumeState, Wait: &parkedWait{Kind: waitWaitpoint, Slot: req.Name, WaitpointID: w.ID}})
	}
	if !ok {
		// The deadline passed with nothing completing the waitpoint.
		now := workflow.Now(ctx).UTC()
		if w.OnTimeout == DefaultAtDeadline {
			w.State, w.Payload, w.CompletedAt, w.CompletedBy, w.Via = WaitpointCompleted, w.defaultPayload, &now, "deadline", "deadline"
		} else {
			w.State = WaitpointExpired
		}
	}
	r.waitpoints.changed(ctx)
	if w.State == WaitpointExpired {
		return nil, fmt.Errorf("%w: nothing completed waitpoint %s (%s) within %s", ErrWaitpointExpired, w.ID, w.Name, req.Timeout)
	}
	out := *w
	return &out, nil
}

// create makes the task's next waitpoint for req and shows it in the
// task's status.
func (u *waitpoints) create(ctx workflow.Context, req WaitpointRequest) (*Waitpoint, error) {
	r := u.r
	var schema json.RawMessage
	if strings.TrimSpace(req.Schema) != "" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(req.Schema)); err != nil {
			return nil, fmt.Errorf("waitpoint %q: the schema is not JSON: %w", req.Name, err)
		}
		schema = buf.Bytes()
		// Compiling is a pure function of the schema.
		_, err := wire.CompileWaitpointSchema(schema) //workflowcheck:ignore
		if err != nil {
			return nil, fmt.Errorf("waitpoint %q: %w", req.Name, err)
		}
	}
	w := &Waitpoint{Name: req.Name, Description: req.Description, Schema: schema, State: WaitpointPending,
		Created: workflow.Now(ctx).UTC(), OnTimeout: req.OnTimeout}
	if req.OnTimeout == DefaultAtDeadline {
		// encoding/json writes map keys sorted: the bytes are deterministic.
		raw, err := json.Marshal(req.Default) //workflowcheck:ignore
		if err != nil {
			return nil, fmt.Errorf("waitpoint %q: the default payload is not JSON: %w", req.Name, err)
		}
		err = wire.CheckWaitpointPayload(schema, raw) //workflowcheck:ignore
		if err != nil {
			return nil, fmt.Errorf("waitpoint %q: the default payload: %w", req.Name, err)
		}
		w.defaultPayload = raw
	}
	w.bound = workflow.GetVersion(ctx, waitpointTokensChange, workflow.DefaultVersion, 1) == 1
	u.count++
	w.ID, w.TaskID = waitpointID(r.task.ID, u.count), r.task.ID
	if req.Timeout > 0 {
		w.Deadline = ptr(workflow.Now(ctx).Add(req.Timeout).UTC())
	}
	u.list = append(u.list, w)
	u.changed(ctx)
	return w, nil
}

// opens reports whether a token bound to b opens w: a token minted for w
// (its creation time), or, for a waitpoint created before tokens were
// bound, a first-version token of its ID.
func (w *Waitpoint) opens(b wire.TokenBinding) bool {
	if b.Created == 0 {
		return !w.bound
	}
	return b.Created == w.Created.UnixNano()
}

// checkToken refuses a completion by a token that does not open w; nil b
// is a completion without a token (the task's owner, checked before).
func (w *Waitpoint) checkToken(b *wire.TokenBinding) error {
	if b == nil || w.opens(*b) {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("the token does not open waitpoint %s", w.ID), wire.ErrTypeWaitpointTokenRefused)
}

func (u *waitpoints) find(id string) *Waitpoint {
	for _, w := range u.list {
		if w.ID == id {
			return w
		}
	}
	return nil
}

// register sets the waitpoints query and completion update.
func (u *waitpoints) register(ctx workflow.Context) error {
	r := u.r
	if err := workflow.SetQueryHandler(ctx, wire.QueryWaitpoints, func(in wire.WaitpointsQuery) ([]Waitpoint, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return nil, err
		}
		out := make([]Waitpoint, 0, len(u.list))
		for _, w := range u.list {
			if in.Token == nil || (w.ID == in.Token.WaitpointID && w.opens(*in.Token)) {
				out = append(out, *w)
			}
		}
		return out, nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryWaitpoints, err)
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateCompleteWaitpoint,
		func(ctx workflow.Context, in wire.CompleteWaitpointInput) (Waitpoint, error) {
			r.updates++
			defer r.answerSent(ctx)
			return r.completeWaitpoint(ctx, in)
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, in wire.CompleteWaitpointInput) error {
				if err := r.checkAccess(in.Agent, in.Owner); err != nil {
					return err
				}
				return r.validateWaitpointCompletion(ctx, in)
			},
			Description: "complete a pending waitpoint with the external system's payload",
		})
}

// validateWaitpointCompletion refuses, before anything reaches history, a
// completion of an unknown or settled waitpoint, or with a payload its
// schema refuses.
func (r *run) validateWaitpointCompletion(ctx workflow.Context, in wire.CompleteWaitpointInput) error {
	w := r.waitpoints.find(in.WaitpointID)
	if w == nil {
		return temporal.NewApplicationError(fmt.Sprintf("waitpoint %s not found", in.WaitpointID), wire.ErrTypeWaitpointNotFound)
	}
	if err := w.checkToken(in.Token); err != nil {
		return err
	}
	if err := r.waitpointOpen(ctx, w); err != nil {
		return err
	}
	// Validators run on new updates only, never on replay; the check is a
	// pure function of the schema and the payload.
	err := wire.CheckWaitpointPayload(w.Schema, in.Payload) //workflowcheck:ignore
	if err != nil {
		return temporal.NewApplicationError(fmt.Sprintf("waitpoint %s: %v", w.ID, err), wire.ErrTypeInvalidParams)
	}
	return nil
}

// waitpointOpen refuses a waitpoint that no longer takes a completion.
func (r *run) waitpointOpen(ctx workflow.Context, w *Waitpoint) error {
	switch {
	case w.State == WaitpointCompleted:
		return temporal.NewApplicationError(fmt.Sprintf("waitpoint %s was already completed by %s via %s at %s",
			w.ID, w.CompletedBy, w.Via, w.CompletedAt.Format(time.RFC3339)), wire.ErrTypeWaitpointSettled)
	case w.State != WaitpointPending:
		return temporal.NewApplicationError(fmt.Sprintf("waitpoint %s is %s", w.ID, w.State), wire.ErrTypeWaitpointSettled)
	case w.Deadline != nil && !workflow.Now(ctx).Before(*w.Deadline):
		return temporal.NewApplicationError(fmt.Sprintf("waitpoint %s passed its deadline at %s", w.ID, w.Deadline.Format(time.RFC3339)), wire.ErrTypeWaitpointSettled)
	}
	return nil
}

// completeWaitpoint applies a validated completion. Validation ran against
// the same state in the same workflow task, so of two racing completions
// the first wins and the other is refused here.
func (r *run) completeWaitpoint(ctx workflow.Context, in wire.CompleteWaitpointInput) (Waitpoint, error) {
	w := r.waitpoints.find(in.WaitpointID)
	if w == nil {
		return Waitpoint{}, temporal.NewApplicationError(fmt.Sprintf("waitpoint %s not found", in.WaitpointID), wire.ErrTypeWaitpointNotFound)
	}
	if err := w.checkToken(in.Token); err != nil {
		return Waitpoint{}, err
	}
	if err := r.waitpointOpen(ctx, w); err != nil {
		return Waitpoint{}, err
	}
	now := workflow.Now(ctx).UTC()
	by := in.By
	if by == "" {
		by = "token"
	}
	w.State, w.Payload, w.CompletedAt, w.CompletedBy, w.Via = WaitpointCompleted, in.Payload, &now, by, in.Via
	return *w, nil
}

// cancelPendingWaitpoints settles the waitpoints still pending when the task
// ends, so that a late completion is refused.
func (u *waitpoints) end(workflow.Context) {
	for _, w := range u.list {
		if w.State == WaitpointPending {
			w.State, w.Deadline = WaitpointCanceled, nil
		}
	}
}

// waitpointsChanged keeps the task's status in step with its pending
// waitpoints: input-required with what is awaited while any is, working
// again once none is (unless something else took the status since).
func (u *waitpoints) changed(ctx workflow.Context) {
	r := u.r
	var pending []*Waitpoint
	for _, w := range r.waitpoints.list {
		if w.State == WaitpointPending {
			pending = append(pending, w)
		}
	}
	if len(pending) == 0 {
		if r.waitpoints.waiting && r.task.Status.State == a2a.TaskStateInputRequired {
			r.waitpoints.waiting = false
			r.setStatus(ctx, a2a.TaskStateWorking, nil)
		}
		return
	}
	var names []string
	parts := a2a.ContentParts{nil}
	for _, w := range pending {
		names = append(names, w.Name)
		data := map[string]any{"waitpointId": w.ID, "name": w.Name}
		if w.Description != "" {
			data["description"] = w.Description
		}
		if len(w.Schema) > 0 {
			data["schema"] = w.Schema
		}
		if w.Deadline != nil {
			data["deadline"] = w.Deadline.Format(time.RFC3339)
		}
		p := a2a.NewDataPart(data)
		p.MediaType = "application/json"
		parts = append(parts, p)
	}
	parts[0] = a2a.NewTextPart(fmt.Sprintf("Waiting for %s: complete with POST /waitpoints/{waitpointId} and the waitpoint's token, "+
		"or a message with a data part {\"waitpointId\": ..., \"payload\": ...}.", strings.Join(names, ", ")))
	r.waitpoints.waiting = true
	r.setStatus(ctx, a2a.TaskStateInputRequired, r.agentMessage(parts...))
}

// waitpointPart returns the completion a message carries in a data part
// {"waitpointId": ..., "payload": ...}.
func waitpointPart(m *a2a.Message) (wire.CompleteWaitpointInput, bool) {
	if m == nil {
		return wire.CompleteWaitpointInput{}, false
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		data, isMap := p.Data().(map[string]any)
		if !isMap {
			continue
		}
		id, _ := data["waitpointId"].(string)
		payload, has := data["payload"]
		if id == "" || !has {
			continue
		}
		// encoding/json writes map keys sorted: the bytes are deterministic.
		raw, err := json.Marshal(payload) //workflowcheck:ignore
		if err != nil {
			continue
		}
		return wire.CompleteWaitpointInput{WaitpointID: id, Payload: raw, Via: "a2a"}, true
	}
	return wire.CompleteWaitpointInput{}, false
}

// validateWaitpointMessage checks a message completing a waitpoint (its
// sender is the task's owner: checked before). The same payload sent again
// to a completed waitpoint is taken (and changes nothing); anything else
// the waitpoint no longer takes is invalid.
func (r *run) validateWaitpointMessage(ctx workflow.Context, in wire.CompleteWaitpointInput) error {
	err := r.validateWaitpointCompletion(ctx, in)
	var appErr *temporal.ApplicationError
	if err == nil || !errors.As(err, &appErr) {
		return err
	}
	switch appErr.Type() {
	case wire.ErrTypeWaitpointSettled:
		w := r.waitpoints.find(in.WaitpointID)
		same := w != nil && w.State == WaitpointCompleted && wire.SameWaitpointPayload(w.Payload, in.Payload) //workflowcheck:ignore
		if same {
			return nil
		}
		return temporal.NewApplicationError(appErr.Message()+"; it takes no other payload", wire.ErrTypeInvalidParams)
	case wire.ErrTypeWaitpointNotFound:
		return temporal.NewApplicationError(appErr.Message(), wire.ErrTypeInvalidParams)
	}
	return err
}

// onWaitpointMessage records the message in history, completes the
// waitpoint (unless the message repeats its payload) and, for a blocking
// send, answers once the task is interrupted again or ends.
func (r *run) onWaitpointMessage(ctx workflow.Context, in wire.SendMessageInput, c wire.CompleteWaitpointInput) (wire.TaskUpdateResult, error) {
	stored := *in.Message
	stored.TaskID, stored.ContextID = r.task.ID, r.task.ContextID
	r.record(ctx, &stored)
	r.rememberMessageID(in.Message.ID)
	r.addPushConfig(in.PushConfig, in.PushGeneration)
	if w := r.waitpoints.find(c.WaitpointID); w != nil && w.State == WaitpointPending {
		c.By = in.Owner
		if c.By == "" {
			c.By = "owner"
		}
		if _, err := r.completeWaitpoint(ctx, c); err != nil {
			return wire.TaskUpdateResult{}, err
		}
	}
	after := r.lastSeq
	if in.ReturnImmediately {
		return r.updateResult(true), nil
	}
	return r.waitFor(ctx, func() bool {
		return r.task.Status.State.Terminal() || (r.statusSeq > after && wire.Interrupted(r.task.Status.State))
	})
}

var _ unit = (*waitpoints)(nil)

// claims: a data part {"waitpointId": ..., "payload": ...} from the task's
// owner (an approver's decision on another owner's task goes to approvals).
func (u *waitpoints) claims(in wire.SendMessageInput) bool {
	_, ok := waitpointPart(in.Message)
	return ok && !u.r.approvals.foreign(in)
}

func (u *waitpoints) validateMessage(ctx workflow.Context, in wire.SendMessageInput, by unit) error {
	if by != unit(u) {
		return nil
	}
	c, _ := waitpointPart(in.Message)
	return u.r.validateWaitpointMessage(ctx, c)
}

func (u *waitpoints) receive(ctx workflow.Context, in wire.SendMessageInput) (sendResult, error) {
	c, _ := waitpointPart(in.Message)
	res, err := u.r.onWaitpointMessage(ctx, in, c)
	return sendResult{TaskUpdateResult: res}, err
}

// carriedWaitpoint is a waitpoint as a run hands it to the next: the
// record and what the record does not show.
type carriedWaitpoint struct {
	Waitpoint
	Default json.RawMessage `json:"default,omitempty"`
	Bound   bool            `json:"bound,omitempty"`
}

// carriedWaitpoints is the waitpoints unit's part of a continuedTask.
type carriedWaitpoints struct {
	// List holds the pending waitpoints and the latest settled ones
	// (maxCarriedWaitpoints); Count numbers the next one.
	List    []carriedWaitpoint `json:"list,omitempty"`
	Count   int                `json:"count"`
	Waiting bool               `json:"waiting,omitempty"`
}

// carry hands over every pending waitpoint and the latest settled ones,
// and the count that numbers the next: IDs never repeat within a task, and
// a completed waitpoint's record and idempotent answer outlive the run.
func (u *waitpoints) carry(c *continuedTask) {
	c.Waitpoints = carriedWaitpoints{Count: u.count, Waiting: u.waiting}
	settled := 0
	for i := len(u.list) - 1; i >= 0; i-- {
		w := u.list[i]
		if w.State == WaitpointPending || settled < maxCarriedWaitpoints {
			if w.State != WaitpointPending {
				settled++
			}
			c.Waitpoints.List = append(c.Waitpoints.List, carriedWaitpoint{Waitpoint: *w, Default: w.defaultPayload, Bound: w.bound})
		}
	}
	slices.Reverse(c.Waitpoints.List)
}

func (u *waitpoints) restore(c *continuedTask) {
	u.count, u.waiting = c.Waitpoints.Count, c.Waitpoints.Waiting
	u.list = nil
	for _, cw := range c.Waitpoints.List {
		w := cw.Waitpoint
		w.defaultPayload, w.bound = cw.Default, cw.Bound
		u.list = append(u.list, &w)
	}
}

func (u *waitpoints) resume(workflow.Context) {}

func (u *waitpoints) idle() bool { return true }
