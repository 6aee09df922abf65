package workflows_test

import (
	"context"
	"errors"
	"strings"
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

// TestCallAgentAuthRequired: a remote agent's auth-required question is
// asked of our user as RequireCredential asks: our task is auth-required
// with the question and a credential request naming the agent; the secret
// itself is refused before it is recorded (the API seals it, for that
// agent's task alone), as is a reference for the task's own use, and
// CallRequest.Answer (an LLM) is not asked. The answer carrying the
// reference goes to the send activity with the reference as its
// credential, never the secret.
func TestCallAgentAuthRequired(t *testing.T) {
	const secretText = "ghp_TheUsersOwnToken"
	answered := 0
	router := &workflows.Agent{Name: "router", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		res, err := t.CallAgent(ctx, workflows.CallRequest{Agent: "issues", Text: t.Text(),
			Answer: func(workflow.Context, *a2a.Message) (*a2a.Message, error) {
				answered++
				return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("what the model made up")), nil
			}})
		if err != nil {
			return err
		}
		t.Reply(res.Text())
		return nil
	}}
	env := newTaskEnv(t, router)
	var sends []wire.RemoteSendInput
	env.RegisterActivityWithOptions(func(_ context.Context, in wire.RemoteSendInput) (wire.RemoteTaskResult, error) {
		sends = append(sends, in)
		if in.Message.TaskID == "" {
			q := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("A GitHub token, please."),
				a2a.NewDataPart(map[string]any{"authType": "bearer", "service": "github"}))
			q.ID = "remote-question"
			return wire.RemoteTaskResult{Task: &a2a.Task{ID: "remote-1", ContextID: "remote-ctx",
				Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: q}}}, nil
		}
		done := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("2 open issues."))
		return wire.RemoteTaskResult{Task: &a2a.Task{ID: "remote-1", ContextID: "remote-ctx",
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: done}}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySendRemoteMessage})

	refMessage := func(agent string) *a2a.Message {
		data := map[string]any{wire.CredentialRefKey: "cred-1", "service": "github", "authType": "bearer"}
		if agent != "" {
			data[wire.CredentialAgentKey] = agent
		}
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Credential provided for github (agent issues)."), a2a.NewDataPart(data))
		m.ID = a2a.NewMessageID()
		return m
	}
	start := env.Now()
	var first, secret, local, ref *update
	env.RegisterDelayedCallback(func() {
		first = sendMessage(env, wire.SendMessageInput{Message: userText("List the issues of octo/widgets")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		secret = sendMessage(env, wire.SendMessageInput{Message: userText(secretText)})
	}, 90*time.Second)
	env.RegisterDelayedCallback(func() {
		local = sendMessage(env, wire.SendMessageInput{Message: refMessage("")})
	}, 100*time.Second)
	env.RegisterDelayedCallback(func() {
		ref = sendMessage(env, wire.SendMessageInput{Message: refMessage("issues")})
	}, 2*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "router"})

	asked := completedTask(t, "first", first, start, time.Minute)
	if diff := cmp.Diff(status(a2a.TaskStateAuthRequired, ptr(question("remote:issues", "A GitHub token, please."))), viewStatus(asked)); diff != "" {
		t.Errorf("first send: status (-want +got):\n%s", diff)
	}
	parts := asked.Status.Message.Parts
	if data, _ := parts[len(parts)-1].Data().(map[string]any); data["service"] != "github" || data["authType"] != "bearer" || data["agent"] != "issues" {
		t.Errorf("the auth-required status says %v, want service github, auth type bearer, agent issues", parts[len(parts)-1])
	}
	var appErr *temporal.ApplicationError
	var req wire.CredentialRequest
	if secret == nil || !errors.As(secret.rejected, &appErr) || appErr.Type() != wire.ErrTypeCredentialRequired || appErr.Details(&req) != nil {
		t.Fatalf("the plain secret: %+v, want refused as %s with the request in its details", secret, wire.ErrTypeCredentialRequired)
	}
	want := wire.CredentialRequest{Service: "github", AuthType: "bearer", Prompt: "A GitHub token, please.", Agent: "issues", RemoteTask: "remote-1"}
	if diff := cmp.Diff(want, req); diff != "" {
		t.Errorf("the request the API seals the credential for (-want +got):\n%s", diff)
	}
	if local == nil || !errors.As(local.rejected, &appErr) || appErr.Type() != wire.ErrTypeCredentialRequired {
		t.Errorf("a reference for the task's own use: %+v, want refused as %s", local, wire.ErrTypeCredentialRequired)
	}
	if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("2 open issues."))), viewStatus(completedTask(t, "reference", ref, start, 2*time.Minute))); diff != "" {
		t.Errorf("reference send: status (-want +got):\n%s", diff)
	}
	if answered != 0 {
		t.Errorf("CallRequest.Answer was asked %d times for a credential, want never", answered)
	}
	if len(sends) != 2 {
		t.Fatalf("%d sends, want the request and the credential", len(sends))
	}
	if got := sends[1]; got.Credential != "cred-1" || got.Message.TaskID != "remote-1" || got.Answered != "message:remote-question" {
		t.Errorf("the credential's send: credential %q to task %q answering %q, want cred-1 to remote-1 answering message:remote-question",
			got.Credential, got.Message.TaskID, got.Answered)
	}
	final := finalTask(t, env)
	for _, m := range append(final.History, final.Status.Message) {
		if strings.Contains(workflows.MessageText(m), secretText) {
			t.Errorf("the task holds the secret: %v", viewMessage(m))
		}
	}
}
