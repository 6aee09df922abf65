package workflows_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// completion is one CompleteWaitpoint update and how it ended.
type completion struct {
	accepted, done bool
	rejected, err  error
	result         workflows.Waitpoint
}

// complete sends the CompleteWaitpoint update as the API does for a caller
// whose token it checked (token: what the token is bound to).
func complete(env *testsuite.TestWorkflowEnvironment, id string, token *wire.TokenBinding, payload string) *completion {
	c := &completion{}
	env.UpdateWorkflow(wire.UpdateCompleteWaitpoint, "", &testsuite.TestUpdateCallback{
		OnAccept: func() { c.accepted = true },
		OnReject: func(err error) { c.rejected = err },
		OnComplete: func(v any, err error) {
			c.done, c.err = true, err
			c.result, _ = v.(workflows.Waitpoint)
		},
	}, wire.CompleteWaitpointInput{WaitpointID: id, Payload: json.RawMessage(payload), By: "token", Via: "rest", Token: token})
	return c
}

// waitpointsOf reads the task's waitpoints as the task's owner does.
func waitpointsOf(t *testing.T, env *testsuite.TestWorkflowEnvironment, token *wire.TokenBinding) []workflows.Waitpoint {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryWaitpoints, wire.WaitpointsQuery{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	var out []workflows.Waitpoint
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func binding(w workflows.Waitpoint) *wire.TokenBinding {
	return &wire.TokenBinding{WaitpointID: w.ID, Created: w.Created.UnixNano()}
}

func refusedWith(err error, errType string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == errType
}

// ticketing waits for a ticket, continues as new at a checkpoint, and waits
// for a second ticket, which it may wait for across continue-as-new too.
func ticketing() *workflows.Agent {
	return &workflows.Agent{Name: "ticketing", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		var s struct{ Step int }
		t.Resume(&s)
		if s.Step == 0 {
			if _, err := t.WaitFor(ctx, workflows.WaitpointRequest{Name: "ticket"}); err != nil {
				return err
			}
			s.Step = 1
			if err := t.Checkpoint(ctx, s); err != nil {
				return err
			}
		}
		w, err := t.WaitFor(ctx, workflows.WaitpointRequest{Name: "ticket", Timeout: 48 * time.Hour}, workflows.Resumable(s))
		if err != nil {
			return err
		}
		t.Reply(w.ID + " " + string(w.Payload))
		return nil
	}}
}

// TestWaitpointsAcrossContinueAsNew is the waitpoint promise of a task's
// units: a task completes a waitpoint, continues as new and opens another.
// The new one has a new ID; the first one's token (bound to it) does not
// open it, nor does a token of its ID alone; the first one is still
// readable, with its idempotent answer. The second waitpoint, waited for
// with Resumable, crosses a second continue-as-new with its ID, deadline
// and token.
func TestWaitpointsAcrossContinueAsNew(t *testing.T) {
	first := testTaskID + "-waitpoint-1"
	second := testTaskID + "-waitpoint-2"

	// Run 1: the first waitpoint is completed; the checkpoint that follows
	// continues the task as new.
	env := newTaskEnv(t, ticketing())
	var wp1 workflows.Waitpoint
	var done1 *completion
	env.RegisterDelayedCallback(func() {
		wp1 = waitpointsOf(t, env, nil)[0]
		done1 = complete(env, first, binding(wp1), `{"ticket":"CHG-1"}`)
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 2*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "ticketing", ContextID: testContextID, Message: userText("change")})
	if done1 == nil || !done1.done || done1.err != nil {
		t.Fatalf("completion of the first waitpoint: %+v", done1)
	}
	in := continuedInput(t, env)

	// Run 2: the second waitpoint.
	env2 := newTaskEnv(t, ticketing())
	env2.SetStartTime(time.Now().Add(time.Hour))
	var list []workflows.Waitpoint
	var stale, v1, retry *completion
	env2.RegisterDelayedCallback(func() {
		list = waitpointsOf(t, env2, nil)
		stale = complete(env2, second, &wire.TokenBinding{WaitpointID: second, Created: wp1.Created.UnixNano()}, `{"ticket":"CHG-2"}`)
		v1 = complete(env2, second, &wire.TokenBinding{WaitpointID: second}, `{"ticket":"CHG-2"}`)
		// The first waitpoint's own token still reads it, and is refused
		// any other payload: its record crossed continue-as-new.
		retry = complete(env2, first, binding(wp1), `{"ticket":"CHG-other"}`)
	}, time.Minute)
	env2.RegisterDelayedCallback(func() { env2.SetContinueAsNewSuggested(true) }, 2*time.Minute)
	env2.ExecuteWorkflow(wire.TaskWorkflowName, in)

	if len(list) != 2 || list[0].ID != first || list[0].State != workflows.WaitpointCompleted || string(list[0].Payload) != `{"ticket":"CHG-1"}` ||
		list[1].ID != second || list[1].State != workflows.WaitpointPending {
		t.Fatalf("waitpoints of the second run = %+v, want %s completed and %s pending", list, first, second)
	}
	if stale == nil || !refusedWith(stale.rejected, wire.ErrTypeWaitpointTokenRefused) {
		t.Errorf("the first waitpoint's token on the second: %+v, want refused (%s)", stale, wire.ErrTypeWaitpointTokenRefused)
	}
	if v1 == nil || !refusedWith(v1.rejected, wire.ErrTypeWaitpointTokenRefused) {
		t.Errorf("a token of the second waitpoint's ID alone: %+v, want refused", v1)
	}
	if retry == nil || !refusedWith(retry.rejected, wire.ErrTypeWaitpointSettled) {
		t.Errorf("another payload for the completed first waitpoint: %+v, want refused as settled", retry)
	}
	if got := waitpointsOf(t, env2, binding(list[0])); len(got) != 1 || got[0].ID != first {
		t.Errorf("the first waitpoint's token reads %+v, want the first waitpoint only", got)
	}
	in2 := continuedInput(t, env2)
	if w := in2.Continued.Skill.Wait; w == nil || w.WaitpointID != second {
		t.Fatalf("the second run continued as new in wait %+v, want the waitpoint %s", w, second)
	}

	// Run 3: the same waitpoint, its deadline and its token.
	env3 := newTaskEnv(t, ticketing())
	var done2 *completion
	var again []workflows.Waitpoint
	env3.RegisterDelayedCallback(func() {
		again = waitpointsOf(t, env3, nil)
		done2 = complete(env3, second, binding(list[1]), `{"ticket":"CHG-2"}`)
	}, time.Minute)
	env3.ExecuteWorkflow(wire.TaskWorkflowName, in2)
	if len(again) != 2 || again[1].ID != second || again[1].Deadline == nil || !again[1].Deadline.Equal(*list[1].Deadline) {
		t.Errorf("waitpoints of the third run = %+v, want %s with its deadline %v", again, second, list[1].Deadline)
	}
	if done2 == nil || !done2.done || done2.err != nil {
		t.Fatalf("completion of the second waitpoint with its token: %+v", done2)
	}
	final := finalTask(t, env3)
	if got := workflows.MessageText(final.Status.Message); got != second+` {"ticket":"CHG-2"}` {
		t.Errorf("the task answered %q, want the second waitpoint's payload", got)
	}
}
