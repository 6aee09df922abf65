package demo_test

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Greeter is the README's "Writing an agent" example, verbatim
// (TestREADMEShowsTestedCode keeps the two the same): a new agent is this much
// code.
func Greeter() *workflows.Agent {
	return &workflows.Agent{
		Name:        "greeter",
		Description: "Greets you by name.",
		Skills:      []a2a.AgentSkill{{ID: "greet", Name: "Greet", Description: "Asks your name and greets you."}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			name, err := t.Ask(ctx, "name", "What is your name?") // input-required until answered
			if err != nil {
				return err // canceled while waiting
			}
			t.Artifact(ctx, workflows.TextArtifact("greeting", "Hello, "+workflows.MessageText(name)+"!"))
			return nil // completed; workflows.Reject(reason) rejects; another error fails the task
		},
	}
}

// TestGreeter runs the Greeter in Temporal's test environment, whose clock
// jumps: the task asks, waits an hour for the answer (or a cancel) and ends.
// Copy it to test an agent of your own.
func TestGreeter(t *testing.T) {
	type outcome struct {
		Waiting   a2a.TaskState // half an hour in
		Question  string
		State     a2a.TaskState // at the end
		Artifacts []string
	}
	tests := []struct {
		name string
		// user acts an hour in, sending its updates to the task.
		user func(env *testsuite.TestWorkflowEnvironment, cb *testsuite.TestUpdateCallback)
		want outcome
	}{
		{
			name: "answered",
			user: func(env *testsuite.TestWorkflowEnvironment, cb *testsuite.TestUpdateCallback) {
				answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Ada"))
				env.UpdateWorkflow(wire.UpdateSendMessage, answer.ID, cb, wire.SendMessageInput{Message: answer})
			},
			want: outcome{a2a.TaskStateInputRequired, "What is your name?", a2a.TaskStateCompleted, []string{"greeting: Hello, Ada!"}},
		},
		{
			name: "canceled while waiting",
			user: func(env *testsuite.TestWorkflowEnvironment, cb *testsuite.TestUpdateCallback) {
				env.UpdateWorkflow(wire.UpdateCancelTask, "cancel", cb, wire.CancelTaskInput{})
			},
			want: outcome{a2a.TaskStateInputRequired, "What is your name?", a2a.TaskStateCanceled, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := engine.NewRegistry(Greeter())
			if err != nil {
				t.Fatal(err)
			}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "greeter-task"})

			var got outcome
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
				var task a2a.Task
				if err == nil {
					err = v.Get(&task)
				}
				if err != nil {
					t.Errorf("query the waiting task: %v", err)
					return
				}
				got.Waiting, got.Question = task.Status.State, workflows.MessageText(task.Status.Message)
			}, 30*time.Minute)
			env.RegisterDelayedCallback(func() {
				tt.user(env, &testsuite.TestUpdateCallback{
					OnAccept:   func() {},
					OnReject:   func(err error) { t.Errorf("update rejected: %v", err) },
					OnComplete: func(_ any, err error) {},
				})
			}, time.Hour)
			first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hi"))
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "greeter", Message: first})

			var task a2a.Task
			if err := env.GetWorkflowResult(&task); err != nil {
				t.Fatalf("workflow: %v", err)
			}
			got.State = task.Status.State
			for _, a := range task.Artifacts {
				got.Artifacts = append(got.Artifacts, a.Name+": "+a.Parts[0].Text())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("greeter task (-want +got):\n%s", diff)
			}
		})
	}
}
