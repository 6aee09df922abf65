package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// The workflow ID of every test task, hence its task ID.
const (
	testTaskID    = "task-1"
	testContextID = "ctx-1"
)

// newTaskEnv returns a test environment running the task workflow for agents.
func newTaskEnv(t *testing.T, agents ...*workflows.Agent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	reg, err := engine.NewRegistry(agents...)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
	return env
}

// recordTaskStates records every A2ATaskState value the workflow upserts.
func recordTaskStates(env *testsuite.TestWorkflowEnvironment) *[]string {
	var states []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if v, ok := sa.GetKeyword(wire.TaskStateKey); ok {
			states = append(states, v)
		}
	})
	return &states
}

// userText returns a new user message holding text.
func userText(text string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.ID = a2a.NewMessageID()
	return m
}

func ptr[T any](v T) *T { return &v }

// update records what happened to one update sent to the test workflow.
type update struct {
	env           *testsuite.TestWorkflowEnvironment
	historyLength *int // what the sender asked of the task's history
	accepted      bool
	rejected      error
	done          bool
	task          *a2a.Task
	result        sendResult
	err           error
	at            time.Time // workflow clock when the update completed
}

func (u *update) callbacks() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept: func() { u.accepted = true },
		OnReject: func(err error) { u.rejected = err },
		OnComplete: func(v any, err error) {
			u.done, u.err, u.at = true, err, u.env.Now()
			u.task = resultTask(u.env, v, u.historyLength)
			u.result, _ = updateResult(v)
		},
	}
}

// sendMessage sends the UpdateSendMessage update; call it from a delayed callback.
func sendMessage(env *testsuite.TestWorkflowEnvironment, in wire.SendMessageInput) *update {
	u := &update{env: env, historyLength: in.HistoryLength}
	var id string
	if in.Message != nil {
		id = in.Message.ID
	}
	env.UpdateWorkflow(wire.UpdateSendMessage, id, u.callbacks(), in)
	return u
}

// cancelTask sends the UpdateCancelTask update; call it from a delayed callback.
func cancelTask(env *testsuite.TestWorkflowEnvironment) *update {
	u := &update{env: env}
	env.UpdateWorkflow(wire.UpdateCancelTask, "", u.callbacks(), wire.CancelTaskInput{})
	return u
}

// completedTask checks that the update was accepted and completed without
// error after elapsed on the workflow clock, and returns its task.
func completedTask(t *testing.T, name string, u *update, start time.Time, elapsed time.Duration) *a2a.Task {
	t.Helper()
	switch {
	case u == nil:
		t.Fatalf("%s: update never sent", name)
	case u.rejected != nil:
		t.Fatalf("%s: update rejected: %v", name, u.rejected)
	case !u.accepted || !u.done:
		t.Fatalf("%s: update accepted=%v completed=%v, want both", name, u.accepted, u.done)
	case u.err != nil:
		t.Fatalf("%s: update failed: %v", name, u.err)
	case u.task == nil:
		t.Fatalf("%s: update returned no task", name)
	}
	if got := u.at.Sub(start); got != elapsed {
		t.Errorf("%s: completed after %v, want %v", name, got, elapsed)
	}
	return u.task
}

// getTask queries the task; safe to call from a delayed callback.
func getTask(t *testing.T, env *testsuite.TestWorkflowEnvironment, historyLength *int) *a2a.Task {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{HistoryLength: historyLength})
	if err != nil {
		t.Errorf("query %s: %v", wire.QueryGetTask, err)
		return &a2a.Task{}
	}
	var task a2a.Task
	if err := v.Get(&task); err != nil {
		t.Errorf("decode %s result: %v", wire.QueryGetTask, err)
	}
	return &task
}

// finalTask runs nothing; it checks the workflow completed without error and
// returns the task it returned.
func finalTask(t *testing.T, env *testsuite.TestWorkflowEnvironment) *a2a.Task {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var task a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	return &task
}

// messageView is the part of a message the tests compare.
type messageView struct {
	Role a2a.MessageRole
	Text string
	Slot string
}

func viewMessage(m *a2a.Message) *messageView {
	if m == nil {
		return nil
	}
	slot, _ := m.Metadata["slot"].(string)
	return &messageView{Role: m.Role, Text: workflows.MessageText(m), Slot: slot}
}

func viewHistory(history []*a2a.Message) []messageView {
	var views []messageView
	for _, m := range history {
		views = append(views, *viewMessage(m))
	}
	return views
}

// statusView is the part of a task status the tests compare.
type statusView struct {
	State   a2a.TaskState
	Message *messageView
}

func viewStatus(task *a2a.Task) statusView {
	return statusView{State: task.Status.State, Message: viewMessage(task.Status.Message)}
}

func user(text string) messageView { return messageView{Role: a2a.MessageRoleUser, Text: text} }
func agent(text string) messageView {
	return messageView{Role: a2a.MessageRoleAgent, Text: text}
}
func question(slot, text string) messageView {
	return messageView{Role: a2a.MessageRoleAgent, Text: text, Slot: slot}
}
func status(state a2a.TaskState, m *messageView) statusView {
	return statusView{State: state, Message: m}
}

// TestAskTwiceThenComplete runs a task that asks twice, with its
// A2ATaskState written at every change and with merged writes
// (wire.MergedWrites: once per workflow task, when it changed).
func TestAskTwiceThenComplete(t *testing.T) {
	t.Run("per-change", func(t *testing.T) { testAskTwiceThenComplete(t, false) })
	t.Run("merged", func(t *testing.T) { testAskTwiceThenComplete(t, true) })
}

func testAskTwiceThenComplete(t *testing.T, merged bool) {
	type seen struct {
		ID        a2a.TaskID
		ContextID string
		Agent     string
		Text      string
	}
	var got seen
	planner := &workflows.Agent{
		Name:   "planner",
		Skills: []a2a.AgentSkill{{ID: "plan"}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			got = seen{ID: t.ID(), ContextID: t.ContextID(), Agent: t.Agent().Name, Text: t.Text()}
			dest, err := t.Ask(ctx, "destination", "Where to?")
			if err != nil {
				return err
			}
			date, err := t.Ask(ctx, "date", "When?")
			if err != nil {
				return err
			}
			t.Artifact(ctx, workflows.JSONArtifact("plan", map[string]string{
				"destination": workflows.MessageText(dest),
				"date":        workflows.MessageText(date),
			}))
			t.Reply(fmt.Sprintf("Planned %s on %s.", workflows.MessageText(dest), workflows.MessageText(date)))
			return nil
		},
	}
	env := newTaskEnv(t, planner)
	states := recordTaskStates(env)
	start := env.Now()

	first, lisbon, date := userText("Plan a trip"), userText("Lisbon"), userText("2026-12-24")
	var lastTwo *a2a.Task
	var beforeFirst error
	var sendFirst, sendLisbon, sendDate *update
	env.RegisterDelayedCallback(func() {
		// A workflow without a message is no task yet: GetTask does not find it.
		_, beforeFirst = env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
		sendFirst = sendMessage(env, wire.SendMessageInput{Message: first})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		lastTwo = getTask(t, env, ptr(2))
		sendLisbon = sendMessage(env, wire.SendMessageInput{Message: lisbon})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		sendDate = sendMessage(env, wire.SendMessageInput{Message: date})
	}, 3*time.Minute)

	in := wire.TaskInput{Agent: "planner", ContextID: testContextID}
	if merged {
		in.Recording = wire.MergedWrites
	}
	env.ExecuteWorkflow(wire.TaskWorkflowName, in)

	final := finalTask(t, env)

	if diff := cmp.Diff(seen{ID: testTaskID, ContextID: testContextID, Agent: "planner", Text: "Plan a trip"}, got); diff != "" {
		t.Errorf("task seen by the skill (-want +got):\n%s", diff)
	}
	var appErr *temporal.ApplicationError
	if !errors.As(beforeFirst, &appErr) || appErr.Type() != wire.ErrTypeTaskNotFound {
		t.Errorf("GetTask before the first message: error %v, want %s", beforeFirst, wire.ErrTypeTaskNotFound)
	}
	if diff := cmp.Diff([]messageView{user("Plan a trip"), question("destination", "Where to?")}, viewHistory(lastTwo.History)); diff != "" {
		t.Errorf("query with historyLength 2 (-want +got):\n%s", diff)
	}

	// Each blocking send answers with the task at its next interruption.
	steps := []struct {
		name    string
		u       *update
		elapsed time.Duration
		want    statusView
	}{
		{"first message", sendFirst, time.Minute, status(a2a.TaskStateInputRequired, ptr(question("destination", "Where to?")))},
		{"destination", sendLisbon, 2 * time.Minute, status(a2a.TaskStateInputRequired, ptr(question("date", "When?")))},
		{"date", sendDate, 3 * time.Minute, status(a2a.TaskStateCompleted, ptr(agent("Planned Lisbon on 2026-12-24.")))},
	}
	for _, s := range steps {
		task := completedTask(t, s.name, s.u, start, s.elapsed)
		if diff := cmp.Diff(s.want, viewStatus(task)); diff != "" {
			t.Errorf("%s: returned status (-want +got):\n%s", s.name, diff)
		}
	}

	if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("Planned Lisbon on 2026-12-24."))), viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	wantHistory := []messageView{
		user("Plan a trip"),
		question("destination", "Where to?"),
		user("Lisbon"),
		question("date", "When?"),
		user("2026-12-24"),
		agent("Planned Lisbon on 2026-12-24."),
	}
	if diff := cmp.Diff(wantHistory, viewHistory(final.History)); diff != "" {
		t.Errorf("final history (-want +got):\n%s", diff)
	}
	var ids []string
	for _, m := range final.History {
		ids = append(ids, m.ID)
		if m.TaskID != testTaskID || m.ContextID != testContextID {
			t.Errorf("message %s: taskId %q contextId %q, want %q %q", m.ID, m.TaskID, m.ContextID, testTaskID, testContextID)
		}
	}
	wantIDs := []string{first.ID, "task-1-agent-1", lisbon.ID, "task-1-agent-2", date.ID, "task-1-agent-3"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("history message IDs (-want +got):\n%s", diff)
	}
	if final.ID != testTaskID || final.ContextID != testContextID {
		t.Errorf("final task id %q context %q, want %q %q", final.ID, final.ContextID, testTaskID, testContextID)
	}

	// The workflow result went through the JSON data converter: numbers are
	// float64 and the JSON artifact's data is a map.
	type artifactView struct {
		ID        a2a.ArtifactID
		Name      string
		Metadata  map[string]any
		MediaType string
		Data      any
	}
	var artifacts []artifactView
	for _, a := range final.Artifacts {
		v := artifactView{ID: a.ID, Name: a.Name, Metadata: a.Metadata}
		if len(a.Parts) == 1 {
			v.MediaType, v.Data = a.Parts[0].MediaType, a.Parts[0].Data()
		}
		artifacts = append(artifacts, v)
	}
	wantArtifacts := []artifactView{{
		ID:        "task-1-artifact-1",
		Name:      "plan",
		Metadata:  map[string]any{"version": float64(1)},
		MediaType: "application/json",
		Data:      map[string]any{"destination": "Lisbon", "date": "2026-12-24"},
	}}
	if diff := cmp.Diff(wantArtifacts, artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}

	wantStates := []string{
		string(a2a.TaskStateWorking),
		string(a2a.TaskStateInputRequired),
		string(a2a.TaskStateWorking),
		string(a2a.TaskStateInputRequired),
		string(a2a.TaskStateWorking),
		string(a2a.TaskStateCompleted),
	}
	if merged {
		// The task starts working (the API's start says so); each answer
		// that ends with the next question writes nothing.
		wantStates = []string{string(a2a.TaskStateInputRequired), string(a2a.TaskStateCompleted)}
	}
	if diff := cmp.Diff(wantStates, *states); diff != "" {
		t.Errorf("upserted %s values (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
	}
	env.AssertExpectations(t)
}

func TestSendMessageBlocksUntilInterrupted(t *testing.T) {
	// The skill asks, thinks for ten minutes after the answer, asks again.
	thinker := &workflows.Agent{Name: "thinker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "first", "First?"); err != nil {
			return err
		}
		t.Progress(ctx, "Thinking...")
		if err := workflow.Sleep(ctx, 10*time.Minute); err != nil {
			return err
		}
		if _, err := t.Ask(ctx, "second", "Second?"); err != nil {
			return err
		}
		t.Reply("Done.")
		return nil
	}}
	tests := []struct {
		name              string
		returnImmediately bool
		historyLength     *int
		wantElapsed       time.Duration
		wantStatus        statusView
		wantHistory       []messageView
	}{
		{
			name:        "blocking send returns the next question",
			wantElapsed: 11 * time.Minute,
			wantStatus:  status(a2a.TaskStateInputRequired, ptr(question("second", "Second?"))),
			wantHistory: []messageView{user("start"), question("first", "First?"), user("answer"), agent("Thinking..."), question("second", "Second?")},
		},
		{
			name:          "blocking send with historyLength 1",
			historyLength: ptr(1),
			wantElapsed:   11 * time.Minute,
			wantStatus:    status(a2a.TaskStateInputRequired, ptr(question("second", "Second?"))),
			wantHistory:   []messageView{question("second", "Second?")},
		},
		{
			name:              "return immediately records the message and answers at once",
			returnImmediately: true,
			wantElapsed:       time.Minute,
			// The skill has not taken the answer yet: still the first question.
			wantStatus:  status(a2a.TaskStateInputRequired, ptr(question("first", "First?"))),
			wantHistory: []messageView{user("start"), question("first", "First?"), user("answer")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, thinker)
			states := recordTaskStates(env)
			start := env.Now()
			var answer, last *update
			env.RegisterDelayedCallback(func() {
				answer = sendMessage(env, wire.SendMessageInput{
					Message:           userText("answer"),
					ReturnImmediately: tt.returnImmediately,
					HistoryLength:     tt.historyLength,
				})
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				last = sendMessage(env, wire.SendMessageInput{Message: userText("last")})
			}, time.Hour)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "thinker", ContextID: testContextID, Message: userText("start")})

			task := completedTask(t, "answer", answer, start, tt.wantElapsed)
			if diff := cmp.Diff(tt.wantStatus, viewStatus(task)); diff != "" {
				t.Errorf("returned status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHistory, viewHistory(task.History)); diff != "" {
				t.Errorf("returned history (-want +got):\n%s", diff)
			}
			lastTask := completedTask(t, "last", last, start, time.Hour)
			if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("Done."))), viewStatus(lastTask)); diff != "" {
				t.Errorf("last send: returned status (-want +got):\n%s", diff)
			}
			if got := finalTask(t, env).Status.State; got != a2a.TaskStateCompleted {
				t.Errorf("final state = %s, want %s", got, a2a.TaskStateCompleted)
			}
			// Progress keeps the task working: no upsert for it.
			wantStates := []string{
				string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
				string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
				string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted),
			}
			if diff := cmp.Diff(wantStates, *states); diff != "" {
				t.Errorf("upserted states (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequireAuth: the task is auth-required, saying what it asks for; a
// plain answer (the secret itself) is refused before it is recorded, with
// what is asked for in the error's details, for the API to store it; the
// answer carrying the credential's reference completes the wait.
func TestRequireAuth(t *testing.T) {
	var got workflows.CredentialRef
	guarded := &workflows.Agent{Name: "guarded", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		ref, err := t.RequireCredential(ctx, workflows.CredentialRequest{Service: "github", AuthType: "bearer", Prompt: "Please sign in."})
		if err != nil {
			return err
		}
		got = ref
		t.Reply("Signed in with " + ref.Ref)
		return nil
	}}
	env := newTaskEnv(t, guarded)
	states := recordTaskStates(env)
	start := env.Now()
	var first, secret, ref *update
	env.RegisterDelayedCallback(func() {
		first = sendMessage(env, wire.SendMessageInput{Message: userText("hello")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		secret = sendMessage(env, wire.SendMessageInput{Message: userText("ghp_secret")})
	}, 90*time.Second)
	env.RegisterDelayedCallback(func() {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Credential provided for github."),
			a2a.NewDataPart(map[string]any{wire.CredentialRefKey: "cred-1", "service": "github", "authType": "bearer"}))
		ref = sendMessage(env, wire.SendMessageInput{Message: m})
	}, 2*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "guarded"})

	asked := completedTask(t, "first", first, start, time.Minute)
	if diff := cmp.Diff(status(a2a.TaskStateAuthRequired, ptr(question("github", "Please sign in."))), viewStatus(asked)); diff != "" {
		t.Errorf("first send: status (-want +got):\n%s", diff)
	}
	if data, _ := asked.Status.Message.Parts[1].Data().(map[string]any); data["service"] != "github" || data["authType"] != "bearer" {
		t.Errorf("the auth-required status says %v, want service github, auth type bearer", asked.Status.Message.Parts[1])
	}
	var appErr *temporal.ApplicationError
	var req wire.CredentialRequest
	if secret == nil || !errors.As(secret.rejected, &appErr) || appErr.Type() != wire.ErrTypeCredentialRequired ||
		appErr.Details(&req) != nil || req.Service != "github" {
		t.Errorf("the plain secret: %+v, want refused as %s with the request in its details", secret, wire.ErrTypeCredentialRequired)
	}
	if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("Signed in with cred-1"))), viewStatus(completedTask(t, "reference", ref, start, 2*time.Minute))); diff != "" {
		t.Errorf("reference send: status (-want +got):\n%s", diff)
	}
	if got != (workflows.CredentialRef{Ref: "cred-1", Service: "github", AuthType: "bearer"}) {
		t.Errorf("RequireCredential returned %+v", got)
	}
	final := finalTask(t, env)
	for _, m := range final.History {
		if strings.Contains(workflows.MessageText(m), "ghp_secret") {
			t.Errorf("history holds the secret: %v", viewMessage(m))
		}
	}
	want := []string{string(a2a.TaskStateWorking), string(a2a.TaskStateAuthRequired), string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted)}
	if diff := cmp.Diff(want, *states); diff != "" {
		t.Errorf("upserted states (-want +got):\n%s", diff)
	}
}

func TestSendMessageInvalidParamsRejected(t *testing.T) {
	// A part without content cannot cross the wire (a2a.Part refuses to
	// decode it), but a null part can.
	nilPart := userText("x")
	nilPart.Parts = a2a.ContentParts{nil}
	tests := []struct {
		name    string
		message *a2a.Message
		wantMsg string
	}{
		{"no message", nil, "message is required"},
		{"no message ID", &a2a.Message{Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}, "message.messageId is required"},
		{"agent role", &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}, `message.role must be user, got "ROLE_AGENT"`},
		{"empty parts", &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser}, "message.parts must not be empty"},
		{"null part", nilPart, "message.parts[0] has no content"},
		{"other task", &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, TaskID: "task-2", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}, `message.taskId "task-2" does not match task "task-1"`},
		{"other context", &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, ContextID: "ctx-2", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}, `message.contextId "ctx-2" does not match the task's context "ctx-1"`},
	}
	asker := &workflows.Agent{Name: "asker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := t.Ask(ctx, "q", "Question?")
		if err != nil {
			return err
		}
		t.Reply("Got " + workflows.MessageText(answer))
		return nil
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, asker)
			var bad, good *update
			var between *a2a.Task
			env.RegisterDelayedCallback(func() {
				bad = sendMessage(env, wire.SendMessageInput{Message: tt.message})
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				between = getTask(t, env, nil)
				good = sendMessage(env, wire.SendMessageInput{Message: userText("valid")})
			}, 2*time.Minute)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", ContextID: testContextID, Message: userText("start")})

			if bad == nil {
				t.Fatal("invalid message never sent")
			}
			if bad.accepted || bad.done {
				t.Errorf("invalid message accepted=%v completed=%v, want rejected", bad.accepted, bad.done)
			}
			checkRejected(t, "invalid message", bad.rejected, wire.ErrTypeInvalidParams, tt.wantMsg)
			// The rejected message left no trace and the task kept waiting.
			wantBetween := []messageView{user("start"), question("q", "Question?")}
			if diff := cmp.Diff(wantBetween, viewHistory(between.History)); diff != "" {
				t.Errorf("history after the rejection (-want +got):\n%s", diff)
			}
			if good == nil || !good.done || good.task == nil {
				t.Fatalf("valid message after the rejection did not complete: %+v", good)
			}
			if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("Got valid"))), viewStatus(finalTask(t, env))); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOtherAgentsEndpointDoesNotSeeTheTask(t *testing.T) {
	asker := &workflows.Agent{Name: "asker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := t.Ask(ctx, "q", "Question?")
		if err != nil {
			return err
		}
		t.Reply("Got " + workflows.MessageText(answer))
		return nil
	}}
	tests := []struct {
		name      string
		agent     string
		wantFound bool
	}{
		{"same agent", "asker", true},
		{"no agent skips the check", "", true},
		{"other agent", "other", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, asker, &workflows.Agent{Name: "other", Handle: asker.Handle})
			var queryErr error
			var cancel, send, finish *update
			env.RegisterDelayedCallback(func() {
				_, queryErr = env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{Agent: tt.agent})
				if !tt.wantFound { // a found task would be canceled
					cancel = &update{env: env}
					env.UpdateWorkflow(wire.UpdateCancelTask, "", cancel.callbacks(), wire.CancelTaskInput{Agent: tt.agent})
				}
				send = sendMessage(env, wire.SendMessageInput{Agent: tt.agent, Message: userText("answer")})
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				finish = sendMessage(env, wire.SendMessageInput{Message: userText("from the right endpoint")})
			}, 2*time.Minute)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "asker", Message: userText("start")})

			final := finalTask(t, env)
			if tt.wantFound {
				if queryErr != nil {
					t.Errorf("query: %v", queryErr)
				}
				if send.rejected != nil || !send.done {
					t.Errorf("send: rejected %v, completed %v", send.rejected, send.done)
				}
				if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("Got answer"))), viewStatus(final)); diff != "" {
					t.Errorf("final status (-want +got):\n%s", diff)
				}
				return
			}
			if queryErr == nil || !strings.Contains(queryErr.Error(), "task task-1 not found") {
				t.Errorf("query error = %v, want task task-1 not found", queryErr)
			}
			checkRejected(t, "send", send.rejected, wire.ErrTypeTaskNotFound, "task task-1 not found")
			checkRejected(t, "cancel", cancel.rejected, wire.ErrTypeTaskNotFound, "task task-1 not found")
			if finish == nil || !finish.done {
				t.Fatal("the message from the right endpoint did not complete")
			}
			want := []messageView{user("start"), question("q", "Question?"), user("from the right endpoint"), agent("Got from the right endpoint")}
			if diff := cmp.Diff(want, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
		})
	}
}

// checkRejected checks err is an application error of type wantType and message wantMsg.
func checkRejected(t *testing.T, name string, err error, wantType, wantMsg string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Errorf("%s: rejection = %v, want *temporal.ApplicationError", name, err)
		return
	}
	if appErr.Type() != wantType || appErr.Message() != wantMsg {
		t.Errorf("%s: rejection type %q message %q, want %q %q", name, appErr.Type(), appErr.Message(), wantType, wantMsg)
	}
}

func TestInvalidFirstMessageFailsTheRun(t *testing.T) {
	env := newTaskEnv(t, &workflows.Agent{Name: "noop", Handle: func(workflow.Context, *workflows.Task) error { return nil }})
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{
		Agent:   "noop",
		Message: &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("x")}},
	})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeInvalidParams {
		t.Errorf("workflow error = %v, want an application error of type %s", err, wire.ErrTypeInvalidParams)
	}
}

// TestTerminalTaskRefusesWrites reaches a terminal task that is still
// running: the skill registers its own update handler that is still busy
// when the skill returns, so the workflow drains it while completed.
func TestTerminalTaskRefusesWrites(t *testing.T) {
	holder := &workflows.Agent{Name: "holder", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if err := workflow.SetUpdateHandler(ctx, "hold", func(ctx workflow.Context) error {
			return workflow.Sleep(ctx, time.Hour)
		}); err != nil {
			return err
		}
		if _, err := t.Ask(ctx, "go", "Ready?"); err != nil {
			return err
		}
		t.Reply("Done.")
		return nil
	}}
	env := newTaskEnv(t, holder)
	start := env.Now()
	hold := &update{env: env}
	var answer, late, cancel, otherAgent *update
	var draining *a2a.Task
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow("hold", "hold-1", hold.callbacks())
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		answer = sendMessage(env, wire.SendMessageInput{Message: userText("yes")})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		draining = getTask(t, env, nil)
		late = sendMessage(env, wire.SendMessageInput{Message: userText("too late")})
		cancel = cancelTask(env)
		otherAgent = sendMessage(env, wire.SendMessageInput{Agent: "other", Message: userText("too late")})
	}, 3*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "holder", ContextID: testContextID, Message: userText("start")})

	completedTask(t, "answer", answer, start, 2*time.Minute)
	if !hold.done || hold.at.Sub(start) != 61*time.Minute {
		t.Fatalf("hold update done=%v after %v, want done after 61m", hold.done, hold.at.Sub(start))
	}
	if draining.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state while draining = %s, want %s", draining.Status.State, a2a.TaskStateCompleted)
	}
	rejections := []struct {
		name     string
		u        *update
		wantType string
		wantMsg  string
	}{
		{"SendMessage", late, wire.ErrTypeUnsupportedOperation, "task task-1 is TASK_STATE_COMPLETED and accepts no more messages"},
		{"CancelTask", cancel, wire.ErrTypeTaskNotCancelable, "task task-1 is already TASK_STATE_COMPLETED"},
		// Another agent's endpoint learns nothing, not even that the task ended.
		{"SendMessage from another agent", otherAgent, wire.ErrTypeTaskNotFound, "task task-1 not found"},
	}
	for _, r := range rejections {
		if r.u == nil {
			t.Fatalf("%s never sent", r.name)
		}
		if r.u.accepted || r.u.done {
			t.Errorf("%s on a completed task: accepted=%v completed=%v, want rejected", r.name, r.u.accepted, r.u.done)
		}
		checkRejected(t, r.name, r.u.rejected, r.wantType, r.wantMsg)
	}
	final := finalTask(t, env)
	want := []messageView{user("start"), question("go", "Ready?"), user("yes"), agent("Done.")}
	if diff := cmp.Diff(want, viewHistory(final.History)); diff != "" {
		t.Errorf("final history (-want +got):\n%s", diff)
	}
}

func TestAskWithTimeout(t *testing.T) {
	tests := []struct {
		name        string
		answerAfter time.Duration // 0: never
		wantTimeout bool
		wantStatus  statusView
	}{
		{
			name:        "no answer in time fails the task",
			wantTimeout: true,
			wantStatus: status(a2a.TaskStateFailed, ptr(agent(
				"no answer came in time (approval, waited 1h0m0s)"))),
		},
		{
			name:        "answer in time",
			answerAfter: 30 * time.Minute,
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("Approved: ok"))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var timedOut bool
			var askedAt, returnedAt time.Time
			approver := &workflows.Agent{Name: "approver", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				askedAt = workflow.Now(ctx)
				answer, err := t.Ask(ctx, "approval", "Approve?", workflows.WithTimeout(time.Hour))
				returnedAt = workflow.Now(ctx)
				if err != nil {
					timedOut = errors.Is(err, workflows.ErrAskTimeout)
					return err
				}
				t.Reply("Approved: " + workflows.MessageText(answer))
				return nil
			}}
			env := newTaskEnv(t, approver)
			if tt.answerAfter > 0 {
				env.RegisterDelayedCallback(func() {
					sendMessage(env, wire.SendMessageInput{Message: userText("ok")})
				}, tt.answerAfter)
			}

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "approver", Message: userText("please approve")})

			final := finalTask(t, env)
			if timedOut != tt.wantTimeout {
				t.Errorf("errors.Is(err, ErrAskTimeout) = %v, want %v", timedOut, tt.wantTimeout)
			}
			wantWait := tt.answerAfter
			if tt.wantTimeout {
				wantWait = time.Hour
			}
			if got := returnedAt.Sub(askedAt); got != wantWait {
				t.Errorf("Ask returned after %v, want %v", got, wantWait)
			}
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCancelTaskWhileWaitingForInput(t *testing.T) {
	var askErr error
	var cleanedUp bool
	careful := &workflows.Agent{Name: "careful", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		defer func() {
			// Cleanup must outlive the canceled skill context.
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			cleanedUp = workflow.Sleep(dctx, time.Minute) == nil
		}()
		_, err := t.Ask(ctx, "confirm", "Confirm?")
		askErr = err
		return err
	}}
	env := newTaskEnv(t, careful)
	states := recordTaskStates(env)
	start := env.Now()
	var cancel *update
	env.RegisterDelayedCallback(func() { cancel = cancelTask(env) }, 5*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "careful", ContextID: testContextID, Message: userText("start")})

	// The cancel answers once the cleanup ran and the task is canceled.
	got := completedTask(t, "cancel", cancel, start, 6*time.Minute)
	wantStatus := status(a2a.TaskStateCanceled, ptr(agent("The task was canceled.")))
	if diff := cmp.Diff(wantStatus, viewStatus(got)); diff != "" {
		t.Errorf("cancel result (-want +got):\n%s", diff)
	}
	var canceledErr *temporal.CanceledError
	if !errors.As(askErr, &canceledErr) {
		t.Errorf("Ask error = %v, want *temporal.CanceledError", askErr)
	}
	if !cleanedUp {
		t.Error("deferred cleanup on a disconnected context did not run")
	}
	final := finalTask(t, env)
	if diff := cmp.Diff(wantStatus, viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	wantHistory := []messageView{user("start"), question("confirm", "Confirm?"), agent("The task was canceled.")}
	if diff := cmp.Diff(wantHistory, viewHistory(final.History)); diff != "" {
		t.Errorf("final history (-want +got):\n%s", diff)
	}
	wantStates := []string{string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired), string(a2a.TaskStateCanceled)}
	if diff := cmp.Diff(wantStates, *states); diff != "" {
		t.Errorf("upserted states (-want +got):\n%s", diff)
	}
}

func TestCancelTaskBeforeFirstMessage(t *testing.T) {
	var ran bool
	env := newTaskEnv(t, &workflows.Agent{Name: "never", Handle: func(workflow.Context, *workflows.Task) error {
		ran = true
		return nil
	}})
	start := env.Now()
	var cancel *update
	env.RegisterDelayedCallback(func() { cancel = cancelTask(env) }, time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "never"})

	// The update completes; the API would then find no task: a workflow
	// that never got a message is none (its result says so).
	if cancel == nil || !cancel.done || cancel.err != nil || cancel.at.Sub(start) != time.Minute {
		t.Fatalf("cancel = %+v, want completed after a minute", cancel)
	}
	wantStatus := status(a2a.TaskStateCanceled, ptr(agent("The task was canceled.")))
	var result wire.TaskSnapshot
	if err := env.GetWorkflowResult(&result); err != nil || !result.NoTask {
		t.Errorf("result NoTask = %v (error %v), want true", result.NoTask, err)
	}
	if ran {
		t.Error("the skill ran for a task canceled before its first message")
	}
	if diff := cmp.Diff(wantStatus, viewStatus(finalTask(t, env))); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
}

func TestWorkflowCancellationCancelsTheTask(t *testing.T) {
	var cleanedUp bool
	careful := &workflows.Agent{Name: "careful", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		defer func() {
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			cleanedUp = workflow.Sleep(dctx, time.Minute) == nil
		}()
		_, err := t.Ask(ctx, "confirm", "Confirm?")
		return err
	}}
	env := newTaskEnv(t, careful)
	states := recordTaskStates(env)
	env.RegisterDelayedCallback(env.CancelWorkflow, 5*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "careful", Message: userText("start")})

	final := finalTask(t, env)
	if diff := cmp.Diff(status(a2a.TaskStateCanceled, ptr(agent("The task was canceled."))), viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if !cleanedUp {
		t.Error("deferred cleanup on a disconnected context did not run")
	}
	if got, want := (*states)[len(*states)-1], string(a2a.TaskStateCanceled); got != want {
		t.Errorf("last upserted state = %s, want %s", got, want)
	}
}

func TestCancelTaskAnswersABlockedSend(t *testing.T) {
	slow := &workflows.Agent{Name: "slow", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "q", "Question?"); err != nil {
			return err
		}
		t.Progress(ctx, "Working on it...")
		return workflow.Sleep(ctx, time.Hour)
	}}
	env := newTaskEnv(t, slow)
	start := env.Now()
	var answer, cancel *update
	env.RegisterDelayedCallback(func() {
		answer = sendMessage(env, wire.SendMessageInput{Message: userText("answer")})
	}, time.Minute)
	env.RegisterDelayedCallback(func() { cancel = cancelTask(env) }, 2*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "slow", Message: userText("start")})

	want := status(a2a.TaskStateCanceled, ptr(agent("The task was canceled.")))
	for _, u := range []struct {
		name string
		u    *update
	}{{"blocked SendMessage", answer}, {"CancelTask", cancel}} {
		if diff := cmp.Diff(want, viewStatus(completedTask(t, u.name, u.u, start, 2*time.Minute))); diff != "" {
			t.Errorf("%s: returned status (-want +got):\n%s", u.name, diff)
		}
	}
	if diff := cmp.Diff(want, viewStatus(finalTask(t, env))); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
}

// TestWorkflowCancellationAnswersABlockedSend documents a bug: the update
// handlers wait on the workflow's root context, so when the workflow itself is
// canceled (Temporal UI, `temporal workflow cancel`) a blocked SendMessage
// fails with a CanceledError instead of returning the canceled task.
func TestWorkflowCancellationAnswersABlockedSend(t *testing.T) {
	slow := &workflows.Agent{Name: "slow", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "q", "Question?"); err != nil {
			return err
		}
		return workflow.Sleep(ctx, time.Hour)
	}}
	env := newTaskEnv(t, slow)
	start := env.Now()
	var answer *update
	env.RegisterDelayedCallback(func() {
		answer = sendMessage(env, wire.SendMessageInput{Message: userText("answer")})
	}, time.Minute)
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "slow", Message: userText("start")})

	got := completedTask(t, "blocked SendMessage", answer, start, 2*time.Minute)
	if diff := cmp.Diff(status(a2a.TaskStateCanceled, ptr(agent("The task was canceled."))), viewStatus(got)); diff != "" {
		t.Errorf("returned status (-want +got):\n%s", diff)
	}
}

// TestAskTimeoutHandledByTheSkill documents a bug: when a skill handles
// ErrAskTimeout and goes on working, the task stays input-required with the
// stale question, and an answer sent then is recorded and silently dropped.
func TestAskTimeoutHandledByTheSkill(t *testing.T) {
	patient := &workflows.Agent{Name: "patient", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		_, err := t.Ask(ctx, "q", "Question?", workflows.WithTimeout(time.Hour))
		if !errors.Is(err, workflows.ErrAskTimeout) {
			return fmt.Errorf("Ask = %v, want a timeout", err)
		}
		t.Reply("Went on with the default.")
		return workflow.Sleep(ctx, time.Hour) // work with a default answer
	}}
	env := newTaskEnv(t, patient)
	states := recordTaskStates(env)
	var during *a2a.Task
	env.RegisterDelayedCallback(func() { during = getTask(t, env, nil) }, 90*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "patient", Message: userText("start")})

	finalTask(t, env)
	if diff := cmp.Diff(status(a2a.TaskStateWorking, nil), viewStatus(during)); diff != "" {
		t.Errorf("status while working after the timeout (-want +got):\n%s", diff)
	}
	want := []string{
		string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
		string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted),
	}
	if diff := cmp.Diff(want, *states); diff != "" {
		t.Errorf("upserted states (-want +got):\n%s", diff)
	}
}

// chargeCard is a test activity; the tests mock it.
func chargeCard(ctx context.Context, amount int) error { return nil }

func TestTaskOutcome(t *testing.T) {
	charge := func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		if err := workflow.ExecuteActivity(ctx, chargeCard, 42).Get(ctx, nil); err != nil {
			return fmt.Errorf("charge the card: %w", err)
		}
		return nil
	}
	tests := []struct {
		name        string
		agent       string // default "skill"
		handle      workflows.Handler
		activityErr error
		wantStatus  statusView
	}{
		{
			name:       "nil completes without a reply",
			handle:     func(workflow.Context, *workflows.Task) error { return nil },
			wantStatus: status(a2a.TaskStateCompleted, nil),
		},
		{
			name: "reply is the completed status",
			handle: func(ctx workflow.Context, t *workflows.Task) error {
				t.Reply("draft")
				t.Reply("All done.")
				return nil
			},
			wantStatus: status(a2a.TaskStateCompleted, ptr(agent("All done."))),
		},
		{
			name: "Reject rejects with the reason",
			handle: func(workflow.Context, *workflows.Task) error {
				return workflows.Reject("I only book flights.")
			},
			wantStatus: status(a2a.TaskStateRejected, ptr(agent("I only book flights."))),
		},
		{
			name: "wrapped Reject still rejects",
			handle: func(workflow.Context, *workflows.Task) error {
				return fmt.Errorf("routing: %w", workflows.Reject("Not my job."))
			},
			wantStatus: status(a2a.TaskStateRejected, ptr(agent("Not my job."))),
		},
		{
			name: "plain error fails with its message",
			handle: func(workflow.Context, *workflows.Task) error {
				return errors.New("the database is down")
			},
			wantStatus: status(a2a.TaskStateFailed, ptr(agent("the database is down"))),
		},
		{
			name: "activity application error fails with the skill's words and the inner message",
			handle: func(ctx workflow.Context, _ *workflows.Task) error {
				return charge(ctx)
			},
			activityErr: temporal.NewNonRetryableApplicationError("card declined", "Declined", nil),
			wantStatus:  status(a2a.TaskStateFailed, ptr(agent("charge the card: card declined"))),
		},
		{
			name: "activity plain error fails with the skill's words and its message",
			handle: func(ctx workflow.Context, _ *workflows.Task) error {
				return charge(ctx)
			},
			activityErr: errors.New("gateway timeout"),
			wantStatus:  status(a2a.TaskStateFailed, ptr(agent("charge the card: gateway timeout"))),
		},
		{
			name:       "unknown agent fails",
			agent:      "nobody",
			handle:     func(workflow.Context, *workflows.Task) error { return nil },
			wantStatus: status(a2a.TaskStateFailed, ptr(agent(`agent "nobody" is not served by this worker`))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, &workflows.Agent{Name: "skill", Handle: tt.handle})
			if tt.activityErr != nil {
				env.OnActivity(chargeCard, mock.Anything, 42).Return(tt.activityErr).Once()
			}
			name := tt.agent
			if name == "" {
				name = "skill"
			}
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: name, Message: userText("go")})

			final := finalTask(t, env) // the Temporal run itself never fails
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			want := []messageView{user("go")}
			if tt.wantStatus.Message != nil {
				want = append(want, *tt.wantStatus.Message)
			}
			if diff := cmp.Diff(want, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			env.AssertExpectations(t)
		})
	}
}

func TestArtifactVersions(t *testing.T) {
	var returned, listed []*a2a.Artifact
	var callerMeta map[string]any
	var callerID a2a.ArtifactID
	reporter := &workflows.Agent{Name: "reporter", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		returned = append(returned, t.Artifact(ctx, workflows.TextArtifact("report", "draft")))
		withMeta := workflows.TextArtifact("report", "final")
		withMeta.Metadata = map[string]any{"author": "bot"}
		returned = append(returned, t.Artifact(ctx, withMeta))
		callerMeta, callerID = withMeta.Metadata, withMeta.ID
		returned = append(returned, t.Artifact(ctx, workflows.TextArtifact("summary", "short")))
		listed = t.Artifacts()
		return nil
	}}
	env := newTaskEnv(t, reporter)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "reporter", Message: userText("report")})
	final := finalTask(t, env)

	type artifactView struct {
		ID       a2a.ArtifactID
		Name     string
		Text     string
		Metadata map[string]any
	}
	view := func(as []*a2a.Artifact) []artifactView {
		var vs []artifactView
		for _, a := range as {
			var texts []string
			for _, p := range a.Parts {
				texts = append(texts, p.Text())
			}
			vs = append(vs, artifactView{ID: a.ID, Name: a.Name, Text: strings.Join(texts, "\n"), Metadata: a.Metadata})
		}
		return vs
	}
	// Inside the workflow the version is an int; after the JSON round trip a float64.
	want := func(version func(int) any) []artifactView {
		return []artifactView{
			{ID: "task-1-artifact-1", Name: "report", Text: "draft", Metadata: map[string]any{"version": version(1)}},
			{ID: "task-1-artifact-2", Name: "report", Text: "final", Metadata: map[string]any{"version": version(2), "author": "bot"}},
			{ID: "task-1-artifact-3", Name: "summary", Text: "short", Metadata: map[string]any{"version": version(1)}},
		}
	}
	asInt := func(v int) any { return v }
	asFloat := func(v int) any { return float64(v) }
	if diff := cmp.Diff(want(asInt), view(returned)); diff != "" {
		t.Errorf("artifacts returned by Artifact (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(asInt), view(listed)); diff != "" {
		t.Errorf("Artifacts() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(asFloat), view(final.Artifacts)); diff != "" {
		t.Errorf("final artifacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"author": "bot"}, callerMeta); diff != "" || callerID != "" {
		t.Errorf("the caller's artifact was changed: id %q, metadata (-want +got):\n%s", callerID, diff)
	}
}

// slowStep is a test activity; the tests mock it.
func slowStep(ctx context.Context) error { return nil }

func TestMessagesWhileWorkingAnswerTheNextAsks(t *testing.T) {
	tests := []struct {
		name        string
		work        func(ctx workflow.Context, t *workflows.Task) error
		mockSlow    bool
		wantHistory []messageView
	}{
		{
			name: "between progress steps",
			work: func(ctx workflow.Context, t *workflows.Task) error {
				t.Progress(ctx, "Step 1")
				if err := workflow.Sleep(ctx, 10*time.Minute); err != nil {
					return err
				}
				t.Progress(ctx, "Step 2")
				return workflow.Sleep(ctx, 10*time.Minute)
			},
			wantHistory: []messageView{
				user("start"), agent("Step 1"), user("early one"), user("early two"), agent("Step 2"),
				question("first", "First?"), question("second", "Second?"), agent("early one / early two"),
			},
		},
		{
			name: "while an activity runs",
			work: func(ctx workflow.Context, t *workflows.Task) error {
				t.Progress(ctx, "Working")
				ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Hour})
				return workflow.ExecuteActivity(ctx, slowStep).Get(ctx, nil)
			},
			mockSlow: true,
			wantHistory: []messageView{
				user("start"), agent("Working"), user("early one"), user("early two"),
				question("first", "First?"), question("second", "Second?"), agent("early one / early two"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy := &workflows.Agent{Name: "busy", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				if err := tt.work(ctx, t); err != nil {
					return err
				}
				a1, err := t.Ask(ctx, "first", "First?")
				if err != nil {
					return err
				}
				a2, err := t.Ask(ctx, "second", "Second?")
				if err != nil {
					return err
				}
				t.Reply(workflows.MessageText(a1) + " / " + workflows.MessageText(a2))
				return nil
			}}
			env := newTaskEnv(t, busy)
			if tt.mockSlow {
				env.OnActivity(slowStep, mock.Anything).Return(nil).After(20 * time.Minute).Once()
			}
			start := env.Now()
			var one, two *update
			env.RegisterDelayedCallback(func() {
				one = sendMessage(env, wire.SendMessageInput{Message: userText("early one")})
			}, 5*time.Minute)
			env.RegisterDelayedCallback(func() {
				two = sendMessage(env, wire.SendMessageInput{Message: userText("early two")})
			}, 6*time.Minute)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "busy", Message: userText("start")})

			// Both blocking sends answer when the task next stops: here, completed.
			wantStatus := status(a2a.TaskStateCompleted, ptr(agent("early one / early two")))
			for _, s := range []struct {
				name string
				u    *update
			}{{"early one", one}, {"early two", two}} {
				if diff := cmp.Diff(wantStatus, viewStatus(completedTask(t, s.name, s.u, start, 20*time.Minute))); diff != "" {
					t.Errorf("%s: returned status (-want +got):\n%s", s.name, diff)
				}
			}
			final := finalTask(t, env)
			if diff := cmp.Diff(wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			env.AssertExpectations(t)
		})
	}
}

func TestLastMessages(t *testing.T) {
	history := []*a2a.Message{userText("a"), userText("b"), userText("c")}
	tests := []struct {
		name          string
		historyLength *int
		want          []string
	}{
		{"nil keeps all", nil, []string{"a", "b", "c"}},
		{"0 keeps none", ptr(0), nil},
		{"negative keeps none", ptr(-1), nil},
		{"1 keeps the last", ptr(1), []string{"c"}},
		{"2 keeps the last two", ptr(2), []string{"b", "c"}},
		{"len keeps all", ptr(3), []string{"a", "b", "c"}},
		{"more than len keeps all", ptr(10), []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire.LastMessages(history, tt.historyLength)
			var texts []string
			for _, m := range got {
				texts = append(texts, workflows.MessageText(m))
			}
			if diff := cmp.Diff(tt.want, texts); diff != "" {
				t.Errorf("LastMessages (-want +got):\n%s", diff)
			}
			if len(got) > 0 && len(history) > 0 {
				got[0] = nil // the result is a copy: the history is untouched
				if history[0] == nil {
					t.Fatal("LastMessages returned the history's own backing array")
				}
			}
		})
	}
	if got := wire.LastMessages(nil, ptr(2)); len(got) != 0 {
		t.Errorf("LastMessages(nil, 2) = %v, want empty", got)
	}
}

func TestNewRegistry(t *testing.T) {
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	named := func(name string) *workflows.Agent { return &workflows.Agent{Name: name, Handle: handle} }
	tests := []struct {
		name    string
		agents  []*workflows.Agent
		wantErr string // "" for success
	}{
		{"no agents", nil, "no agents"},
		{"nil agent", []*workflows.Agent{nil}, "name and handler are required"},
		{"empty name", []*workflows.Agent{named("")}, "name and handler are required"},
		{"nil handler", []*workflows.Agent{{Name: "idle"}}, "name and handler are required"},
		{"upper case", []*workflows.Agent{named("Travel")}, `agent "Travel": name must be lower-case letters, digits and '-'`},
		{"underscore", []*workflows.Agent{named("my_agent")}, `agent "my_agent": name must be`},
		{"space", []*workflows.Agent{named("my agent")}, `agent "my agent": name must be`},
		{"slash", []*workflows.Agent{named("a/b")}, `agent "a/b": name must be`},
		{"too long", []*workflows.Agent{named(strings.Repeat("a", 64))}, "name must be"},
		{"duplicate", []*workflows.Agent{named("echo"), named("travel"), named("echo")}, `agent "echo" registered twice`},
		{"longest name", []*workflows.Agent{named(strings.Repeat("a", 63))}, ""},
		{"valid names", []*workflows.Agent{named("travel-2"), named("echo")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := engine.NewRegistry(tt.agents...)
			if tt.wantErr == "" {
				if err != nil || reg == nil {
					t.Fatalf("NewRegistry = %v, %v; want a registry", reg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewRegistry error = %v, want one containing %q", err, tt.wantErr)
			}
			if reg != nil {
				t.Errorf("NewRegistry returned a registry with error %v", err)
			}
		})
	}
}

func TestRegistryLookup(t *testing.T) {
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "zeta", Handle: handle, Skills: []a2a.AgentSkill{{ID: "z1"}, {ID: "z2"}}},
		&workflows.Agent{Name: "beta", Handle: handle},
		&workflows.Agent{Name: "alpha", Handle: handle},
	)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zeta", "alpha", "beta"}, reg.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got := reg.Default().Name; got != "zeta" {
		t.Errorf("Default = %q, want zeta", got)
	}
	if got := reg.Default().DefaultSkill(); got != "z1" {
		t.Errorf("DefaultSkill = %q, want z1", got)
	}
	if a, ok := reg.Get("beta"); !ok || a.Name != "beta" || a.DefaultSkill() != "" {
		t.Errorf("Get(beta) = %v, %v", a, ok)
	}
	if _, ok := reg.Get("gamma"); ok {
		t.Error("Get(gamma) found an agent that is not registered")
	}
}

// resultTask returns the task as the API answers an update that completed
// with v: SendMessage and CancelTask answer a bounded TaskUpdateResult, and
// the API reads the task with the GetTask query right after.
func resultTask(env *testsuite.TestWorkflowEnvironment, v any, historyLength *int) *a2a.Task {
	if _, ok := updateResult(v); !ok {
		return nil
	}
	q, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{HistoryLength: historyLength})
	if err != nil {
		return nil
	}
	var task a2a.Task
	if q.Get(&task) != nil {
		return nil
	}
	return &task
}

// TestRejectMessageWhileWorking: an agent with the RejectMessage policy
// refuses a message sent while it works, and takes the next one once it asks.
func TestRejectMessageWhileWorking(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	reg, err := engine.NewRegistry(&workflows.Agent{
		Name:         "strict",
		WhileWorking: workflows.RejectMessage,
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			if err := workflow.Sleep(ctx, time.Hour); err != nil {
				return err
			}
			answer, err := t.Ask(ctx, "more", "More?")
			if err != nil {
				return err
			}
			t.Reply(workflows.MessageText(answer))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	var rejected error
	var accepted bool
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(wire.UpdateSendMessage, "busy", &testsuite.TestUpdateCallback{
			OnAccept:   func() { t.Error("message while working was accepted") },
			OnReject:   func(err error) { rejected = err },
			OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hurry"))})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(wire.UpdateSendMessage, "answer", &testsuite.TestUpdateCallback{
			OnAccept:   func() { accepted = true },
			OnReject:   func(err error) { t.Errorf("answer rejected: %v", err) },
			OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("yes"))})
	}, 2*time.Hour)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "strict", ContextID: "ctx",
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))})
	var appErr *temporal.ApplicationError
	if !errors.As(rejected, &appErr) || appErr.Type() != wire.ErrTypeUnsupportedOperation {
		t.Errorf("message while working: rejection %v, want %s", rejected, wire.ErrTypeUnsupportedOperation)
	}
	var task *a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		t.Fatal(err)
	}
	if !accepted || task.Status.State != a2a.TaskStateCompleted || workflows.MessageText(task.Status.Message) != "yes" {
		t.Errorf("final task %s %q, want completed with the answer", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	for _, m := range task.History {
		if workflows.MessageText(m) == "hurry" {
			t.Error("the rejected message is in history")
		}
	}
}

// artifactPartView is the part of an artifact part the tests compare.
type artifactPartView struct {
	Text      string
	Raw       []byte
	URL       a2a.URL
	Data      any
	Filename  string
	MediaType string
}

func viewArtifactParts(a *a2a.Artifact) []artifactPartView {
	var vs []artifactPartView
	for _, p := range a.Parts {
		vs = append(vs, artifactPartView{Text: p.Text(), Raw: p.Raw(), URL: p.URL(), Data: p.Data(), Filename: p.Filename, MediaType: p.MediaType})
	}
	return vs
}

func TestFileURLAndDataArtifacts(t *testing.T) {
	pdf := []byte("%PDF-1.7\x00\xff binary")
	tests := []struct {
		name     string
		artifact *a2a.Artifact
		want     []artifactPartView // after the task's JSON round trip
	}{
		{
			name:     "file bytes",
			artifact: workflows.FileArtifact("invoice", "invoice.pdf", "application/pdf", pdf),
			want:     []artifactPartView{{Raw: pdf, Filename: "invoice.pdf", MediaType: "application/pdf"}},
		},
		{
			name:     "file URL",
			artifact: workflows.URLArtifact("photo", "https://files.example.com/p/1.png", "image/png"),
			want:     []artifactPartView{{URL: "https://files.example.com/p/1.png", MediaType: "image/png"}},
		},
		{
			name:     "structured data",
			artifact: workflows.DataArtifact("quote", map[string]any{"price": 120, "currency": "EUR"}),
			want:     []artifactPartView{{Data: map[string]any{"price": float64(120), "currency": "EUR"}, MediaType: "application/json"}},
		},
		{
			name:     "JSON of a Go value",
			artifact: workflows.JSONArtifact("seats", []string{"12A", "12B"}),
			want:     []artifactPartView{{Data: []any{"12A", "12B"}, MediaType: "application/json"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var added *a2a.Artifact
			env := newTaskEnv(t, &workflows.Agent{Name: "files", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				added = t.Artifact(ctx, tt.artifact)
				return nil
			}})
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "files", Message: userText("go")})
			final := finalTask(t, env)
			if diff := cmp.Diff(status(a2a.TaskStateCompleted, nil), viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if len(final.Artifacts) != 1 {
				t.Fatalf("final task has %d artifacts, want 1", len(final.Artifacts))
			}
			got := final.Artifacts[0]
			if got.Name != tt.artifact.Name || got.ID != "task-1-artifact-1" || added == nil || added.ID != got.ID {
				t.Errorf("artifact %q with ID %q (returned %v), want %q with ID task-1-artifact-1", got.Name, got.ID, added, tt.artifact.Name)
			}
			if diff := cmp.Diff(tt.want, viewArtifactParts(got)); diff != "" {
				t.Errorf("artifact parts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestArtifactTooLarge: an artifact that would bring the task's artifacts
// over MaxArtifactBytes is refused and fails the task with a clear message;
// the workflow itself completes normally.
func TestArtifactTooLarge(t *testing.T) {
	const limit = workflows.MaxArtifactBytes
	bytesOf := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name string
		// add adds artifacts and reports whether the runtime took the last one.
		add           func(ctx workflow.Context, t *workflows.Task) bool
		wantState     a2a.TaskState
		wantMessage   string // contained in the status message; "" for none
		wantArtifacts []string
	}{
		{
			name: "file at the limit",
			add: func(ctx workflow.Context, t *workflows.Task) bool {
				return t.Artifact(ctx, workflows.FileArtifact("blob", "blob.bin", "application/octet-stream", bytesOf(limit))).ID != ""
			},
			wantState:     a2a.TaskStateCompleted,
			wantArtifacts: []string{"blob"},
		},
		{
			name: "file over the limit",
			add: func(ctx workflow.Context, t *workflows.Task) bool {
				return t.Artifact(ctx, workflows.FileArtifact("blob", "blob.bin", "application/octet-stream", bytesOf(limit+1))).ID != ""
			},
			wantState:   a2a.TaskStateFailed,
			wantMessage: `artifact too large: "blob" (32.0 MiB) would bring the task's artifacts to 32.0 MiB, over the limit of 32.0 MiB`,
		},
		{
			name: "two artifacts together over the limit",
			add: func(ctx workflow.Context, t *workflows.Task) bool {
				t.Artifact(ctx, workflows.FileArtifact("first", "a.bin", "application/octet-stream", bytesOf(20<<20)))
				return t.Artifact(ctx, workflows.TextArtifact("second", strings.Repeat("x", 20<<20))).ID != ""
			},
			wantState:     a2a.TaskStateFailed,
			wantMessage:   `"second" (20.0 MiB) would bring the task's artifacts to 40.0 MiB, over the limit of 32.0 MiB`,
			wantArtifacts: []string{"first"},
		},
		{
			name: "chunk over the limit",
			add: func(ctx workflow.Context, t *workflows.Task) bool {
				a := t.Artifact(ctx, workflows.TextArtifact("log", "start"))
				return t.ArtifactChunk(ctx, a.ID, a2a.ContentParts{a2a.NewRawPart(bytesOf(limit))}, true)
			},
			wantState:     a2a.TaskStateFailed,
			wantMessage:   `artifact too large: "log" (32.0 MiB) would bring the task's artifacts to 32.0 MiB`,
			wantArtifacts: []string{"log"},
		},
		{
			name: "data that is not JSON",
			add: func(ctx workflow.Context, t *workflows.Task) bool {
				return t.Artifact(ctx, workflows.JSONArtifact("odd", map[string]any{"ch": make(chan int)})).ID != ""
			},
			wantState:   a2a.TaskStateFailed,
			wantMessage: `artifact "odd": a data part is not JSON: json: unsupported type: chan int`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var took, workedOn bool
			env := newTaskEnv(t, &workflows.Agent{Name: "big", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				took = tt.add(ctx, t)
				// A refused artifact cancels ctx: the skill stops at its next wait.
				if err := workflow.Sleep(ctx, time.Hour); err != nil {
					return err
				}
				workedOn = true
				return nil
			}})
			// Tens of MiB in JSON take seconds in the workflow's coroutine:
			// the worker's deadlock detection allows it (WorkerOptions).
			env.SetWorkerOptions(engine.WorkerOptions())
			start := env.Now()
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "big", Message: userText("go")})
			final := finalTask(t, env)
			wantOK := tt.wantState == a2a.TaskStateCompleted
			if took != wantOK || workedOn != wantOK {
				t.Errorf("artifact taken = %v, skill worked on = %v; want both %v", took, workedOn, wantOK)
			}
			if final.Status.State != tt.wantState {
				t.Errorf("final state %s, want %s (status message %q)", final.Status.State, tt.wantState, workflows.MessageText(final.Status.Message))
			}
			if got := workflows.MessageText(final.Status.Message); !strings.Contains(got, tt.wantMessage) {
				t.Errorf("status message %q, want it to contain %q", got, tt.wantMessage)
			}
			var names []string
			for _, a := range final.Artifacts {
				names = append(names, a.Name)
			}
			if diff := cmp.Diff(tt.wantArtifacts, names); diff != "" {
				t.Errorf("final artifacts (-want +got):\n%s", diff)
			}
			if !wantOK && env.Now().Sub(start) != 0 {
				t.Errorf("the failed task ended after %v, want at once", env.Now().Sub(start))
			}
		})
	}
}

// TestInterruptWork: under the InterruptWork policy a message sent while the
// skill works in an Interruptible context cancels that work; the skill
// answers the message with Ask at once. Work outside a region, other
// policies and a cancel of the task are not interruptions.
func TestInterruptWork(t *testing.T) {
	tests := []struct {
		name       string
		policy     workflows.BusyPolicy
		plainFirst time.Duration // work outside any region before the region
		activity   bool          // the region runs slowStep (1h) rather than sleeping 1h
		cancel     bool          // CancelTask at 5 min instead of a message
		// wants
		interrupted bool
		canceledErr bool          // the region's work ended with a canceled error
		answeredAt  time.Duration // when the blocking send (or cancel) answered
		wantStatus  statusView
		wantHistory []messageView
	}{
		{
			name: "a message interrupts an activity", policy: workflows.InterruptWork, activity: true,
			interrupted: true, canceledErr: true, answeredAt: 5 * time.Minute,
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("on it: stop"))),
			wantHistory: []messageView{user("start"), user("stop"), question("next", "What now?"), agent("on it: stop")},
		},
		{
			name: "a message interrupts a sleep", policy: workflows.InterruptWork,
			interrupted: true, canceledErr: true, answeredAt: 5 * time.Minute,
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("on it: stop"))),
			wantHistory: []messageView{user("start"), user("stop"), question("next", "What now?"), agent("on it: stop")},
		},
		{
			name: "work outside a region runs on; the region then starts interrupted", policy: workflows.InterruptWork,
			plainFirst: 30 * time.Minute, interrupted: true, canceledErr: true, answeredAt: 30 * time.Minute,
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("on it: stop"))),
			wantHistory: []messageView{user("start"), user("stop"), question("next", "What now?"), agent("on it: stop")},
		},
		{
			name: "the enqueue policy does not interrupt", policy: workflows.EnqueueMessage, activity: true,
			answeredAt:  time.Hour,
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("on it: stop"))),
			wantHistory: []messageView{user("start"), user("stop"), question("next", "What now?"), agent("on it: stop")},
		},
		{
			name: "a cancel of the task is not an interruption", policy: workflows.InterruptWork, activity: true, cancel: true,
			canceledErr: true, answeredAt: 5 * time.Minute,
			wantStatus:  status(a2a.TaskStateCanceled, ptr(agent("The task was canceled."))),
			wantHistory: []messageView{user("start"), agent("The task was canceled.")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var interrupted, canceledErr bool
			env := newTaskEnv(t, &workflows.Agent{Name: "worker", WhileWorking: tt.policy, Handle: func(ctx workflow.Context, t *workflows.Task) error {
				if err := workflow.Sleep(ctx, tt.plainFirst); err != nil {
					return err
				}
				work, done := t.Interruptible(ctx)
				var err error
				if tt.activity {
					work = workflow.WithActivityOptions(work, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Hour})
					err = workflow.ExecuteActivity(work, slowStep).Get(work, nil)
				} else {
					err = workflow.Sleep(work, time.Hour)
				}
				interrupted, canceledErr = done(), temporal.IsCanceledError(err)
				if err != nil && !interrupted {
					return err // the task was canceled
				}
				next, err := t.Ask(ctx, "next", "What now?")
				if err != nil {
					return err
				}
				t.Reply("on it: " + workflows.MessageText(next))
				return nil
			}})
			if tt.activity {
				env.OnActivity(slowStep, mock.Anything).Return(nil).After(time.Hour)
			}
			start := env.Now()
			var u *update
			env.RegisterDelayedCallback(func() {
				if tt.cancel {
					u = cancelTask(env)
					return
				}
				u = sendMessage(env, wire.SendMessageInput{Message: userText("stop")})
			}, 5*time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "worker", Message: userText("start")})

			if interrupted != tt.interrupted || canceledErr != tt.canceledErr {
				t.Errorf("done() = %v, canceled error = %v; want %v, %v", interrupted, canceledErr, tt.interrupted, tt.canceledErr)
			}
			answered := completedTask(t, "send", u, start, tt.answeredAt)
			if diff := cmp.Diff(tt.wantStatus, viewStatus(answered)); diff != "" {
				t.Errorf("answered status (-want +got):\n%s", diff)
			}
			final := finalTask(t, env)
			if diff := cmp.Diff(tt.wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSendMessageResultCarriesSmallTask: a blocking send that asks for the
// task (WantTask) gets it in the update's result, as GetTask reads it with
// the same historyLength, unless its JSON passes MaxResultTaskBytes; a send
// that does not ask gets none.
func TestSendMessageResultCarriesSmallTask(t *testing.T) {
	teller := &workflows.Agent{Name: "teller", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "first", "First?"); err != nil {
			return err
		}
		if _, err := t.Ask(ctx, "second", "Second?"); err != nil {
			return err
		}
		t.Artifact(ctx, workflows.TextArtifact("story", strings.Repeat("x", wire.MaxResultTaskBytes)))
		t.Reply("Told.")
		return nil
	}}
	env := newTaskEnv(t, teller)
	var asked, plain, big *update
	var read *a2a.Task
	env.RegisterDelayedCallback(func() {
		asked = sendMessage(env, wire.SendMessageInput{Message: userText("Tell me"), WantTask: true, HistoryLength: ptr(1)})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		read = getTask(t, env, ptr(1))
		plain = sendMessage(env, wire.SendMessageInput{Message: userText("one")})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		big = sendMessage(env, wire.SendMessageInput{Message: userText("two"), WantTask: true})
	}, 3*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "teller", ContextID: testContextID})
	final := finalTask(t, env)

	if asked == nil || asked.err != nil || asked.result.Task == nil {
		t.Fatalf("first send: %+v, want a result with the task", asked)
	}
	if diff := cmp.Diff(read, asked.result.Task.Task); diff != "" {
		t.Errorf("the result's task differs from GetTask's with historyLength 1 (-GetTask +result):\n%s", diff)
	}
	if diff := cmp.Diff([]messageView{question("first", "First?")}, viewHistory(asked.result.Task.History)); diff != "" {
		t.Errorf("the result's history (-want +got):\n%s", diff)
	}
	if plain == nil || plain.err != nil || plain.result.Task != nil {
		t.Errorf("send without WantTask: %+v, want a result without the task", plain)
	}
	if big == nil || big.err != nil || big.result.State != a2a.TaskStateCompleted || big.result.Task != nil {
		t.Errorf("send ending with a %d-byte artifact: %+v, want completed without the task", wire.MaxResultTaskBytes, big)
	}
	if len(final.Artifacts) != 1 {
		t.Errorf("final artifacts: %d, want 1", len(final.Artifacts))
	}
}

// sendResult is the result of the SendMessage and CancelTask updates: the
// task update result and, for a decision on another owner's task, the
// approval.
type sendResult = workflows.SendResult

// updateResult returns the result of a SendMessage or CancelTask update.
func updateResult(v any) (sendResult, bool) {
	switch r := v.(type) {
	case sendResult:
		return r, true
	case wire.TaskUpdateResult:
		return sendResult{TaskUpdateResult: r}, true
	}
	return sendResult{}, false
}
