package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// endedOutcome is what became of one update sent to the ended-push
// workflow.
type endedOutcome struct {
	name   string
	config *a2a.PushConfig
	err    error // the validator's refusal or the handler's error
	done   bool
}

// endedUpdate sends one update to the ended-push workflow; its outcome is
// known once the workflow has run (the test environment runs updates
// after the callback that sends them).
func endedUpdate(env *testsuite.TestWorkflowEnvironment, name, step string, arg any) *endedOutcome {
	o := &endedOutcome{name: step}
	env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
		OnReject: func(e error) { o.err, o.done = e, true },
		OnAccept: func() {},
		OnComplete: func(v any, e error) {
			o.err, o.done = e, true
			if c, ok := v.(*a2a.PushConfig); ok {
				o.config = c
			}
		},
	}, arg)
	return o
}

// errType is the ApplicationError type of err, "" for none.
func errType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// TestEndedPushConfigsWorkflow drives the workflow of an ended task's push
// configs on the test environment's clock: creates (new, replacing, over
// the limit, malformed), deletes (of its own configs and of the task's,
// which it hides), the agent and owner scope of every handler, and its end
// at Until with its state as result.
func TestEndedPushConfigsWorkflow(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(engine.EndedPushConfigsWorkflow, workflow.RegisterOptions{Name: wire.EndedPushConfigsWorkflowName})
	start := env.Now()
	in := wire.EndedPushConfigsInput{TaskID: "t-1", Agent: "travel", Owner: "alice", Until: start.Add(30 * 24 * time.Hour), Own: []string{"own-1", "own-2"}}
	var outcomes []*endedOutcome
	// want records the error type an update's outcome must have ("": none).
	want := map[*endedOutcome]string{}
	create := func(step, owner, id, url, wantErr string) *endedOutcome {
		o := endedUpdate(env, wire.UpdateCreatePushConfig, step, wire.CreatePushConfigInput{Agent: "travel", Owner: owner,
			Config: &a2a.PushConfig{ID: id, URL: url, Token: "sealed-token"}})
		outcomes, want[o] = append(outcomes, o), wantErr
		return o
	}
	del := func(step, agent, owner, id, wantErr string) {
		o := endedUpdate(env, wire.UpdateDeletePushConfig, step, wire.DeletePushConfigInput{Agent: agent, Owner: owner, ID: id})
		outcomes, want[o] = append(outcomes, o), wantErr
	}
	query := func(agent, owner string) (wire.EndedPushConfigs, error) {
		v, err := env.QueryWorkflow(wire.QueryEndedPushConfigs, wire.PushConfigsInput{Agent: agent, Owner: owner})
		var out wire.EndedPushConfigs
		if err == nil {
			err = v.Get(&out)
		}
		return out, err
	}
	ids := func(e wire.EndedPushConfigs) string {
		var s []string
		for _, c := range e.Configs {
			s = append(s, c.ID+"="+c.URL)
		}
		return strings.Join(s, " ") + " deleted:" + strings.Join(e.Deleted, ",")
	}

	var first *endedOutcome
	steps := []func(){
		func() { first = create("create a", "alice", "a", "https://hooks.example/a", "") },
		func() {
			create("create b without an owner (no authentication)", "", "b", "https://hooks.example/b", "")
		},
		func() { create("replace a", "alice", "a", "https://hooks.example/a2", "") },
		func() {
			create("create by another owner", "mallory", "m", "https://hooks.example/m", wire.ErrTypeTaskNotFound)
		},
		func() {
			for i, bad := range []*a2a.PushConfig{nil, {URL: "https://hooks.example/x"}, {ID: "x", URL: "ftp://x"}, {ID: "x", TaskID: "t-2", URL: "https://hooks.example/x"}} {
				o := endedUpdate(env, wire.UpdateCreatePushConfig, fmt.Sprintf("malformed create %d", i), wire.CreatePushConfigInput{Agent: "travel", Config: bad})
				outcomes, want[o] = append(outcomes, o), wire.ErrTypeInvalidParams
			}
		},
		func() { del("delete the task's own-1", "travel", "alice", "own-1", "") },
		func() { del("delete own-1 again", "travel", "alice", "own-1", wire.ErrTypePushConfigNotFound) },
		func() { del("delete b", "travel", "alice", "b", "") },
		func() { del("delete an unknown config", "travel", "alice", "nope", wire.ErrTypePushConfigNotFound) },
		func() { del("delete a by another owner", "travel", "mallory", "a", wire.ErrTypeTaskNotFound) },
		func() { del("delete through another agent", "echo", "", "a", wire.ErrTypeTaskNotFound) },
		func() {
			if _, err := query("travel", "mallory"); err == nil {
				t.Error("a read by another owner succeeded")
			}
			got, err := query("travel", "alice")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("a=https://hooks.example/a2 deleted:own-1", ids(got)); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			var merged []string
			for _, c := range got.Merge([]*a2a.PushConfig{{ID: "own-1"}, {ID: "own-2"}, {ID: "a", URL: "https://old"}}) {
				merged = append(merged, c.ID+"="+c.URL)
			}
			if diff := cmp.Diff([]string{"own-2=", "a=https://hooks.example/a2"}, merged); diff != "" {
				t.Errorf("merged with the task's own (-want +got):\n%s", diff)
			}
		},
		func() { create("create the deleted own-1 again", "alice", "own-1", "https://hooks.example/again", "") },
		func() {
			for i := range wire.MaxPushConfigs - 2 {
				create(fmt.Sprintf("create config %d", i+3), "alice", fmt.Sprintf("n%d", i), "https://hooks.example/n", "")
			}
		},
		func() {
			create("create past the limit", "alice", "over", "https://hooks.example/over", wire.ErrTypeInvalidParams)
		},
	}
	for i, step := range steps {
		env.RegisterDelayedCallback(step, time.Duration(i+1)*time.Hour)
	}

	env.ExecuteWorkflow(wire.EndedPushConfigsWorkflowName, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if ended := env.Now().Sub(start); ended < 30*24*time.Hour || ended > 30*24*time.Hour+time.Minute {
		t.Errorf("completed %s after its start, want at Until (720h)", ended)
	}
	for _, o := range outcomes {
		if !o.done || errType(o.err) != want[o] || (want[o] == "" && o.err != nil) {
			t.Errorf("%s: done %v, error %v; want error type %q", o.name, o.done, o.err, want[o])
		}
	}
	if first == nil || first.config == nil || first.config.TaskID != "t-1" || first.config.Token != "sealed-token" {
		t.Errorf("create a returned %+v, want the config stored with the task's ID", first)
	}
	var result wire.EndedPushConfigs
	if err := env.GetWorkflowResult(&result); err != nil {
		t.Fatal(err)
	}
	if len(result.Configs) != wire.MaxPushConfigs || result.Configs[1].URL != "https://hooks.example/again" || len(result.Deleted) != 0 {
		t.Errorf("result %s, want its last state", ids(result))
	}
}
