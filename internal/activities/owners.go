package activities

import (
	"context"
	"fmt"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// TaskOwners says whose task an activity works for, so that what a task
// reads and writes in the agent directory is its owner's.
type TaskOwners interface {
	// TaskOwner returns the principal that owns the task whose workflow
	// runs the activity of ctx: "" when authentication is off. An error is
	// worth retrying (the owner could not be read).
	TaskOwner(ctx context.Context) (string, error)
}

var _ TaskOwners = (*WorkflowOwners)(nil)

// WorkflowOwners reads a task's owner from its workflow's A2AOwner search
// attribute (wire.OwnerKey), which the API sets when it starts the
// task and which no task or model can change. Owners are cached by task ID:
// a task's owner never changes.
type WorkflowOwners struct {
	// Client reaches the Temporal namespace the tasks run in; required.
	Client client.Client

	mu     sync.Mutex
	owners map[string]string // by workflow ID
}

// maxCachedOwners bounds the cache; past it, the cache starts again.
const maxCachedOwners = 10000

// TaskOwner returns the owner of the activity's task: the one its workflow
// passed in a header (workerenv.OwnerOf: the worker's owner interceptor),
// else the one a description of the workflow reads.
func (o *WorkflowOwners) TaskOwner(ctx context.Context) (string, error) {
	if owner, ok := workerenv.OwnerOf(ctx); ok {
		return owner, nil
	}
	info := activity.GetInfo(ctx)
	id := info.WorkflowExecution.ID
	o.mu.Lock()
	owner, ok := o.owners[id]
	o.mu.Unlock()
	if ok {
		return owner, nil
	}
	desc, err := o.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return "", fmt.Errorf("read the owner of task %s: %w", id, err)
	}
	if p := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[wire.OwnerKey.GetName()]; p != nil {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &owner); err != nil {
			return "", fmt.Errorf("read the owner of task %s: %w", id, err)
		}
	}
	o.mu.Lock()
	if o.owners == nil || len(o.owners) >= maxCachedOwners {
		o.owners = map[string]string{}
	}
	o.owners[id] = owner
	o.mu.Unlock()
	return owner, nil
}

// ownerOf asks owners for the task's owner; nil owners take every task for
// the anonymous owner "" (a worker without authentication, a test).
func ownerOf(ctx context.Context, owners TaskOwners) (string, error) {
	if owners == nil {
		return "", nil
	}
	return owners.TaskOwner(ctx)
}
