package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// A task's generation (A2A 1.1, §3.2.7 of the specification's dev-1.1
// branch) is one more than the number of its latest event, lastSeq + 1
// (wire.Generation): a task is created submitted, with no event
// (generation 1), and every later status change and every artifact added
// or updated is one event (emit, events.go), numbered from 1 without a
// gap. The numbering is workflow state, in history, carried across
// continue-as-new (continued.go), so the generation needs no state of its
// own: it starts at 1, rises by exactly one per event, and a crash of the
// server or worker replays to the same numbers. A fork is a task of its
// own, whose events are numbered from 1 as it re-emits them (fork.go): its
// generation starts at 1 too.
//
// A conditional message (wire.SendMessageInput.IfGenerationMatch) is
// checked by the SendMessage update's validator (checkGeneration), and the
// update's handler records, before anything in it can block, that a
// conditional message won at this generation (claimGeneration). Temporal
// runs each update's validator and then its handler in one coroutine, up
// to the handler's first blocking call, before the next update's
// validator: of two conditional messages sent at the same generation, the
// second is refused even when the first has not changed the task yet (it
// is queued for the skill).

// checkGeneration refuses a conditional message sent at a generation that
// is not the task's, or at one another conditional message already won.
// A task with no message yet ignores the condition: the message creates
// it (the specification: "If the task referenced by the message does not
// yet exist ... this field MUST be ignored").
func (r *run) checkGeneration(in wire.SendMessageInput) error {
	if in.IfGenerationMatch == nil || (r.received == 0 && r.runs == 0) {
		return nil
	}
	want, current := *in.IfGenerationMatch, wire.Generation(r.lastSeq)
	switch {
	case want != current:
		return temporal.NewApplicationError(
			fmt.Sprintf("task generation mismatch: expected %d but current generation is %d", want, current),
			wire.ErrTypeGenerationMismatch, want, current)
	case r.generationClaim == current:
		return temporal.NewApplicationError(
			fmt.Sprintf("task generation mismatch: a message conditional on generation %d was already accepted", want),
			wire.ErrTypeGenerationMismatch, want, current)
	}
	return nil
}

// claimGeneration records that a conditional message won at the task's
// current generation. It runs in the handler (replayed, unlike the
// validator), first thing.
func (r *run) claimGeneration(in wire.SendMessageInput) {
	if in.IfGenerationMatch != nil && !(r.received == 0 && r.runs == 0) {
		r.generationClaim = wire.Generation(r.lastSeq)
	}
}
