package workflowstest

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// WaitpointID is the ID of the task's n-th waitpoint (1 for the first WaitFor).
func WaitpointID(n int) string { return fmt.Sprintf("%s-waitpoint-%d", TaskID, n) }

// CompleteWaitpoint completes the waitpoint id with payload (marshaled to
// JSON) after d of workflow time, as POST /waitpoints/{id} does with a valid
// token. A completion the task refuses fails the test: use
// CompleteWaitpointRefused for one it must refuse.
func (e *Env) CompleteWaitpoint(after time.Duration, id string, payload any) {
	e.completeWaitpoint(after, id, payload, func(err error) {
		e.t.Errorf("workflowstest: completion of waitpoint %s refused: %v", id, err)
	})
}

// CompleteWaitpointRefused sends a completion the task must refuse (a payload
// the schema does not take, a waitpoint already completed...) and passes the
// refusal to check.
func (e *Env) CompleteWaitpointRefused(after time.Duration, id string, payload any, check func(error)) {
	accepted := false
	e.completeWaitpoint(after, id, payload, check, func() { accepted = true })
	e.RegisterDelayedCallback(func() {
		if accepted {
			e.t.Errorf("workflowstest: completion of waitpoint %s was accepted, want it refused", id)
		}
	}, after+time.Nanosecond)
}

func (e *Env) completeWaitpoint(after time.Duration, id string, payload any, onReject func(error), onAccept ...func()) {
	raw, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatalf("workflowstest: waitpoint payload: %v", err)
	}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(wire.UpdateCompleteWaitpoint, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {
				for _, f := range onAccept {
					f()
				}
			},
			OnReject:   onReject,
			OnComplete: func(any, error) {},
		}, wire.CompleteWaitpointInput{WaitpointID: id, Payload: raw, Via: "test"})
	}, after)
}
