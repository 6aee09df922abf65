package genai

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// presetKey keys the IDs WithSpanID chose for the next span started from a
// context.
type presetKey struct{}

type preset struct {
	trace trace.TraceID
	span  trace.SpanID
}

// WithSpanID returns ctx whose next span gets the span ID span and, when
// it starts a trace (no parent), the trace ID traceID: a span a replayed
// workflow must name as it did before ([SpanID]). Only a tracer provider
// with [IDGenerator] honours it; another gives its own IDs.
func WithSpanID(ctx context.Context, traceID trace.TraceID, span trace.SpanID) context.Context {
	return context.WithValue(ctx, presetKey{}, preset{trace: traceID, span: span})
}

// IDGenerator returns the ID generator of a2aflow's tracer provider:
// random IDs, except for a span started from a context of [WithSpanID].
func IDGenerator() sdktrace.IDGenerator { return idGenerator{} }

type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if p, ok := ctx.Value(presetKey{}).(preset); ok && p.trace.IsValid() && p.span.IsValid() {
		return p.trace, p.span
	}
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t, randomSpanID()
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if p, ok := ctx.Value(presetKey{}).(preset); ok && p.span.IsValid() {
		return p.span
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// SpanID derives a span ID from parts (a task ID, a turn's start): the
// same on every worker that replays the task.
func SpanID(parts ...string) trace.SpanID {
	sum := digest(parts)
	var s trace.SpanID
	copy(s[:], sum[:8])
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

// TraceID derives the trace ID of a task that was started without one
// (tracing was off, or the caller sent none) from its ID, so that all its
// turns are still one trace.
func TraceID(taskID string) trace.TraceID {
	sum := digest([]string{"a2aflow-task-trace", taskID})
	var t trace.TraceID
	copy(t[:], sum[:16])
	if !t.IsValid() {
		t[15] = 1
	}
	return t
}

func digest(parts []string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
