package activities_test

import (
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestWorkflowOwnersFromHeader: a task's activity learns its owner from the
// header its workflow set (engine.NewOwnerInterceptor), without asking
// Temporal (the WorkflowOwners here has no client to ask).
func TestWorkflowOwnersFromHeader(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{engine.NewOwnerInterceptor()}})
	if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(wire.OwnerKey.ValueSet("alice"))); err != nil {
		t.Fatal(err)
	}
	owners := &activities.WorkflowOwners{}
	env.RegisterActivityWithOptions(owners.TaskOwner, activity.RegisterOptions{Name: "task-owner"})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var owner string
		err := workflow.ExecuteActivity(ctx, "task-owner").Get(ctx, &owner)
		return owner, err
	}, workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.ExecuteWorkflow(wire.TaskWorkflowName)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var owner string
	if err := env.GetWorkflowResult(&owner); err != nil || owner != "alice" {
		t.Fatalf("owner = %q (%v), want alice", owner, err)
	}
}
