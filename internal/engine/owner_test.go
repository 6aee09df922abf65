package engine_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// headerOwner is what workerenv.OwnerOf told an activity.
type headerOwner struct {
	Owner string
	OK    bool
}

// runOwnerActivity runs a workflow of type workflowType, started with the
// owner search attribute when owner is set, whose code upserts the owner
// "mallory" before it runs an activity returning workerenv.OwnerOf, on a worker
// with the owner interceptor when intercept is set.
func runOwnerActivity(t *testing.T, workflowType, owner string, intercept bool) headerOwner {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	if intercept {
		env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{engine.NewOwnerInterceptor()}})
	}
	if owner != "" {
		if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(wire.OwnerKey.ValueSet(owner))); err != nil {
			t.Fatal(err)
		}
	}
	env.RegisterActivityWithOptions(func(ctx context.Context) (headerOwner, error) {
		o, ok := workerenv.OwnerOf(ctx)
		return headerOwner{o, ok}, nil
	}, activity.RegisterOptions{Name: "owner-activity"})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (headerOwner, error) {
		// The task's own code cannot make its activities another's.
		if err := workflow.UpsertTypedSearchAttributes(ctx, wire.OwnerKey.ValueSet("mallory")); err != nil {
			return headerOwner{}, err
		}
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		var out headerOwner
		err := workflow.ExecuteActivity(ctx, "owner-activity").Get(ctx, &out)
		return out, err
	}, workflow.RegisterOptions{Name: workflowType})
	env.ExecuteWorkflow(workflowType)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out headerOwner
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOwnerInterceptor checks that a task's activities learn its owner as
// the API started it, from the header alone: not the owner its own code
// upserted afterwards, nothing for a workflow that is no task or a worker
// without the interceptor (their readers ask Temporal).
func TestOwnerInterceptor(t *testing.T) {
	for _, tt := range []struct {
		name, workflowType, owner string
		intercept                 bool
		want                      headerOwner
	}{
		{"task of alice", wire.TaskWorkflowName, "alice", true, headerOwner{"alice", true}},
		{"task without authentication", wire.TaskWorkflowName, "", true, headerOwner{"", true}},
		{"another workflow", "other-workflow", "alice", true, headerOwner{}},
		{"worker without the interceptor", wire.TaskWorkflowName, "alice", false, headerOwner{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := runOwnerActivity(t, tt.workflowType, tt.owner, tt.intercept); got != tt.want {
				t.Errorf("OwnerOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
