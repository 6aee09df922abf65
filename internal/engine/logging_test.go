package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestLoggingInterceptor checks that the lines a task's skill and its
// activities log carry the task's keys, and that the mark telling them from
// the SDK's own lines is not printed.
func TestLoggingInterceptor(t *testing.T) {
	var out bytes.Buffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{engine.NewLoggingInterceptor()}})

	logActivity := func(ctx context.Context) error {
		activity.GetLogger(ctx).Info("from the activity")
		return nil
	}
	env.RegisterActivityWithOptions(logActivity, activity.RegisterOptions{Name: "log-activity"})
	agent := &workflows.Agent{Name: "logger", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		workflow.GetLogger(ctx).Info("from the skill")
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		return workflow.ExecuteActivity(ctx, "log-activity").Get(ctx, nil)
	}}
	reg, err := engine.NewRegistry(agent)
	if err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "logger", ContextID: testContextID,
		Message: &a2a.Message{ID: "m-1", Role: a2a.MessageRoleUser, ContextID: testContextID, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{"from the skill": "workflow", "from the activity": "activity"}
	for line := range strings.Lines(out.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if strings.Contains(line, engine.TaskLoggerKey) {
			t.Errorf("the mark is printed: %s", line)
		}
		msg, _ := rec["msg"].(string)
		component, ok := want[msg]
		if !ok {
			continue
		}
		delete(want, msg)
		for k, v := range map[string]string{"task_id": testTaskID, "context_id": testContextID, "agent": "logger", "component": component} {
			if rec[k] != v {
				t.Errorf("%q: %s = %v, want %q (line %s)", msg, k, rec[k], v, line)
			}
		}
	}
	for msg := range want {
		t.Errorf("no line %q in:\n%s", msg, out.String())
	}
}

// The task and context of the tests' tasks.
const (
	testTaskID    = "task-1"
	testContextID = "ctx-1"
)
