package taskservice

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/wire"
)

const (
	// DefaultListPageSize is the page size of ListTasks when the request sets
	// none, as the A2A specification gives it.
	DefaultListPageSize = 50
	// MaxListPageSize is the largest page size ListTasks accepts (the
	// specification's maximum). Each listed task costs a read of its
	// workflow, so a page is also the unit of cost.
	MaxListPageSize = 100

	// listFetchParallelism bounds the concurrent task reads of one page.
	listFetchParallelism = 8
	// maxFilterBytes bounds the contextId filter.
	maxFilterBytes = 1024
	// maxPageTokenBytes bounds a page token as the client sends it.
	maxPageTokenBytes = 4096
	// pageTokenVersion is the first byte of every page token we issue.
	pageTokenVersion = 1
	// pageTokenSumBytes is the length of the checksum in a page token.
	pageTokenSumBytes = 12
)

// ListTasks implements A2A ListTasks from Temporal visibility: one
// ListWorkflowExecutions call over the search attributes the task workflow
// keeps (A2AAgent, A2AOwner, A2AContextId, A2ATaskState), then a read of each
// listed task so that the answer holds full tasks.
//
// Scope: only the tasks of this endpoint's agent and, when authentication is
// on, only the caller's own tasks.
//
// Order: newest first, in Temporal's visibility order — running tasks by
// start time, then finished tasks by close time, each descending. Page tokens
// are Temporal's, wrapped with a checksum that binds them to the filters.
//
// Cost: a page of N tasks is one visibility list, one visibility count
// (totalSize) and N reads, at most listFetchParallelism at a time. A running
// task is read with the GetTask query; a finished one from its workflow's
// result (the final task, read from the close event of its history), which
// needs no worker to replay it.
//
// Visibility is eventually consistent: a task created or changed a moment
// ago may be missing from the list, or listed under its previous state
// (the task itself, read from its workflow, is always current), and
// totalSize is a count of the same eventually consistent view. With
// statusTimestampAfter the finer filtering happens on the read tasks, so a
// page may hold fewer tasks than its size and totalSize is an upper bound.
func (s *TaskService) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	pageSize, err := validateListTasksRequest(req)
	if err != nil {
		return nil, err
	}
	query := s.listQuery(ctx, req)
	token, err := decodePageToken(req.PageToken, query)
	if err != nil {
		return nil, a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}

	page, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize:      int32(pageSize),
		NextPageToken: token,
		Query:         query,
	})
	if err != nil {
		return nil, apierror.FromVisibility(err, len(token) > 0)
	}
	count, err := s.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
	if err != nil {
		return nil, apierror.FromVisibility(err, false)
	}

	tasks, err := s.readListedTasks(ctx, page.GetExecutions(), s.historyLimit(req.HistoryLength))
	if err != nil {
		return nil, err
	}
	out := &a2a.ListTasksResponse{
		Tasks:         make([]*a2a.Task, 0, len(tasks)),
		TotalSize:     int(count.GetCount()),
		PageSize:      pageSize,
		NextPageToken: encodePageToken(page.GetNextPageToken(), query),
	}
	for _, t := range tasks {
		if t == nil {
			continue // gone between the list and the read
		}
		if req.StatusTimestampAfter != nil && (t.Status.Timestamp == nil || t.Status.Timestamp.Before(*req.StatusTimestampAfter)) {
			continue
		}
		if !req.IncludeArtifacts {
			// The specification's default: artifacts only when asked for.
			t.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out, nil
}

// validateListTasksRequest checks the request's fields and returns the page
// size to use.
func validateListTasksRequest(req *a2a.ListTasksRequest) (int, error) {
	invalid := func(format string, args ...any) (int, error) {
		return 0, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
	}
	switch {
	case req.PageSize < 0 || req.PageSize > MaxListPageSize:
		return invalid("pageSize must be between 1 and %d, got %d", MaxListPageSize, req.PageSize)
	case req.HistoryLength != nil && *req.HistoryLength < 0:
		return invalid("historyLength must not be negative")
	case len(req.ContextID) > maxFilterBytes:
		return invalid("contextId is longer than %d bytes", maxFilterBytes)
	case len(req.PageToken) > maxPageTokenBytes:
		return invalid("pageToken is longer than %d bytes", maxPageTokenBytes)
	case !knownTaskState(req.Status):
		return invalid("status %q is not a task state", truncate(string(req.Status), 64))
	}
	if req.PageSize == 0 {
		return DefaultListPageSize, nil
	}
	return req.PageSize, nil
}

// knownTaskState accepts the A2A 1.0 task states and the unspecified one (no
// filter).
func knownTaskState(s a2a.TaskState) bool {
	switch s {
	case a2a.TaskStateUnspecified, a2a.TaskStateSubmitted, a2a.TaskStateWorking,
		a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired, a2a.TaskStateCompleted,
		a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected:
		return true
	}
	return false
}

// listQuery builds the visibility query of a validated request. Every value
// that comes from the request or the caller goes through
// wire.QuoteQueryValue, so none can change the query's structure.
func (s *TaskService) listQuery(ctx context.Context, req *a2a.ListTasksRequest) string {
	conds := []string{
		"WorkflowType = " + wire.QuoteQueryValue(wire.TaskWorkflowName),
		// A task that continued as new has one execution per run; the
		// latest run is the task.
		"ExecutionStatus != " + wire.QuoteQueryValue(enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW.String()),
		wire.AgentKey.GetName() + " = " + wire.QuoteQueryValue(s.agent.Name),
	}
	if owner := guard.Principal(ctx); owner != "" {
		conds = append(conds, wire.OwnerKey.GetName()+" = "+wire.QuoteQueryValue(owner))
	}
	if req.ContextID != "" {
		conds = append(conds, wire.ContextIDKey.GetName()+" = "+wire.QuoteQueryValue(req.ContextID))
	}
	if req.Status != a2a.TaskStateUnspecified {
		// A2ATaskState with the run's ExecutionStatus: a run that ended
		// outside its handler reads as failed, a run that completed while
		// visibility had it working is a completed task (TaskInput.LeanWrites).
		conds = append(conds, wire.TaskStateCondition(req.Status))
	}
	if req.StatusTimestampAfter != nil {
		// A task whose status changed at or after t is running or closed at
		// or after t; ListTasks drops the others once it has read them.
		t := req.StatusTimestampAfter.UTC().Format(time.RFC3339Nano)
		conds = append(conds, "(ExecutionStatus = "+wire.QuoteQueryValue(enums.WORKFLOW_EXECUTION_STATUS_RUNNING.String())+
			" OR CloseTime >= "+wire.QuoteQueryValue(t)+")")
	}
	return strings.Join(conds, " AND ")
}

// encodePageToken wraps Temporal's next page token for the client: a version
// byte, a checksum over the query and the token, and the token, in URL-safe
// base64. Empty means no more pages.
func encodePageToken(next []byte, query string) string {
	if len(next) == 0 {
		return ""
	}
	buf := make([]byte, 0, 1+pageTokenSumBytes+len(next))
	buf = append(buf, pageTokenVersion)
	buf = append(buf, pageTokenSum(next, query)...)
	buf = append(buf, next...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// decodePageToken returns the Temporal page token inside token, refusing
// tokens that are malformed or were issued for other filters. The checksum
// keeps arbitrary bytes from reaching Temporal's visibility store, which
// reports a token it cannot parse as an internal error.
func decodePageToken(token, query string) ([]byte, error) {
	if token == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(token, "="))
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", apierror.ErrBadPageToken)
	}
	if len(raw) <= 1+pageTokenSumBytes || raw[0] != pageTokenVersion {
		return nil, fmt.Errorf("%w: not a token this server issued", apierror.ErrBadPageToken)
	}
	sum, next := raw[1:1+pageTokenSumBytes], raw[1+pageTokenSumBytes:]
	if !bytes.Equal(sum, pageTokenSum(next, query)) {
		return nil, fmt.Errorf("%w: it was issued for other filters or altered", apierror.ErrBadPageToken)
	}
	return next, nil
}

// EncodePageToken wraps a Temporal visibility page token for a client,
// bound to query (see encodePageToken): the task list's route uses the
// tokens ListTasks does.
func EncodePageToken(next []byte, query string) string { return encodePageToken(next, query) }

// DecodePageToken returns the Temporal page token inside a token of
// EncodePageToken, refusing one malformed or issued for another query.
func DecodePageToken(token, query string) ([]byte, error) { return decodePageToken(token, query) }

func pageTokenSum(next []byte, query string) []byte {
	h := sha256.New()
	h.Write([]byte(query))
	h.Write([]byte{0})
	h.Write(next)
	return h.Sum(nil)[:pageTokenSumBytes]
}

// readListedTasks reads the task of each execution, in order, with bounded
// parallelism. A task that disappeared since it was listed (its retention
// ran out) is nil.
func (s *TaskService) readListedTasks(ctx context.Context, execs []*workflowpb.WorkflowExecutionInfo, historyLength *int) ([]*a2a.Task, error) {
	tasks := make([]*a2a.Task, len(execs))
	errs := make([]error, len(execs))
	sem := make(chan struct{}, listFetchParallelism)
	var wg sync.WaitGroup
	for i, exec := range execs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			tasks[i], errs[i] = s.readListedTask(ctx, exec, historyLength)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return tasks, nil
}

// readListedTask reads one listed task (see LoadTask), using the status
// visibility gave so that a closed task needs no query. A task that is gone,
// or no task (a workflow that never got its first message), is nil.
func (s *TaskService) readListedTask(ctx context.Context, exec *workflowpb.WorkflowExecutionInfo, historyLength *int) (*a2a.Task, error) {
	id, runID := a2a.TaskID(exec.GetExecution().GetWorkflowId()), exec.GetExecution().GetRunId()
	var snap *wire.TaskSnapshot
	var err error
	if status := exec.GetStatus(); status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		snap, err = s.closedTask(ctx, id, runID, status, historyLength)
		if errors.Is(err, errRunChanged) {
			snap, err = s.LoadTask(ctx, id, historyLength)
		}
	} else {
		snap, err = s.LoadTask(ctx, id, historyLength)
	}
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return snap.Task, nil
}
