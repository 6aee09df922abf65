package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

func texts(th workflows.Thread) []string {
	var out []string
	for _, m := range th.Messages() {
		out = append(out, string(m.Role)+": "+workflows.MessageText(m))
	}
	return out
}

func TestThreadIsImmutable(t *testing.T) {
	base := workflows.NewThread(userText("hello"), nil)
	a := base.AddText(a2a.MessageRoleAgent, "hi, who are you?")
	b := base.AddText(a2a.MessageRoleAgent, "good morning")
	a2 := a.Add(userText("Ana"))

	tests := []struct {
		name string
		th   workflows.Thread
		want []string
	}{
		{"base is unchanged", base, []string{"ROLE_USER: hello"}},
		{"one branch", a, []string{"ROLE_USER: hello", "ROLE_AGENT: hi, who are you?"}},
		{"another branch from the same parent", b, []string{"ROLE_USER: hello", "ROLE_AGENT: good morning"}},
		{"grown branch", a2, []string{"ROLE_USER: hello", "ROLE_AGENT: hi, who are you?", "ROLE_USER: Ana"}},
		{"empty", workflows.Thread{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, texts(tt.th)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if tt.th.Len() != len(tt.want) {
				t.Errorf("Len() = %d, want %d", tt.th.Len(), len(tt.want))
			}
		})
	}
	// The slice Messages returns is the caller's own.
	msgs := a.Messages()
	msgs[0] = userText("changed")
	if got := workflows.MessageText(a.Messages()[0]); got != "hello" {
		t.Errorf("after changing Messages()' slice the thread starts with %q", got)
	}
	if got := workflows.MessageText(a2.Last()); got != "Ana" || (workflows.Thread{}).Last() != nil {
		t.Errorf("Last() = %q, want Ana (and nil for an empty thread)", got)
	}
}

// fakeContextHistory is the ContextHistory activity over fixed earlier messages.
func fakeContextHistory(got *wire.ContextHistoryInput, earlier []*a2a.Message) func(context.Context, wire.ContextHistoryInput) ([]*a2a.Message, error) {
	return func(_ context.Context, in wire.ContextHistoryInput) ([]*a2a.Message, error) {
		*got = in
		return earlier, nil
	}
}

func TestTaskThreadAndContextThread(t *testing.T) {
	var own, whole []string
	agent := &workflows.Agent{Name: "threads", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		if _, err := task.Ask(ctx, "name", "Your name?"); err != nil {
			return err
		}
		own = texts(task.Thread())
		th, err := task.ContextThread(ctx)
		if err != nil {
			return err
		}
		whole = texts(th)
		return nil
	}}
	env := newTaskEnv(t, agent)
	var got wire.ContextHistoryInput
	earlier := []*a2a.Message{
		a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("yesterday's question")),
		a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("yesterday's answer")),
	}
	env.RegisterActivityWithOptions(fakeContextHistory(&got, earlier), activity.RegisterOptions{Name: wire.ActivityContextHistory})
	env.RegisterDelayedCallback(func() {
		sendMessage(env, wire.SendMessageInput{Message: userText("Ana"), ReturnImmediately: true})
	}, time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "threads", ContextID: testContextID, Owner: "alice", Message: userText("hello")})
	finalTask(t, env)

	wantOwn := []string{"ROLE_USER: hello", "ROLE_AGENT: Your name?", "ROLE_USER: Ana"}
	if diff := cmp.Diff(wantOwn, own); diff != "" {
		t.Errorf("Thread() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append([]string{"ROLE_USER: yesterday's question", "ROLE_AGENT: yesterday's answer"}, wantOwn...), whole); diff != "" {
		t.Errorf("ContextThread() (-want +got):\n%s", diff)
	}
	if got.ContextID != testContextID || got.Owner != "alice" || got.Exclude != testTaskID || got.StartedBefore.IsZero() {
		t.Errorf("ContextHistory input = %+v, want this task's context, owner and ID", got)
	}
}

func TestReferencedTask(t *testing.T) {
	var found *a2a.Task
	var missing error
	agent := &workflows.Agent{Name: "refs", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		var err error
		if found, err = task.ReferencedTask(ctx, "earlier"); err != nil {
			return err
		}
		_, missing = task.ReferencedTask(ctx, "gone")
		return nil
	}}
	env := newTaskEnv(t, agent)
	var owners []string
	env.RegisterActivityWithOptions(func(_ context.Context, in wire.FetchTaskInput) (*a2a.Task, error) {
		owners = append(owners, in.Owner)
		if in.TaskID == "gone" {
			return nil, temporal.NewNonRetryableApplicationError("task gone not found", wire.ErrTypeTaskNotFound, nil)
		}
		return &a2a.Task{ID: in.TaskID, ContextID: testContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, nil
	}, activity.RegisterOptions{Name: wire.ActivityFetchTask})
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "refs", Owner: "bob", Message: userText("refine")})
	finalTask(t, env)

	if found == nil || found.ID != "earlier" || found.Status.State != a2a.TaskStateCompleted {
		t.Errorf("ReferencedTask(earlier) = %+v, want the completed task", found)
	}
	if !errors.Is(missing, workflows.ErrTaskNotFound) {
		t.Errorf("ReferencedTask(gone) error = %v, want ErrTaskNotFound", missing)
	}
	if diff := cmp.Diff([]string{"bob", "bob"}, owners); diff != "" {
		t.Errorf("reads as owner (-want +got):\n%s", diff)
	}
}

func TestArtifactVersionContinues(t *testing.T) {
	agent := &workflows.Agent{Name: "versions", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		refined := workflows.TextArtifact("report", "v5")
		refined.Metadata = map[string]any{"version": 5, "refines": "task-0"}
		task.Artifact(ctx, refined)
		task.Artifact(ctx, workflows.TextArtifact("report", "v6"))
		low := workflows.TextArtifact("report", "v7, not 2")
		low.Metadata = map[string]any{"version": 2}
		task.Artifact(ctx, low)
		return nil
	}}
	env := newTaskEnv(t, agent)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "versions", Message: userText("go")})
	var got []any
	for _, a := range finalTask(t, env).Artifacts {
		got = append(got, a.Metadata["version"])
	}
	if diff := cmp.Diff([]any{float64(5), float64(6), float64(7)}, got); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
}

func TestTokenUsage(t *testing.T) {
	var total workflows.TokenUsage
	agent := &workflows.Agent{Name: "usage", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		task.AddTokenUsage(workflows.TokenUsage{InputTokens: 10, OutputTokens: 2, Calls: 1})
		total = task.AddTokenUsage(workflows.TokenUsage{InputTokens: 5, OutputTokens: 1, Calls: 1})
		return nil
	}}
	env := newTaskEnv(t, agent)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "usage", Message: userText("go")})
	final := finalTask(t, env)
	if diff := cmp.Diff(workflows.TokenUsage{InputTokens: 15, OutputTokens: 3, Calls: 2}, total); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
	want := map[string]any{"inputTokens": float64(15), "outputTokens": float64(3), "calls": float64(2)}
	if diff := cmp.Diff(any(want), final.Metadata[wire.UsageMetadataKey]); diff != "" {
		t.Errorf("task metadata (-want +got):\n%s", diff)
	}
}
