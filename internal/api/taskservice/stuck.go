package taskservice

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/metrics"
)

// A task whose workflow task keeps failing cannot take messages nor answer
// reads until a worker with compatible code runs it. The common cause is a
// deploy of agent code that no longer replays the task's history (a
// non-determinism error): the task is not lost, it waits at the step it
// reached. The API names that cause instead of "no worker".

// stuckTask is why a task's workflow cannot make progress.
type stuckTask struct {
	Nondeterminism bool   // the deployed code no longer replays the task
	Cause          string // Temporal's workflow task failure cause
	Message        string // the failure, as the worker reported it
	Worker         string // the identity of the worker that failed it
	Version        string // the Worker Deployment version the task runs on, if versioned
	Attempts       int32
}

// maxStuckScan bounds the history events read back from the newest to find
// the failure.
const maxStuckScan = 50

// diagnoseStuck reports why the task's workflow is stuck, or nil when its
// workflow task is not failing again and again (no worker, or one that is
// merely slow).
func (s *TaskService) diagnoseStuck(ctx context.Context, id a2a.TaskID) *stuckTask {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return nil
	}
	exec := desc.GetWorkflowExecutionInfo()
	// Another owner's task stays "not found" or "no worker", as before:
	// the diagnosis is for the task's owner.
	if !s.CallerSees(ctx, exec) {
		return nil
	}
	pending := desc.GetPendingWorkflowTask()
	if pending == nil || pending.GetAttempt() < 2 {
		return nil
	}
	st := &stuckTask{Attempts: pending.GetAttempt()}
	if v := exec.GetVersioningInfo().GetDeploymentVersion(); v != nil {
		st.Version = v.GetDeploymentName() + "/" + v.GetBuildId()
	}
	// Later attempts are transient; the first failure is in history.
	resp, err := s.temporal.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
		Namespace:       s.namespace,
		Execution:       exec.GetExecution(),
		MaximumPageSize: maxStuckScan,
	})
	if err != nil {
		return st
	}
	for _, e := range resp.GetHistory().GetEvents() {
		if e.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			break // progress after any failure: not what keeps it stuck
		}
		if f := e.GetWorkflowTaskFailedEventAttributes(); f != nil {
			st.Cause = f.GetCause().String()
			st.Nondeterminism = f.GetCause() == enums.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
			st.Message = truncate(f.GetFailure().GetMessage(), 300)
			st.Worker = f.GetIdentity()
			break
		}
	}
	return st
}

// stuckError is the answer to a request on a stuck task: retryable (once a
// compatible worker runs the task, the same request succeeds, applied once)
// and saying what the operator must do.
func (s *TaskService) stuckError(id a2a.TaskID, st *stuckTask, what string) error {
	reason, msg := "TASK_STUCK", fmt.Sprintf("task %s cannot %s: its workflow task has failed %d times (%s)", id, what, st.Attempts, st.Cause)
	if st.Nondeterminism {
		reason = "NONDETERMINISM"
		msg = fmt.Sprintf("task %s cannot %s: the deployed agent code no longer replays it (non-determinism). "+
			"Nothing is lost: it waits at the step it reached until workers run code compatible with it (roll back, "+
			"or deploy the change guarded with workflow.GetVersion). Send the same request again then (same messageId): it is applied once",
			id, what)
	}
	metrics.StuckAnswered(reason)
	s.logger.Error("task stuck: its workflow task keeps failing", "task_id", id, "agent", s.agent.Name, "reason", reason, "cause", st.Cause,
		"attempts", st.Attempts, "worker", st.Worker, "deployment_version", st.Version, "failure", st.Message)
	return a2a.NewError(a2a.ErrInternalError, msg).WithDetails(map[string]any{
		"retryable": true, "reason": reason, "retryAfterSeconds": int(apierror.RetryAfter / time.Second),
		"workflowTaskAttempts": st.Attempts, "deploymentVersion": st.Version,
	})
}
