package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Tasks reads other tasks for a skill: a referenced task (a refinement) or
// the earlier tasks of a context (a conversation's thread). Its methods are
// the activities wire.ActivityFetchTask and
// wire.ActivityContextHistory.
type Tasks struct {
	// Client reaches the Temporal namespace the tasks run in; required.
	Client client.Client
}

// FetchTask returns a task by ID with a GetTask query, which Temporal answers
// for running and finished workflows alike. A missing task, or one of
// another owner, is a non-retryable wire.ErrTypeTaskNotFound error.
func (a *Tasks) FetchTask(ctx context.Context, in wire.FetchTaskInput) (*a2a.Task, error) {
	if in.TaskID == "" {
		return nil, temporal.NewNonRetryableApplicationError("task ID is required", ErrTypeInvalidInput, nil)
	}
	value, err := a.Client.QueryWorkflow(ctx, string(in.TaskID), "", wire.QueryGetTask, wire.GetTaskInput{Owner: in.Owner})
	if err != nil {
		if isTaskNotFound(err) {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("task %s not found", in.TaskID), wire.ErrTypeTaskNotFound, nil)
		}
		return nil, fmt.Errorf("query task %s: %w", in.TaskID, err)
	}
	var task a2a.Task
	if err := value.Get(&task); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("decode task %s: %v", in.TaskID, err), ErrTypeInvalidInput, nil)
	}
	return &task, nil
}

// ContextHistory returns the messages of a context's earlier tasks, oldest
// task first, found with a visibility query on the A2AContextId search
// attribute. A task that cannot be read (gone, or another owner's) is left out.
func (a *Tasks) ContextHistory(ctx context.Context, in wire.ContextHistoryInput) ([]*a2a.Message, error) {
	if in.ContextID == "" {
		return nil, nil
	}
	limit := in.MaxTasks
	if limit <= 0 {
		limit = 20
	}
	query := wire.ContextIDKey.GetName() + " = " + wire.QuoteQueryValue(in.ContextID)
	if in.Owner != "" {
		query += " AND " + wire.OwnerKey.GetName() + " = " + wire.QuoteQueryValue(in.Owner)
	}
	type found struct {
		id      string
		started time.Time
	}
	var tasks []found
	var token []byte
	for page := 0; page < maxContextPages; page++ {
		resp, err := a.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list tasks of context %s: %w", in.ContextID, err)
		}
		for _, e := range resp.Executions {
			id := e.GetExecution().GetWorkflowId()
			started := e.GetStartTime().AsTime()
			if id == string(in.Exclude) || (!in.StartedBefore.IsZero() && !started.Before(in.StartedBefore)) {
				continue
			}
			tasks = append(tasks, found{id, started})
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			break
		}
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].started.Before(tasks[j].started) })
	if len(tasks) > limit {
		tasks = tasks[len(tasks)-limit:]
	}
	var msgs []*a2a.Message
	for _, f := range tasks {
		task, err := a.FetchTask(ctx, wire.FetchTaskInput{TaskID: a2a.TaskID(f.id), Owner: in.Owner})
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.NonRetryable() {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, task.History...)
	}
	return msgs, nil
}

// maxContextPages bounds the visibility pages ContextHistory reads (1000
// tasks a page by default): a context is a conversation, not an archive.
const maxContextPages = 10

// isTaskNotFound reports whether a query failed because the workflow does
// not exist or its GetTask handler refused the reader.
func isTaskNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return true
	}
	var queryFailed *serviceerror.QueryFailed
	if errors.As(err, &queryFailed) {
		return queryFailed.Failure.GetApplicationFailureInfo().GetType() == wire.ErrTypeTaskNotFound
	}
	var invalid *serviceerror.InvalidArgument
	return errors.As(err, &invalid) // e.g. an ID that is not a valid workflow ID
}
