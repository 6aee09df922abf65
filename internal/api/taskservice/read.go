package taskservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Reading a task. A running task answers the GetTask query from its
// workflow. A finished one is read without replaying its history: a task that
// ended through its handler from its workflow's result, and one whose workflow
// ended outside it (terminated by an operator or Temporal, timed out, failed
// on a bug) reads as failed with the reason, so the API never shows a task
// as waiting whose workflow is gone. The older messages of a long task come
// from the history pages in the payload store (workflows/history.go).

// LoadTask reads task id with its last historyLength messages (nil: all).
func (s *TaskService) LoadTask(ctx context.Context, id a2a.TaskID, historyLength *int) (*wire.TaskSnapshot, error) {
	return s.loadTaskSince(ctx, id, historyLength, "")
}

// loadTaskSince is LoadTask with the history cut, by the workflow, to the
// messages since message since (included) when the workflow holds it among
// its recent messages (wire.GetTaskInput.HistorySince); "" cuts nothing.
func (s *TaskService) loadTaskSince(ctx context.Context, id a2a.TaskID, historyLength *int, since string) (*wire.TaskSnapshot, error) {
	if err := CheckTaskID(string(id)); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		// A query needs a worker: bounded like every wait for one.
		qctx, cancel := context.WithTimeout(ctx, s.waitTimeout)
		resp, err := s.temporal.QueryWorkflowWithOptions(qctx, &client.QueryWorkflowWithOptionsRequest{
			WorkflowID: string(id),
			QueryType:  wire.QueryGetTask,
			Args:       []any{wire.GetTaskInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), HistoryLength: historyLength, HistorySince: since}},
			// A closed workflow is read from its history, not by a replay.
			QueryRejectCondition: enums.QUERY_REJECT_CONDITION_NOT_OPEN,
		})
		cancel()
		if apierror.BoundPassed(ctx, err) {
			if st := s.diagnoseStuck(ctx, id); st != nil {
				return nil, s.stuckError(id, st, "be read")
			}
			return nil, noWorkerError(id, s.waitTimeout, "answered the read")
		}
		if err != nil {
			if !apierror.IsNotFound(err) {
				if st := s.diagnoseStuck(ctx, id); st != nil {
					return nil, s.stuckError(id, st, "be read")
				}
			}
			return nil, apierror.FromTemporal(err)
		}
		if rejected := resp.QueryRejected; rejected != nil {
			snap, err := s.closedTask(ctx, id, "", rejected.GetStatus(), historyLength)
			if errors.Is(err, errRunChanged) && attempt < maxContinuingRetries {
				sleep(ctx, time.Duration(attempt+1)*10*time.Millisecond)
				continue // it continued as new between the two calls
			}
			return snap, err
		}
		var snap wire.TaskSnapshot
		if err := resp.QueryResult.Get(&snap); err != nil || snap.Task == nil {
			return nil, apierror.FromTemporal(fmt.Errorf("decode task %s: %v", id, err))
		}
		return s.withHistory(ctx, &snap, historyLength)
	}
}

// errRunChanged: the run read is no longer the task's latest.
var errRunChanged = errors.New("the task continued as new")

// closedTask reads the task of a closed run (runID "" is the latest).
func (s *TaskService) closedTask(ctx context.Context, id a2a.TaskID, runID string, status enums.WorkflowExecutionStatus, historyLength *int) (*wire.TaskSnapshot, error) {
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var snap wire.TaskSnapshot
		if err := s.temporal.GetWorkflow(ctx, string(id), runID).Get(ctx, &snap); err != nil {
			return nil, apierror.FromTemporal(fmt.Errorf("read the result of task %s: %w", id, err))
		}
		if snap.Task == nil || snap.NoTask {
			return nil, apierror.TaskNotFound()
		}
		if !s.owns(ctx, &snap) {
			return nil, apierror.TaskNotFound()
		}
		snap.Task.History = wire.LastMessages(snap.Task.History, historyLength)
		return s.withHistory(ctx, &snap, historyLength)
	case enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return nil, errRunChanged
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		// Opened again (reset) meanwhile: read it as running.
		return nil, errRunChanged
	}
	return s.endedOutsideHandler(ctx, id, runID, status, historyLength)
}

// endedOutsideHandler reads a task whose workflow was terminated, timed out,
// failed or canceled by Temporal rather than ended by its handler: the task as
// its workflow last held it (read by a replay when the worker can still
// replay it, else what visibility knows), failed, with the reason.
func (s *TaskService) endedOutsideHandler(ctx context.Context, id a2a.TaskID, runID string, status enums.WorkflowExecutionStatus, historyLength *int) (*wire.TaskSnapshot, error) {
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		// Not an end outside the handler: the run read is not the task's last.
		return nil, fmt.Errorf("%w: %w", a2a.ErrServerError, errRunChanged)
	}
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, string(id), runID)
	if err != nil {
		return nil, apierror.FromTemporal(err)
	}
	if !s.CallerSees(ctx, desc.GetWorkflowExecutionInfo()) {
		return nil, apierror.TaskNotFound()
	}
	reason, closed := s.closeReason(ctx, id, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), status)
	if closed.IsZero() {
		closed = desc.GetWorkflowExecutionInfo().GetCloseTime().AsTime()
	}

	// The task as the workflow last held it: a replay up to its end.
	var snap *wire.TaskSnapshot
	value, err := s.temporal.QueryWorkflow(ctx, string(id), desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), wire.QueryGetTask,
		wire.GetTaskInput{Agent: s.agent.Name, Owner: guard.Principal(ctx), HistoryLength: historyLength})
	if err == nil {
		var got wire.TaskSnapshot
		if value.Get(&got) == nil && got.Task != nil {
			snap = &got
		}
	} else if errors.Is(apierror.FromTemporal(err), a2a.ErrTaskNotFound) {
		// A workflow that never got its first message is no task.
		return nil, apierror.FromTemporal(err)
	} else {
		s.logger.WarnContext(ctx, "cannot replay a task whose workflow ended outside its handler; answering what visibility knows",
			"task_id", id, "status", status.String(), "error", err)
	}
	if snap == nil {
		snap = &wire.TaskSnapshot{Task: &a2a.Task{ID: id, ContextID: SearchKeyword(desc.GetWorkflowExecutionInfo(), wire.ContextIDKey.GetName())}}
	}
	text := fmt.Sprintf("The task's workflow %s outside the agent: %s", endedVerb(status), reason)
	snap.Task.Status = a2a.TaskStatus{
		State:     a2a.TaskStateFailed,
		Timestamp: &closed,
		Message: &a2a.Message{
			ID: string(id) + "-ended", Role: a2a.MessageRoleAgent, TaskID: id, ContextID: snap.Task.ContextID,
			Parts: a2a.ContentParts{a2a.NewTextPart(text)},
		},
	}
	snap.EventSeq++ // the failure is one more event after the last the workflow numbered
	return s.withHistory(ctx, snap, historyLength)
}

func endedVerb(status enums.WorkflowExecutionStatus) string {
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "was terminated"
	case enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enums.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "was canceled"
	}
	return "failed"
}

// closeReason reads why a run closed from its close event.
func (s *TaskService) closeReason(ctx context.Context, id a2a.TaskID, runID string, status enums.WorkflowExecutionStatus) (string, time.Time) {
	iter := s.temporal.GetWorkflowHistory(ctx, string(id), runID, false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	if !iter.HasNext() {
		return status.String(), time.Time{}
	}
	e, err := iter.Next() // the close event filter answers that one event
	if err != nil {
		return status.String(), time.Time{}
	}
	return eventReason(e), e.GetEventTime().AsTime()
}

func eventReason(e *historypb.HistoryEvent) string {
	switch {
	case e.GetWorkflowExecutionTerminatedEventAttributes() != nil:
		a := e.GetWorkflowExecutionTerminatedEventAttributes()
		reason := a.GetReason()
		if reason == "" {
			reason = "no reason given"
		}
		if id := a.GetIdentity(); id != "" {
			reason += " (by " + id + ")"
		}
		return reason
	case e.GetWorkflowExecutionFailedEventAttributes() != nil:
		return e.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetMessage()
	case e.GetWorkflowExecutionTimedOutEventAttributes() != nil:
		return "its execution timeout passed"
	case e.GetWorkflowExecutionCanceledEventAttributes() != nil:
		return "Temporal canceled it"
	}
	return e.GetEventType().String()
}

// owns reports whether the caller may read snap, a task read from a
// workflow's result (the query checks this inside the workflow).
func (s *TaskService) owns(ctx context.Context, snap *wire.TaskSnapshot) bool {
	if snap.Agent != "" && snap.Agent != s.agent.Name {
		return false
	}
	owner := guard.Principal(ctx)
	return owner == "" || snap.Owner == owner
}

// CallerSees says whether the caller may see the task of a described
// workflow: one of this agent's, owned by the caller (or authentication
// off). The rule of workflows/access.go, read from the search attributes
// where the workflow itself cannot answer.
func (s *TaskService) CallerSees(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) bool {
	if SearchKeyword(info, wire.AgentKey.GetName()) != s.agent.Name {
		return false
	}
	owner := guard.Principal(ctx)
	return owner == "" || SearchKeyword(info, wire.OwnerKey.GetName()) == owner
}

// SearchKeyword is the value of a described workflow's keyword search
// attribute, or "".
func SearchKeyword(info *workflowpb.WorkflowExecutionInfo, name string) string {
	var v string
	if p, ok := info.GetSearchAttributes().GetIndexedFields()[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
	}
	return v
}

// withHistory completes snap's history from the pages of older messages in
// the payload store, to the last historyLength messages (nil: all).
func (s *TaskService) withHistory(ctx context.Context, snap *wire.TaskSnapshot, historyLength *int) (*wire.TaskSnapshot, error) {
	if ctx.Value(noHistoryPagesKey{}) != nil {
		return snap, nil // the caller reads the pages it needs (timeline.go)
	}
	if len(snap.EarlierHistory) == 0 {
		// The snapshot may hold more than this caller asks for: an update's
		// result answering a message sent again (its message ID known) was
		// made for the first send's historyLength.
		if snap.Task != nil && historyLength != nil && len(snap.Task.History) > max(*historyLength, 0) {
			snap.Task.History = wire.LastMessages(snap.Task.History, historyLength)
		}
		return snap, nil
	}
	if s.payloads == nil {
		s.logger.WarnContext(ctx, "task history has pages but no payload store is configured: answering the recent messages", "task_id", snap.ID)
		return snap, nil
	}
	var earlier []*a2a.Message
	for _, page := range snap.EarlierHistory {
		data, err := s.payloads.Get(ctx, page.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: read history page %s of task %s: %w", a2a.ErrInternalError, page.Key, snap.ID, err)
		}
		var msgs []*a2a.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			return nil, fmt.Errorf("%w: decode history page %s of task %s: %w", a2a.ErrInternalError, page.Key, snap.ID, err)
		}
		earlier = append(earlier, msgs...)
	}
	snap.Task.History = wire.LastMessages(append(earlier, snap.Task.History...), historyLength)
	snap.EarlierHistory = nil
	return snap, nil
}
