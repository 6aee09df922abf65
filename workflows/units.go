package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// A task's features are units. Approvals, waitpoints, credentials, push
// configs and delegations each keep their state in one unit of the run
// (a field of [run]) and have one place, their unit's methods, for what the
// feature adds to the task workflow: its update and query handlers, its part
// of a user message's validation and handling, the state it hands to the
// next run when the task continues as new, and what it settles when the task
// ends. The run calls every unit at those points (below), so a new feature
// is a new unit in [run.units] and nothing else.
//
// State a unit adds must cross continue-as-new: TestUnitsCarryTheirState
// fills every field of the run and its units, continues the task as new and
// checks that the next run has each of them back, unless the field says
// `carry:"-"` (state of this run only: coroutines, handlers under way,
// configuration the worker gives every run).
type unit interface {
	// register sets the unit's update and query handlers; the run calls it
	// after restore.
	register(ctx workflow.Context) error
	// claims reports whether a user message is the unit's: a message with a
	// data part the unit reads (an approval decision, a waitpoint's
	// payload), which the unit then takes (receive) instead of the skill's
	// inbox. It is a pure function of the message and the unit's state, so
	// the update's validator and its handler agree on it.
	claims(in wire.SendMessageInput) bool
	// validateMessage is the unit's part of a user message's validation,
	// run by the SendMessage update's validator after the run's own checks
	// (access, state, the message's shape). by is the unit that claims the
	// message, nil when none does (the message is for the skill); a unit
	// may refuse a message it does not claim too (the credentials unit
	// refuses a plain answer while the task waits for a credential). It
	// must not change state.
	validateMessage(ctx workflow.Context, in wire.SendMessageInput, by unit) error
	// receive takes a message the unit claims (the update's handler).
	receive(ctx workflow.Context, in wire.SendMessageInput) (sendResult, error)
	// carry writes the unit's state into the state handed to the next run;
	// restore reads it back in that run, before register.
	carry(c *continuedTask)
	restore(c *continuedTask)
	// resume runs in a continued run once the handlers are set, before
	// the skill starts again (the approvals unit sends the webhook notices
	// that were under way again).
	resume(ctx workflow.Context)
	// end settles what the unit has pending when the task ends (approvals
	// and waitpoints are canceled, so that a late decision is refused).
	end(ctx workflow.Context)
	// idle reports whether nothing of the unit is under way: the run
	// completes only once every unit is idle (a webhook delivery, an
	// approval notice).
	idle() bool
}

// units lists the run's units, in the order the run calls them: a message
// both could claim goes to the first (a waitpoint's payload before a
// decision).
func (r *run) units() []unit {
	return []unit{&r.waitpoints, &r.approvals, &r.grants, &r.credentials, &r.push, &r.delegations, &r.budgets, &r.fork}
}

// bind points every unit back at its run.
func (r *run) bind() {
	r.approvals.r = r
	r.grants.r = r
	r.waitpoints.r = r
	r.credentials.r = r
	r.push.r = r
	r.delegations.r = r
	r.fork.r = r
	r.budgets.r = r
}

// claimant returns the unit that claims a message, if one does.
func (r *run) claimant(in wire.SendMessageInput) unit {
	for _, u := range r.units() {
		if u.claims(in) {
			return u
		}
	}
	return nil
}

// unitsIdle reports whether every unit is idle.
func (r *run) unitsIdle() bool {
	for _, u := range r.units() {
		if !u.idle() {
			return false
		}
	}
	return true
}

// unitBase gives a unit the methods it has nothing to do in: embed it and
// define the others.
type unitBase struct{}

func (unitBase) register(workflow.Context) error   { return nil }
func (unitBase) claims(wire.SendMessageInput) bool { return false }
func (unitBase) resume(workflow.Context)           {}
func (unitBase) end(workflow.Context)              {}
func (unitBase) idle() bool                        { return true }
func (unitBase) carry(*continuedTask)              {}
func (unitBase) restore(*continuedTask)            {}
func (unitBase) receive(workflow.Context, wire.SendMessageInput) (sendResult, error) {
	return sendResult{}, nil
}
func (unitBase) validateMessage(workflow.Context, wire.SendMessageInput, unit) error { return nil }
