package taskservice

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// A2A 1.1's task generation (the specification's dev-1.1 branch, §3.2.7):
// the service answers a request the bindings marked as A2A 1.1
// (WithGeneration) with each task's and event's generation, waits in
// GetTask for a generation past currentGeneration (long-poll), and sends a
// message with ifGenerationMatch as a conditional write the workflow's
// validator checks (workflows/generation.go). A 1.0 or 0.3 request is
// answered as before.
//
// a2a-go's types (A2A 1.0) have no generation field: the service puts it in
// the task's or event's metadata under GenerationMetadataKey, on copies,
// and the 1.1 layer of the bindings (a2abinding/v11.go) moves it to the
// object's own "generation" field as it writes the answer.

// GenerationMetadataKey carries a task's or event's generation from the
// service to the bindings' 1.1 layer, which removes it.
const GenerationMetadataKey = "a2aflow.generation"

// LongPollBound is how long GetTask with currentGeneration waits at most
// for the task's generation to pass it; then it answers with the task as
// it is (the specification: "The server MAY return earlier (e.g. on
// timeout) with the current task state").
const LongPollBound = 30 * time.Second

// Generation is what an A2A 1.1 request asks of the generation: set by
// the bindings, read by the service.
type Generation struct {
	// Current is GetTask's currentGeneration: wait until the task's
	// generation is greater.
	Current *int64
	// IfMatch is SendMessage's configuration.ifGenerationMatch.
	IfMatch *int64
}

type generationKey struct{}

// WithGeneration marks ctx's request as an A2A 1.1 one, with g.
func WithGeneration(ctx context.Context, g Generation) context.Context {
	return context.WithValue(ctx, generationKey{}, g)
}

// generationOf returns what ctx's request asks of the generation, and
// whether it is an A2A 1.1 request.
func generationOf(ctx context.Context) (Generation, bool) {
	g, ok := ctx.Value(generationKey{}).(Generation)
	return g, ok
}

// wantsGeneration reports whether ctx's request is an A2A 1.1 one.
func wantsGeneration(ctx context.Context) bool {
	_, ok := generationOf(ctx)
	return ok
}

// withGenerationMeta returns a copy of meta with the generation.
func withGenerationMeta(meta map[string]any, gen int64) map[string]any {
	out := make(map[string]any, len(meta)+1)
	maps.Copy(out, meta)
	out[GenerationMetadataKey] = gen
	return out
}

// stampTask returns t with its generation (a copy) when ctx's request is an
// A2A 1.1 one, seq being the number of t's latest event; else t.
func stampTask(ctx context.Context, t *a2a.Task, seq int64) *a2a.Task {
	if t == nil || !wantsGeneration(ctx) {
		return t
	}
	c := *t
	c.Metadata = withGenerationMeta(t.Metadata, wire.Generation(seq))
	return &c
}

// stampEvent returns e, the event numbered seq (or for a task, the task at
// event seq), with its generation when ctx's request is an A2A 1.1 one.
func stampEvent(ctx context.Context, e a2a.Event, seq int64) a2a.Event {
	if !wantsGeneration(ctx) {
		return e
	}
	switch v := e.(type) {
	case *a2a.Task:
		return stampTask(ctx, v, seq)
	case *a2a.TaskStatusUpdateEvent:
		c := *v
		c.Metadata = withGenerationMeta(v.Metadata, wire.Generation(seq))
		return &c
	case *a2a.TaskArtifactUpdateEvent:
		c := *v
		c.Metadata = withGenerationMeta(v.Metadata, wire.Generation(seq))
		return &c
	}
	return e
}

// liveOf is the live context ID a stream follows (Follow): none for an A2A
// 1.1 request, whose every event carries a generation, which the answers
// being written (live.go, not events of the task) have none of, unless it
// activated LiveExtensionURI, whose clients tell the live chunks apart
// (their wire.LiveMetadataKey) and leave them out of generation tracking.
func liveOf(ctx context.Context, contextID string) string {
	if wantsGeneration(ctx) && !slices.Contains(activatedExtensions(ctx), LiveExtensionURI) {
		return ""
	}
	return contextID
}

// longPoll waits, for GetTask with currentGeneration, until snap's task
// has an event that takes its generation past current, LongPollBound at
// most, woken as streams are (Follow: the notifier's hints, the poll
// otherwise), and returns the task then. A task that ended, or whose
// generation is already past current, is returned as it is.
func (s *TaskService) longPoll(ctx context.Context, snap *wire.TaskSnapshot, current int64, historyLength *int) (*wire.TaskSnapshot, error) {
	if wire.Generation(snap.EventSeq) > current || snap.Task.Status.State.Terminal() {
		return snap, nil
	}
	wait, cancel := context.WithTimeout(ctx, LongPollBound)
	defer cancel()
	moved := false
	s.Follow(wait, snap.Task.ID, snap.EventSeq, "", func(e wire.Event) bool {
		moved = wire.Generation(e.Seq) > current
		return moved
	}, func(_ a2a.Event, err error) bool { return err == nil })
	if !moved && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return s.LoadTask(ctx, snap.Task.ID, historyLength)
}
