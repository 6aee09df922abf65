package taskservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// maxTaskIDBytes bounds task IDs: Temporal's default limit on workflow IDs
// (a2aflow's own are 36-byte UUIDs).
const maxTaskIDBytes = 1000

// CheckTaskID refuses an ID that cannot name a task: too long, or not
// printable ASCII. Temporal's gRPC client carries the workflow ID in a
// request header and fails on such bytes with an error that would reach the
// client as an internal error.
//
// An ID that starts with wire.EndedPushConfigsIDPrefix is no task's either:
// it names the workflow of an ended task's push configs (endedpush.go),
// which a request must not reach as a task.
func CheckTaskID(id string) error {
	if strings.HasPrefix(id, wire.EndedPushConfigsIDPrefix) {
		return apierror.TaskNotFound()
	}
	if len(id) > maxTaskIDBytes {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task id is longer than %d bytes", maxTaskIDBytes))
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task id %q is not printable ASCII", truncate(id, 64)))
		}
	}
	return nil
}

// taskIDGuard checks the workflow IDs of the Temporal calls that take one
// from a request (a task ID in params, a path or a message's taskId) before
// they reach Temporal. It wraps the client every TaskService uses, so every
// method, present and future, is covered in one place.
type taskIDGuard struct{ client.Client }

// QueryWorkflow queries the workflow of a well-formed task ID.
func (g taskIDGuard) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	if err := CheckTaskID(workflowID); err != nil {
		return nil, err
	}
	return g.Client.QueryWorkflow(ctx, workflowID, runID, queryType, args...)
}

// UpdateWorkflow updates the workflow of a well-formed task ID.
func (g taskIDGuard) UpdateWorkflow(ctx context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if err := CheckTaskID(opts.WorkflowID); err != nil {
		return nil, err
	}
	return g.Client.UpdateWorkflow(ctx, opts)
}
