package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Forks and retries (docs/guides/fork.md): POST /tasks/{id}:fork and
// /tasks/{id}:retry on an agent's HTTP+JSON binding (under a tenant prefix
// too), the JSON-RPC methods ForkTask and RetryTask of the extension
// ForkExtensionURI, and the CLI's fork and retry. The API reads the
// original's history (every run of it), hands the recorded activity results
// and inputs to a new task's workflow, and answers that task once it has
// reached the fork point. Who may fork a task is who may read it: its
// owner (loadTask answers task not found to anyone else).

// ForkExtensionURI is the a2aflow extension every agent's card declares:
// its JSON-RPC methods ForkTask and RetryTask.
const ForkExtensionURI = "urn:a2aflow:ext:fork:v1"

// JSON-RPC methods of the fork extension.
const (
	MethodForkTask  = "ForkTask"
	MethodRetryTask = "RetryTask"
)

// ForkRequest is the body of POST /tasks/{id}:fork (and, with ID, the
// params of ForkTask; RetryTask takes the ID only).
type ForkRequest struct {
	// ID is the task to fork (JSON-RPC only: the path names it over REST).
	ID string `json:"id,omitempty"`
	// AtMessage is the fork point: the fork holds the original's history up
	// to its AtMessage-th message (1 is the first message only). Every
	// input the original received while its history held fewer messages is
	// replayed from its record.
	AtMessage int `json:"atMessage"`
	// ContextID puts the fork in another context (default: the original's).
	ContextID string `json:"contextId,omitempty"`
}

// errForkRefused: the agent changed since the original ran, or a retry of
// a task that did not fail.
var errForkRefused = errors.New("fork refused")

// forkPath matches the fork and retry routes of the HTTP+JSON binding,
// with an optional tenant prefix.
var forkPath = regexp.MustCompile(`^(?:/[^/]+)?/tasks/([^/]+):(fork|retry)$`)

// serveForkREST answers POST /tasks/{id}:fork and :retry; false when the
// request is no such route.
func (s *TaskService) serveForkREST(w http.ResponseWriter, r *http.Request) bool {
	m := forkPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeA2AError(w, bindingREST, nil, http.StatusMethodNotAllowed, a2a.NewError(a2a.ErrMethodNotFound,
			fmt.Sprintf("method %s is not allowed: %s takes POST", r.Method, r.URL.Path)))
		return true
	}
	var req ForkRequest
	if body, _, err := readBody(r); err != nil {
		writeA2AError(w, bindingREST, nil, 0, a2a.NewError(a2a.ErrParseError, err.Error()))
		return true
	} else if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeA2AError(w, bindingREST, nil, 0, a2a.NewError(a2a.ErrInvalidParams, "invalid body: "+err.Error()))
			return true
		}
	}
	task, err := s.forkOrRetry(r.Context(), a2a.TaskID(m[1]), m[2] == "retry", req)
	if err != nil {
		writeA2AError(w, bindingREST, nil, 0, err)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(task)
	return true
}

// serveForkRPC answers the JSON-RPC methods ForkTask and RetryTask; false
// when the request is another method.
func (s *TaskService) serveForkRPC(w http.ResponseWriter, r *http.Request) bool {
	body, _, err := readBody(r)
	setBody(r, body)
	if err != nil {
		return false // the endpoint answers it
	}
	env, sentinel, _ := parseJSONRPCEnvelope(body)
	if sentinel != nil || (env.Method != MethodForkTask && env.Method != MethodRetryTask) {
		return false
	}
	var req ForkRequest
	if len(env.Params) > 0 && string(env.Params) != "null" {
		if err := json.Unmarshal(env.Params, &req); err != nil {
			writeA2AError(w, bindingJSONRPC, env.ID, 0, a2a.NewError(a2a.ErrInvalidParams, "invalid params: "+err.Error()))
			return true
		}
	}
	task, err := s.forkOrRetry(r.Context(), a2a.TaskID(req.ID), env.Method == MethodRetryTask, req)
	if err != nil {
		writeA2AError(w, bindingJSONRPC, env.ID, 0, err)
		return true
	}
	id := env.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *a2a.Task       `json:"result"`
	}{"2.0", id, task})
	return true
}

// forkOrRetry checks the caller and the request, then forks.
func (s *TaskService) forkOrRetry(ctx context.Context, id a2a.TaskID, retry bool, req ForkRequest) (*a2a.Task, error) {
	if err := permitAgent(ctx, s.agent.Name); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.ContextID != "" {
		if err := checkTaskID(req.ContextID); err != nil {
			return nil, a2a.NewError(a2a.ErrInvalidParams, "contextId: "+err.Error())
		}
	}
	return s.Fork(ctx, id, retry, req.AtMessage, req.ContextID)
}

// Fork creates a fork of task id at its atMessage-th message (retry: a
// retry of the failed task, at its end) in contextID ("" the original's),
// and answers it once it has reached the fork point (or the wait passed).
func (s *TaskService) Fork(ctx context.Context, id a2a.TaskID, retry bool, atMessage int, contextID string) (*a2a.Task, error) {
	// Reading it is the one authorization rule: the owner only.
	if err := checkTaskID(string(id)); err != nil {
		return nil, err
	}
	// The fork reads the original's history anyway: a completed original
	// is read from its latest run's last event, the rest with a query.
	latest, err := s.runHistory(ctx, id, "")
	if err != nil {
		return nil, err
	}
	orig := s.completedSnapshot(ctx, latest)
	if orig == nil {
		// The count of its messages is enough: no history page is read.
		if orig, err = s.loadTask(ctx, id, new(int)); err != nil {
			return nil, err
		}
	}
	total := orig.HistoryLength
	if total == 0 {
		// Recorded before snapshots counted their messages.
		if orig, err = s.loadTask(ctx, id, nil); err != nil {
			return nil, err
		}
		total = len(orig.Task.History)
	}
	if retry {
		if orig.Task.Status.State != a2a.TaskStateFailed {
			return nil, fmt.Errorf("%w: task %s is %s; only a failed task is retried (fork it instead)", errForkRefused, id, orig.Task.Status.State)
		}
		atMessage = total + 1
	} else if atMessage < 1 || atMessage > total {
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("atMessage must be from 1 to %d, the messages of task %s", total, id))
	}
	if contextID == "" {
		contextID = orig.Task.ContextID
	}
	first, fork, err := s.recordedRuns(ctx, id, orig.Task.ContextID, latest)
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, fmt.Errorf("%w: task %s's history holds no first message", a2a.ErrInternalError, id)
	}
	fork.AtMessage, fork.Retry = atMessage, retry
	if retry {
		// The failures that ended the task are tried again.
		for len(fork.Activities) > 0 && fork.Activities[len(fork.Activities)-1].Failure != nil {
			fork.Activities = fork.Activities[:len(fork.Activities)-1]
		}
	}
	owner := principal(ctx)
	forkID := uuid.NewString()
	m := *first
	m.TaskID, m.ContextID = "", ""
	// The first message makes the fork working in its first workflow task
	// (wire.MergedWrites): the start says so.
	sa := startSearchAttributes(s.agent, contextID, owner, a2a.TaskStateWorking)
	opts := client.StartWorkflowOptions{
		ID:                       forkID,
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		Memo:                     map[string]any{"agent": s.agent.Name, "text": truncate(workflows.MessageText(&m), 200), "forkOf": string(id)},
	}
	if s.agent.Versioning == workflows.AutoUpgrade {
		opts.VersioningOverride = &client.AutoUpgradeVersioningOverride{}
	}
	// A fork records without lean writes, as forks always did, and makes
	// its model calls as its original did (startedLocalModelCalls).
	recording := wire.LongTasks | wire.MergedWrites
	if startedLocalModelCalls(latest) {
		recording |= wire.LocalModelCalls
	}
	in := wire.TaskInput{Agent: s.agent.Name, ContextID: contextID, Owner: owner, Message: &m, Recording: recording, Fork: fork}
	// Started with the update that answers once the fork reached its fork
	// point (wire.UpdateForkSettled): one round trip, whose result holds
	// the task when it is small.
	deadline := time.Now().Add(s.waitTimeout)
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	historyLength := s.historyLimit(nil)
	handle, err := s.temporal.UpdateWithStartWorkflow(waitCtx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: s.temporal.NewWithStartWorkflowOperation(opts, wire.TaskWorkflowName, in),
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID:   forkID,
			UpdateName:   wire.UpdateForkSettled,
			Args:         []any{wire.ForkSettledInput{Agent: s.agent.Name, Owner: owner, HistoryLength: historyLength}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var res wire.TaskUpdateResult
	if err == nil {
		err = handle.Get(waitCtx, &res)
	}
	if err != nil && !boundPassed(ctx, err) {
		if _, derr := s.temporal.DescribeWorkflowExecution(ctx, forkID, ""); derr != nil {
			return nil, toA2AError(err) // the fork did not start
		}
		// Started, the update lost (the run continued as new, a worker
		// restarted): follow the fork's events instead.
		s.logger.WarnContext(ctx, "the fork's settled update failed; following its events", "task_id", forkID, "error", err)
	}
	var snap *wire.TaskSnapshot
	switch {
	case err == nil && res.Settled && res.Task != nil && s.owns(ctx, res.Task):
		if snap, err = s.withHistory(ctx, res.Task, historyLength); err != nil {
			return nil, err
		}
	default:
		if err != nil || !res.Settled {
			// Answer the fork once it reached the fork point: interrupted
			// after it worked, or ended.
			s.await(ctx, a2a.TaskID(forkID), res.EventSeq, deadline, settles(true))
		}
		if snap, err = s.loadTask(ctx, a2a.TaskID(forkID), historyLength); err != nil {
			return nil, err
		}
	}
	if o, ok := snap.Task.Metadata[wire.ForkMetadataKey].(map[string]any); ok {
		if refused, _ := o["refused"].(string); refused != "" {
			return nil, fmt.Errorf("%w: %s (the fork, task %s, failed)", errForkRefused, refused, forkID)
		}
	}
	return snap.Task, nil
}

// startedLocalModelCalls reports whether the run whose events these are
// was started with wire.LocalModelCalls (a continued run has its task's
// first run's), in its Recording or, recorded before it, its boolean. A fork makes its model calls as its original did:
// its recorded calls answer the fork's only in their kind (an activity's
// by its input, a local activity's by its order).
func startedLocalModelCalls(events []*historypb.HistoryEvent) bool {
	if len(events) == 0 {
		return false
	}
	var in wire.TaskInput
	p := events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	return len(p) > 0 && json.Unmarshal(p[0].GetData(), &in) == nil && in.RecordingLevel().LocalModelCalls()
}

// localActivityMarker is the name of the marker the Go SDK records a local
// activity's result in (its details: "data", the activity's type among
// others, and "result").
const localActivityMarker = "LocalActivity"

// recordedRuns reads task id's history, every run of it, into the first
// message and the fork's recorded activities and inputs.
func (s *TaskService) recordedRuns(ctx context.Context, id a2a.TaskID, contextID string, latest []*historypb.HistoryEvent) (*a2a.Message, *wire.ForkInput, error) {
	// The runs, latest first: each run's first event names the one before.
	var runs [][]*historypb.HistoryEvent
	runID := ""
	for {
		events := latest
		if runID != "" || events == nil {
			var err error
			if events, err = s.runHistory(ctx, id, runID); err != nil {
				return nil, nil, err
			}
		}
		if len(events) == 0 {
			return nil, nil, taskNotFound()
		}
		runs = append(runs, events)
		runID = events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			break
		}
	}
	slices.Reverse(runs)

	started := runs[0][0].GetEventTime().AsTime()
	fork := &wire.ForkInput{From: id, FromContextID: contextID, Started: &started}
	var first *a2a.Message
	if p := runs[0][0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads(); len(p) > 0 {
		var in wire.TaskInput
		if json.Unmarshal(p[0].GetData(), &in) == nil && in.Message != nil {
			first = in.Message
		}
	}
	for _, events := range runs {
		type scheduled struct{ typ, hash string }
		sched := map[int64]scheduled{}
		timers := map[string]time.Duration{}
		for _, e := range events {
			switch {
			case e.GetActivityTaskScheduledEventAttributes() != nil:
				a := e.GetActivityTaskScheduledEventAttributes()
				var data [][]byte
				for _, p := range a.GetInput().GetPayloads() {
					data = append(data, p.GetData())
				}
				sched[e.GetEventId()] = scheduled{a.GetActivityType().GetName(), wire.ForkHash(data, id, contextID)}
			case e.GetActivityTaskCompletedEventAttributes() != nil:
				a := e.GetActivityTaskCompletedEventAttributes()
				if sc, ok := sched[a.GetScheduledEventId()]; ok && wire.ForkRecorded(sc.typ) {
					rec := wire.RecordedActivity{Type: sc.typ, Hash: sc.hash}
					for _, p := range a.GetResult().GetPayloads() {
						rec.Result = append(rec.Result, wire.RecordedPayload{Metadata: p.GetMetadata(), Data: p.GetData()})
					}
					fork.Activities = append(fork.Activities, rec)
				}
			case e.GetActivityTaskFailedEventAttributes() != nil:
				a := e.GetActivityTaskFailedEventAttributes()
				if sc, ok := sched[a.GetScheduledEventId()]; ok && wire.ForkRecorded(sc.typ) {
					f := a.GetFailure()
					rec := &wire.RecordedFailure{Message: f.GetMessage()}
					if info := f.GetApplicationFailureInfo(); info != nil {
						rec.Type, rec.NonRetryable = info.GetType(), info.GetNonRetryable()
					}
					fork.Activities = append(fork.Activities, wire.RecordedActivity{Type: sc.typ, Hash: sc.hash, Failure: rec})
				}
			case e.GetActivityTaskTimedOutEventAttributes() != nil:
				a := e.GetActivityTaskTimedOutEventAttributes()
				if sc, ok := sched[a.GetScheduledEventId()]; ok && wire.ForkRecorded(sc.typ) {
					fork.Activities = append(fork.Activities, wire.RecordedActivity{Type: sc.typ, Hash: sc.hash,
						Failure: &wire.RecordedFailure{Message: "activity timed out: " + a.GetFailure().GetMessage(), Type: "TimedOut"}})
				}
			case e.GetTimerStartedEventAttributes() != nil:
				a := e.GetTimerStartedEventAttributes()
				timers[a.GetTimerId()] = a.GetStartToFireTimeout().AsDuration()
			case e.GetTimerFiredEventAttributes() != nil:
				if d, ok := timers[e.GetTimerFiredEventAttributes().GetTimerId()]; ok {
					fork.Activities = append(fork.Activities, wire.RecordedActivity{Kind: wire.RecordedTimer, Hash: d.String()})
				}
			case e.GetMarkerRecordedEventAttributes().GetMarkerName() == localActivityMarker:
				a := e.GetMarkerRecordedEventAttributes()
				var data struct{ ActivityType string }
				if p := a.GetDetails()["data"].GetPayloads(); len(p) == 0 || json.Unmarshal(p[0].GetData(), &data) != nil || data.ActivityType == "" {
					continue
				}
				rec := wire.RecordedActivity{Kind: wire.RecordedLocalActivity, Type: data.ActivityType}
				if f := a.GetFailure(); f != nil {
					rec.Failure = &wire.RecordedFailure{Message: f.GetMessage()}
					if info := f.GetApplicationFailureInfo(); info != nil {
						rec.Failure.Type, rec.Failure.NonRetryable = info.GetType(), info.GetNonRetryable()
					}
				} else {
					for _, p := range a.GetDetails()["result"].GetPayloads() {
						rec.Result = append(rec.Result, wire.RecordedPayload{Metadata: p.GetMetadata(), Data: p.GetData()})
						var named map[string]json.RawMessage
						if json.Unmarshal(p.GetData(), &named) == nil {
							_ = json.Unmarshal(named[wire.LocalForkHash], &rec.Hash)
						}
					}
				}
				fork.Activities = append(fork.Activities, rec)
			case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
				req := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
				name := req.GetName()
				args := req.GetArgs().GetPayloads()
				if len(args) == 0 {
					continue
				}
				switch name {
				case wire.UpdateSendMessage:
					if first == nil {
						var in wire.SendMessageInput
						if err := json.Unmarshal(args[0].GetData(), &in); err == nil && in.Message != nil {
							first = in.Message
							continue
						}
					}
				case wire.UpdateDecideApproval, wire.UpdateCompleteWaitpoint:
				default:
					continue
				}
				fork.Inputs = append(fork.Inputs, wire.RecordedInput{Update: name, Arg: json.RawMessage(args[0].GetData()), After: len(fork.Activities)})
			}
		}
	}
	return first, fork, nil
}

// completedSnapshot is the task a run completed with, from the run's
// events, when the caller may read it; nil when the run did not complete
// (or its result does not decode here: a query reads it then).
func (s *TaskService) completedSnapshot(ctx context.Context, events []*historypb.HistoryEvent) *wire.TaskSnapshot {
	if len(events) == 0 {
		return nil
	}
	done := events[len(events)-1].GetWorkflowExecutionCompletedEventAttributes()
	p := done.GetResult().GetPayloads()
	if done == nil || len(p) != 1 {
		return nil
	}
	var snap wire.TaskSnapshot
	if err := converter.GetDefaultDataConverter().FromPayload(p[0], &snap); err != nil || snap.Task == nil {
		return nil
	}
	if snap.NoTask || !s.owns(ctx, &snap) {
		return nil // the query answers: not found
	}
	return &snap
}

// historyPageSize is the page size the fork reads an original's history
// with: a long task's run in one or a few round trips.
const historyPageSize = 10000

// runHistory reads the events of one run of task id ("" the latest).
func (s *TaskService) runHistory(ctx context.Context, id a2a.TaskID, runID string) ([]*historypb.HistoryEvent, error) {
	var events []*historypb.HistoryEvent
	var token []byte
	for {
		resp, err := s.temporal.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace:              s.namespace,
			Execution:              &commonpb.WorkflowExecution{WorkflowId: string(id), RunId: runID},
			MaximumPageSize:        historyPageSize,
			NextPageToken:          token,
			HistoryEventFilterType: enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
		})
		if err != nil {
			return nil, toA2AError(err)
		}
		events = append(events, resp.GetHistory().GetEvents()...)
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return events, nil
		}
	}
}
