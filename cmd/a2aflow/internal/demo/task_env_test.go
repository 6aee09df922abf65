package demo_test

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/cmd/a2aflow/internal/demo"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// testTaskID is the workflow ID, hence the task ID, of every test task.
const testTaskID = "task-1"

// newTaskEnv returns a test environment running the task workflow for the
// built-in agents.
func newTaskEnv() *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(demo.Builtin(), engine.Options{}),
		workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
	// The agents' own activities (BookTrip, ListIssues), as the worker
	// registers them.
	if err := engine.RegisterActivities(env, demo.All()...); err != nil {
		panic(err)
	}
	return env
}

// userText returns a new user message holding text parts.
func userText(texts ...string) *a2a.Message {
	var parts a2a.ContentParts
	for _, text := range texts {
		parts = append(parts, a2a.NewTextPart(text))
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	m.ID = a2a.NewMessageID()
	return m
}

// sent is the outcome of one UpdateSendMessage update.
type sent struct {
	rejected error
	done     bool
	task     *a2a.Task
	err      error
	at       time.Time
}

// sendMessage sends m as a blocking UpdateSendMessage update; call it from a
// delayed callback.
func sendMessage(env *testsuite.TestWorkflowEnvironment, m *a2a.Message) *sent {
	s := &sent{}
	env.UpdateWorkflow(wire.UpdateSendMessage, m.ID, &testsuite.TestUpdateCallback{
		OnReject: func(err error) { s.rejected = err },
		OnComplete: func(v any, err error) {
			s.done, s.err, s.at = true, err, env.Now()
			s.task = resultTask(env, v)
		},
	}, wire.SendMessageInput{Message: m})
	return s
}

// finalTask checks the workflow completed without error and returns its task.
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

func viewMessage(m *a2a.Message) messageView {
	if m == nil {
		return messageView{}
	}
	slot, _ := m.Metadata["slot"].(string)
	return messageView{Role: m.Role, Text: workflows.MessageText(m), Slot: slot}
}

func viewHistory(history []*a2a.Message) []messageView {
	var views []messageView
	for _, m := range history {
		views = append(views, viewMessage(m))
	}
	return views
}

// statusView is the part of a task's status the tests compare.
type statusView struct {
	State   a2a.TaskState
	Message messageView
}

func viewStatus(task *a2a.Task) statusView {
	return statusView{State: task.Status.State, Message: viewMessage(task.Status.Message)}
}

func user(text string) messageView  { return messageView{Role: a2a.MessageRoleUser, Text: text} }
func agent(text string) messageView { return messageView{Role: a2a.MessageRoleAgent, Text: text} }
func question(slot, text string) messageView {
	return messageView{Role: a2a.MessageRoleAgent, Text: text, Slot: slot}
}

// resultTask returns the task as the API answers an update that completed
// with v: the update answers a bounded TaskUpdateResult, and the API reads
// the task with the GetTask query right after.
func resultTask(env *testsuite.TestWorkflowEnvironment, v any) *a2a.Task {
	if v == nil {
		return nil
	}
	q, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
	if err != nil {
		return nil
	}
	var task a2a.Task
	if q.Get(&task) != nil {
		return nil
	}
	return &task
}
