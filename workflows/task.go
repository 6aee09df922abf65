package workflows

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// Task is a skill handler's view of its A2A task. Its methods are workflow
// code: call them from the handler's goroutine (or workflow.Go), never from a
// real goroutine.
type Task struct {
	r     *run
	first *a2a.Message
	agent *Agent
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
func (t *Task) Message() *a2a.Message { return t.first }

// Text returns the text parts of the message that started the task.
func (t *Task) Text() string { return MessageText(t.first) }

// ReferenceTaskIDs returns the tasks the first message refers to (A2A
// referenceTaskIds), e.g. the task a refinement builds on.
func (t *Task) ReferenceTaskIDs() []a2a.TaskID { return t.first.ReferenceTasks }

// AskOption changes how Ask waits.
type AskOption func(*askOptions)

type askOptions struct{ timeout time.Duration }

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

// RequireAuth is like Ask for credentials: the task is auth-required with
// prompt as its status message until the user's next message arrives.
func (t *Task) RequireAuth(ctx workflow.Context, scheme, prompt string, opts ...AskOption) (*a2a.Message, error) {
	return t.wait(ctx, a2a.TaskStateAuthRequired, scheme, prompt, opts)
}

func (t *Task) wait(ctx workflow.Context, state a2a.TaskState, slot, prompt string, opts []AskOption) (*a2a.Message, error) {
	var o askOptions
	for _, opt := range opts {
		opt(&o)
	}
	r := t.r
	question := r.agentMessage(a2a.NewTextPart(prompt))
	if slot != "" {
		question.Metadata = map[string]any{"slot": slot}
	}
	if len(r.inbox) > 0 {
		// A message sent while the task was working answers at once: the
		// question goes into history, the task never looks interrupted.
		r.task.History = append(r.task.History, question)
		return r.take(), nil
	}
	r.setStatus(ctx, state, question)
	ready := func() bool { return len(r.inbox) > 0 }
	if o.timeout > 0 {
		ok, err := workflow.AwaitWithTimeout(ctx, o.timeout, ready)
		if err != nil {
			return nil, err
		}
		if !ok {
			// The question is withdrawn: the task works on (or ends) without it.
			r.setStatus(ctx, a2a.TaskStateWorking, nil)
			return nil, fmt.Errorf("%w (%s, waited %s)", ErrAskTimeout, slot, o.timeout)
		}
	} else if err := workflow.Await(ctx, ready); err != nil {
		return nil, err
	}
	answer := r.take()
	r.setStatus(ctx, a2a.TaskStateWorking, nil)
	return answer, nil
}

// Progress tells subscribers what the task is doing: the status stays
// working, with text as its message, and the message is added to history.
func (t *Task) Progress(ctx workflow.Context, text string) {
	t.r.setStatus(ctx, a2a.TaskStateWorking, t.r.agentMessage(a2a.NewTextPart(text)))
}

// Reply sets the agent's message shown as the status of the completed task.
func (t *Task) Reply(text string) {
	t.r.finalMessage = t.r.agentMessage(a2a.NewTextPart(text))
}

// Artifact adds an artifact to the task and returns it with its ID set. Each
// call is a new artifact ID; a name used again is a new version of that
// artifact, numbered in metadata["version"] from 1. A higher int version set
// in a.Metadata wins: a refinement continues an earlier task's numbering.
func (t *Task) Artifact(ctx workflow.Context, a *a2a.Artifact) *a2a.Artifact {
	r := t.r
	r.artifactSeq++
	stored := *a
	stored.ID = a2a.ArtifactID(fmt.Sprintf("%s-artifact-%d", r.task.ID, r.artifactSeq))
	version := 1
	for _, prev := range r.task.Artifacts {
		if prev.Name != "" && prev.Name == stored.Name {
			version++
			if v, ok := prev.Metadata["version"].(int); ok && v >= version {
				version = v + 1 // after a continued numbering
			}
		}
	}
	if v, ok := a.Metadata["version"].(int); ok && v > version {
		version = v
	}
	meta := map[string]any{}
	// Copying a map gives the same result in any order.
	maps.Copy(meta, a.Metadata) //workflowcheck:ignore
	meta["version"] = version

	stored.Metadata = meta
	r.task.Artifacts = append(r.task.Artifacts, &stored)
	r.emit(ctx, Event{Artifact: &a2a.TaskArtifactUpdateEvent{
		TaskID: r.task.ID, ContextID: r.task.ContextID, Artifact: &stored, LastChunk: true,
	}})
	return &stored
}

// ArtifactChunk adds parts to the artifact with id (one that Artifact
// returned), streamed to subscribers as an A2A artifact update with append
// set; lastChunk marks the final chunk. Use it to stream a long artifact as it
// is produced. It returns false when the task has no artifact with id.
func (t *Task) ArtifactChunk(ctx workflow.Context, id a2a.ArtifactID, parts a2a.ContentParts, lastChunk bool) bool {
	r := t.r
	for i, a := range r.task.Artifacts {
		if a.ID != id {
			continue
		}
		grown := *a
		grown.Parts = append(append(a2a.ContentParts(nil), a.Parts...), parts...)
		r.task.Artifacts[i] = &grown
		chunk := grown
		chunk.Parts = parts
		r.emit(ctx, Event{Artifact: &a2a.TaskArtifactUpdateEvent{
			TaskID: r.task.ID, ContextID: r.task.ContextID, Artifact: &chunk, Append: true, LastChunk: lastChunk,
		}})
		return true
	}
	return false
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
