package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// Task is a skill handler's view of its A2A task. Its methods are workflow
// code: call them from the handler's goroutine (or workflow.Go), never from a
// real goroutine.
type Task struct {
	r     *run
	agent *Agent

	resume *skillState // what an earlier run handed over (continued.go)
}

// taskKey keys the Task in its handler's workflow context.
type taskKey struct{}

// TaskFrom returns the task whose handler ctx, or a context derived from it
// (workflow.Go, workflow.WithCancel...), belongs to: what a helper the
// handler calls (an LLM tool gated by an approval, say) needs to ask the
// user or a person without being handed the task.
func TaskFrom(ctx workflow.Context) (*Task, bool) {
	t, ok := ctx.Value(taskKey{}).(*Task)
	return t, ok && t != nil
}

// ErrAskTimeout is returned (wrapped) by Ask when its timeout passes without an answer.
var ErrAskTimeout = errors.New("no answer came in time")

// RejectedError ends a task in the rejected state; return it with [Reject].
type RejectedError struct {
	// Reason is shown to the user as the task's status message.
	Reason string
}

// Error implements error.
func (e *RejectedError) Error() string { return "rejected: " + e.Reason }

// Reject returns the error that ends a task rejected with reason, for a
// request the agent will not do (as opposed to one it failed at).
func Reject(reason string) error { return &RejectedError{Reason: reason} }

// ID returns the task ID, which is also the workflow ID.
func (t *Task) ID() a2a.TaskID { return t.r.task.ID }

// ContextID returns the task's context ID.
func (t *Task) ContextID() string { return t.r.task.ContextID }

// Agent returns the agent running the task.
func (t *Task) Agent() *Agent { return t.agent }

// Message returns the message that started the task.
func (t *Task) Message() *a2a.Message { return t.r.first }

// Extensions returns the URIs of the agent's extensions (Agent.Extensions)
// that the caller activated with the request of its latest message to the
// task, in the order the agent declares them. They are part of that
// message's update in history, so the skill reads the same set on replay.
func (t *Task) Extensions() []string { return slices.Clone(t.r.extensions) }

// ExtensionActive reports whether the caller activated extension uri with
// its latest message (see [Task.Extensions]).
func (t *Task) ExtensionActive(uri string) bool { return slices.Contains(t.r.extensions, uri) }

// Text returns the text parts of the message that started the task.
func (t *Task) Text() string { return MessageText(t.r.first) }

// ReferenceTaskIDs returns the tasks the first message refers to (A2A
// referenceTaskIds), e.g. the task a refinement builds on.
func (t *Task) ReferenceTaskIDs() []a2a.TaskID { return t.r.first.ReferenceTasks }

// AskOption changes how Ask waits.
type AskOption func(*askOptions)

type askOptions struct {
	timeout   time.Duration
	resumable bool // see Resumable
	state     any
}

// WithTimeout makes Ask give up after d with an error wrapping [ErrAskTimeout].
func WithTimeout(d time.Duration) AskOption { return func(o *askOptions) { o.timeout = d } }

// Ask asks the user a question and returns their answer. The task is
// input-required with prompt as its status message (the slot name in the
// message metadata under "slot") until the user's next message arrives, for
// seconds or weeks, across restarts; then it is working again. A message the
// user sent while the task was working answers at once. Ask returns the
// context's error when the task is canceled while waiting.
func (t *Task) Ask(ctx workflow.Context, slot, prompt string, opts ...AskOption) (*a2a.Message, error) {
	return t.wait(ctx, a2a.TaskStateInputRequired, slot, prompt, opts)
}

// RequireAuth is [Task.RequireCredential] for a credential of scheme (its
// service and auth type), returning the user's answer as recorded: a
// message whose data part holds the credential's reference, never the
// secret (see credentials.go).
func (t *Task) RequireAuth(ctx workflow.Context, scheme, prompt string, opts ...AskOption) (*a2a.Message, error) {
	req := wire.CredentialRequest{Service: scheme, AuthType: scheme, Prompt: prompt}
	t.r.credentials.wait = &req
	defer func() { t.r.credentials.wait = nil }()
	return t.waitWith(ctx, a2a.TaskStateAuthRequired, scheme, prompt, credentialRequestPart(req), opts)
}

func (t *Task) wait(ctx workflow.Context, state a2a.TaskState, slot, prompt string, opts []AskOption) (*a2a.Message, error) {
	return t.waitWith(ctx, state, slot, prompt, nil, opts)
}

// waitWith asks prompt (with extra, a data part, when not nil) and waits
// for the user's next message in state.
func (t *Task) waitWith(ctx workflow.Context, state a2a.TaskState, slot, prompt string, extra *a2a.Part, opts []AskOption) (*a2a.Message, error) {
	o, resumeState, err := waitOptions(opts)
	if err != nil {
		return nil, err
	}
	r := t.r
	kind := waitInput
	if state == a2a.TaskStateAuthRequired {
		kind = waitAuth
	}
	if _, resumed := r.resumeWait(kind, slot); resumed && r.task.Status.State == state {
		// The question was asked before the task continued as new, and is
		// still the task's status: wait for its answer without asking again.
	} else {
		question := r.agentMessage(a2a.NewTextPart(prompt))
		if extra != nil {
			question.Parts = append(question.Parts, extra)
		}
		if slot != "" {
			question.Metadata = map[string]any{"slot": slot}
		}
		if len(r.inbox) > 0 {
			// A message sent while the task was working answers at once: the
			// question goes into history, the task never looks interrupted.
			r.record(ctx, question)
			return r.take(), nil
		}
		r.setStatus(ctx, state, question)
	}
	continueHere := func() bool { return o.resumable && r.continueDue(ctx) }
	ready := func() bool { return len(r.inbox) > 0 || continueHere() }
	// The wait ends with an answer, the Ask's own timeout (the question is
	// withdrawn) or the agent's idle timeout (the task is canceled).
	timeout, idle := o.timeout, false
	if r.recording.LongTasks() && r.idleTimeout > 0 && (timeout <= 0 || r.idleTimeout < timeout) {
		timeout, idle = r.idleTimeout, true
	}
	if timeout > 0 {
		summary := fmt.Sprintf("answer to %s due (the question is withdrawn after %s)", orDefault(slot, "the question"), timeout)
		if idle {
			summary = fmt.Sprintf("idle timeout: the task is canceled after %s without an answer", timeout)
		}
		ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: timeout, TimerOptions: workflow.TimerOptions{Summary: summary}}, ready)
		if err != nil {
			return nil, err
		}
		if !ok && idle {
			r.cancelReason = fmt.Sprintf("No answer came for %s: the task was canceled.", timeout)
			r.cancelRequested = true
			if r.cancelSkill != nil {
				r.cancelSkill()
			}
			return nil, fmt.Errorf("%w: no answer for %s (slot %s)", workflow.ErrCanceled, timeout, slot)
		}
		if !ok {
			// The question is withdrawn: the task works on (or ends) without it.
			r.setStatus(ctx, a2a.TaskStateWorking, nil)
			return nil, fmt.Errorf("%w (%s, waited %s)", ErrAskTimeout, slot, o.timeout)
		}
	} else if err := workflow.Await(ctx, ready); err != nil {
		return nil, err
	}
	if len(r.inbox) == 0 {
		// Nothing came and the run is due to continue as new: the skill
		// returns the error and starts again in the next run, where its
		// wait picks up this one.
		return nil, r.continueAsNew(ctx, t, &skillState{State: resumeState, Wait: &parkedWait{Kind: kind, Slot: slot}})
	}
	answer := r.take()
	r.setStatus(ctx, a2a.TaskStateWorking, nil)
	return answer, nil
}

// Interruptible returns a child of ctx for work that a user's message may
// cut short, and done, which ends that work's region: call it once the work
// in the child has ended (it cancels the child, so call it after, not
// during). done reports whether a message interrupted the work; calling it
// again reports the same.
//
// Under the agent's [InterruptWork] policy, a message that arrives while the
// task is working cancels the child context of every open region: an
// activity executed in it is canceled and its Get returns a canceled error
// (temporal.IsCanceledError), as do workflow.Sleep and workflow.Await. The
// message itself is queued as under [EnqueueMessage], so the skill's next
// [Task.Ask] returns it at once: the skill checks done(), or
// temporal.IsCanceledError(err) with ctx.Err() == nil, and asks. A region
// opened while a message is already queued starts canceled, as that
// message came after the work was asked for. Work outside a region is never
// interrupted, and under the other policies a region is canceled only with
// ctx (the task's cancellation).
//
//	work, done := t.Interruptible(ctx)
//	err := workflow.ExecuteActivity(work, research, topic).Get(work, &notes)
//	if done() {
//		msg, err := t.Ask(ctx, "followup", "Stopped: what now?") // the message that interrupted
//		...
//	}
func (t *Task) Interruptible(ctx workflow.Context) (workflow.Context, func() bool) {
	r := t.r
	child, cancel := workflow.WithCancel(ctx)
	reg := &interruptRegion{cancel: cancel}
	r.interrupts = append(r.interrupts, reg)
	if r.busy == InterruptWork && len(r.inbox) > 0 {
		reg.interrupted = true
		cancel()
	}
	return child, func() bool {
		for i, open := range r.interrupts {
			if open == reg {
				r.interrupts = append(r.interrupts[:i:i], r.interrupts[i+1:]...)
				break
			}
		}
		cancel()
		return reg.interrupted
	}
}

// interruptRegion is one open [Task.Interruptible] region.
type interruptRegion struct {
	cancel      workflow.CancelFunc
	interrupted bool
}

// interruptWork cancels the open interruptible regions when the agent's
// policy is InterruptWork and the task is working: a message just arrived.
func (r *run) interruptWork() {
	if r.busy != InterruptWork || r.task.Status.State != a2a.TaskStateWorking {
		return
	}
	for _, reg := range r.interrupts {
		if !reg.interrupted {
			reg.interrupted = true
			reg.cancel()
		}
	}
}

// Progress tells subscribers what the task is doing: the status stays
// working, with text as its message, and the message is added to history.
func (t *Task) Progress(ctx workflow.Context, text string) {
	t.r.setStatus(ctx, a2a.TaskStateWorking, t.r.agentMessage(a2a.NewTextPart(text)))
}

// SetMetadata records value under key in the task's metadata, which every
// client reading the task sees, and in the workflow's memo, which the
// Temporal UI shows on the run's page. value must marshal to JSON; keys are
// best namespaced ("a2aflow.route").
func (t *Task) SetMetadata(ctx workflow.Context, key string, value any) {
	if t.r.task.Metadata == nil {
		t.r.task.Metadata = map[string]any{}
	}
	t.r.task.Metadata[key] = value
	if t.r.recording.MergedWrites() {
		t.r.setMemo(key, value) // writes.go
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{key: value}); err != nil {
		t.r.logger.Warn("upsert memo", "key", key, "error", err)
	}
}

// Reply sets the agent's message shown as the status of the completed task.
func (t *Task) Reply(text string) {
	t.r.finalMessage = t.r.agentMessage(a2a.NewTextPart(text))
}

// Artifact adds an artifact to the task and returns it with its ID set. Each
// call is a new artifact ID; a name used again is a new version of that
// artifact, numbered in metadata["version"] from 1. A higher int version set
// in a.Metadata wins: a refinement continues an earlier task's numbering.
//
// An artifact that would bring the task's artifacts over [MaxArtifactBytes]
// is not added: the task fails with [ErrArtifactTooLarge], ctx is canceled
// so the skill stops at its next wait, and the copy returned has no ID.
func (t *Task) Artifact(ctx workflow.Context, a *a2a.Artifact) *a2a.Artifact {
	return t.artifactAs(ctx, "", a)
}

// artifactAs is Artifact with the ID id (empty: the next of the task's
// own); an artifact of that ID already in the task is replaced, in its
// place, by this new version.
func (t *Task) artifactAs(ctx workflow.Context, id a2a.ArtifactID, a *a2a.Artifact) *a2a.Artifact {
	r := t.r
	if !t.admitArtifact(ctx, a.Name, a.Parts) {
		refused := *a
		refused.ID = ""
		return &refused
	}
	if id == "" {
		r.artifactSeq++
		id = a2a.ArtifactID(fmt.Sprintf("%s-artifact-%d", r.task.ID, r.artifactSeq))
	}
	stored := *a
	stored.ID = id
	version := 1
	for _, prev := range r.task.Artifacts {
		if prev.Name != "" && prev.Name == stored.Name {
			version++
			if v, ok := intValue(prev.Metadata["version"]); ok && v >= version {
				version = v + 1 // after a continued numbering
			}
		}
	}
	if v, ok := intValue(a.Metadata["version"]); ok && v > version {
		version = v
	}
	meta := map[string]any{}
	// Copying a map gives the same result in any order.
	maps.Copy(meta, a.Metadata) //workflowcheck:ignore
	meta["version"] = version

	stored.Metadata = meta
	if i := slices.IndexFunc(r.task.Artifacts, func(p *a2a.Artifact) bool { return p.ID == id }); i >= 0 {
		r.task.Artifacts[i] = &stored
	} else {
		r.task.Artifacts = append(r.task.Artifacts, &stored)
	}
	r.emit(ctx, wire.Event{Artifact: &a2a.TaskArtifactUpdateEvent{
		TaskID: r.task.ID, ContextID: r.task.ContextID, Artifact: &stored, LastChunk: true,
	}})
	return &stored
}

// ArtifactChunk adds parts to the artifact with id (one that Artifact
// returned), streamed to subscribers as an A2A artifact update with append
// set; lastChunk marks the final chunk. Use it to stream a long artifact as it
// is produced. It returns false when the task has no artifact with id, and
// when the chunk would bring the task's artifacts over [MaxArtifactBytes],
// which fails the task as [Task.Artifact] does.
func (t *Task) ArtifactChunk(ctx workflow.Context, id a2a.ArtifactID, parts a2a.ContentParts, lastChunk bool) bool {
	r := t.r
	for i, a := range r.task.Artifacts {
		if a.ID != id {
			continue
		}
		if !t.admitArtifact(ctx, a.Name, parts) {
			return false
		}
		grown := *a
		grown.Parts = append(append(a2a.ContentParts(nil), a.Parts...), parts...)
		r.task.Artifacts[i] = &grown
		chunk := grown
		chunk.Parts = parts
		r.emit(ctx, wire.Event{Artifact: &a2a.TaskArtifactUpdateEvent{
			TaskID: r.task.ID, ContextID: r.task.ContextID, Artifact: &chunk, Append: true, LastChunk: lastChunk,
		}})
		return true
	}
	return false
}

// intValue reads an int from a metadata value, which is an int when the
// skill set it and a float64 once it went through JSON (a continued run).
func intValue(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

// Artifacts returns the task's artifacts so far.
func (t *Task) Artifacts() []*a2a.Artifact {
	return append([]*a2a.Artifact(nil), t.r.task.Artifacts...)
}

// TextArtifact returns an artifact holding text.
func TextArtifact(name, text string) *a2a.Artifact {
	return &a2a.Artifact{Name: name, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}

// JSONArtifact returns an artifact holding v as a JSON data part. v must
// marshal to JSON (a struct, a map, a slice...).
func JSONArtifact(name string, v any) *a2a.Artifact {
	p := a2a.NewDataPart(v)
	p.MediaType = "application/json"
	return &a2a.Artifact{Name: name, Parts: a2a.ContentParts{p}}
}

// DataArtifact returns an artifact holding data as a structured data part
// (media type application/json). It is [JSONArtifact] for a JSON object:
// an object is the shape every A2A version reads as is, where a 0.3 client
// gets any other JSON value (an array, a string) wrapped as {"value": ...}.
func DataArtifact(name string, data map[string]any) *a2a.Artifact {
	return JSONArtifact(name, data)
}

// FileArtifact returns an artifact holding a file's bytes as a raw part
// with its filename and media type (e.g. "report.pdf", "application/pdf").
// The bytes travel inside the workflow, so they count against
// [MaxArtifactBytes]; a larger file belongs in a store of its own, given to
// the user with [URLArtifact].
func FileArtifact(name, filename, mediaType string, data []byte) *a2a.Artifact {
	p := a2a.NewRawPart(data)
	p.Filename, p.MediaType = filename, mediaType
	return &a2a.Artifact{Name: name, Parts: a2a.ContentParts{p}}
}

// URLArtifact returns an artifact pointing at a file by URL, with its media
// type. The file itself never enters the workflow.
func URLArtifact(name, url, mediaType string) *a2a.Artifact {
	return &a2a.Artifact{Name: name, Parts: a2a.ContentParts{a2a.NewFileURLPart(a2a.URL(url), mediaType)}}
}

// MaxArtifactBytes bounds what a task's artifacts hold together: raw file
// bytes, text, URLs and the JSON of data parts. Artifacts live in the
// workflow's state and go out in every read of the task; Temporal limits a
// payload to 2 MB, so every payload of 256 KiB or more (a large artifact, a
// long message, the task read by a query) is kept in the payload store with
// only a reference in history (see package blobstore). The bound keeps one
// task's memory in the worker reasonable. An [Task.Artifact] or
// [Task.ArtifactChunk] call that would pass it is refused, and the task
// fails with an error wrapping [ErrArtifactTooLarge]. Files larger than
// this belong in a store of their own, given to the user with [URLArtifact].
const MaxArtifactBytes = 32 << 20

// ErrArtifactTooLarge is the error (wrapped) a task fails with when its
// artifacts would hold more than [MaxArtifactBytes].
var ErrArtifactTooLarge = errors.New("artifact too large")

// artifactBytes is what parts add to a task's payloads, for [MaxArtifactBytes].
func artifactBytes(parts a2a.ContentParts) (int, error) {
	n := 0
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			n += len(c)
		case a2a.Raw:
			n += len(c)
		case a2a.URL:
			n += len(c)
		case a2a.Data:
			// encoding/json writes map keys sorted: the size is deterministic.
			b, err := json.Marshal(c.Value) //workflowcheck:ignore
			if err != nil {
				return 0, fmt.Errorf("a data part is not JSON: %w", err)
			}
			n += len(b)
		}
	}
	return n, nil
}

// admitArtifact counts parts of the artifact named name against the task's
// budget, or fails the task and returns false when they would pass it.
func (t *Task) admitArtifact(ctx workflow.Context, name string, parts a2a.ContentParts) bool {
	n, err := artifactBytes(parts)
	if err == nil && t.r.artifactBytes+n > MaxArtifactBytes {
		err = fmt.Errorf("%w: %q (%s) would bring the task's artifacts to %s, over the limit of %s; "+
			"large files need a store outside the task (link them with a URL)",
			ErrArtifactTooLarge, name, byteSize(n), byteSize(t.r.artifactBytes+n), byteSize(MaxArtifactBytes))
	} else if err != nil {
		err = fmt.Errorf("artifact %q: %w", name, err)
	}
	if err != nil {
		t.r.failWith(ctx, err)
		return false
	}
	t.r.artifactBytes += n
	return true
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// failWith ends the task failed with err whatever the skill returns, and
// cancels the skill so that it stops at its next wait.
func (r *run) failWith(ctx workflow.Context, err error) {
	if r.failure != nil {
		return
	}
	r.failure = err
	r.logger.Warn("task fails", "error", err)
	if r.cancelSkill != nil {
		r.cancelSkill()
	}
}

// MessageText joins the text parts of m with newlines.
func MessageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil {
			if s := p.Text(); s != "" {
				texts = append(texts, s)
			}
		}
	}
	return strings.Join(texts, "\n")
}
