package taskservice

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
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
// owner (LoadTask answers task not found to anyone else).

// Fork creates a fork of task id at its atMessage-th message (retry: a
// retry of the failed task, at its end) in contextID ("" the original's),
// and answers it once it has reached the fork point (or the wait passed).
func (s *TaskService) Fork(ctx context.Context, id a2a.TaskID, retry bool, atMessage int, contextID string) (*a2a.Task, error) {
	orig, total, latest, err := s.original(ctx, id)
	if err != nil {
		return nil, err
	}
	if retry {
		if orig.Task.Status.State != a2a.TaskStateFailed {
			return nil, fmt.Errorf("%w: task %s is %s; only a failed task is retried (fork it instead)", apierror.ErrForkRefused, id, orig.Task.Status.State)
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
	owner := guard.Principal(ctx)
	m := *first
	m.TaskID, m.ContextID = "", ""
	// A fork records without lean writes, as forks always did, and makes
	// its model calls as its original did (startedLocalModelCalls).
	// It says what it waits for in its memo when the API's tasks do
	// (wire.WaitingMemo: nothing it writes while it replays).
	recording := wire.LongTasks | wire.MergedWrites
	if startedLocalModelCalls(latest) {
		recording |= wire.LocalModelCalls
	}
	if s.recording.WaitingMemo() {
		recording |= wire.WaitingMemo
	}
	in := wire.TaskInput{Agent: s.agent.Name, ContextID: contextID, Owner: owner, Message: &m, Recording: recording, Fork: fork}
	return s.startFork(ctx, id, in)
}

// original reads task id, which a fork copies: the task (with no history
// but on a task recorded before snapshots counted their messages), the
// number of its messages, and the events of its latest run. Reading it is
// the one authorization rule: the owner only.
func (s *TaskService) original(ctx context.Context, id a2a.TaskID) (orig *wire.TaskSnapshot, total int, latest []*historypb.HistoryEvent, err error) {
	if err := CheckTaskID(string(id)); err != nil {
		return nil, 0, nil, err
	}
	// The fork reads the original's history anyway: a completed original
	// is read from its latest run's last event, the rest with a query.
	if latest, err = s.runHistory(ctx, id, ""); err != nil {
		return nil, 0, nil, err
	}
	orig = s.completedSnapshot(ctx, latest)
	if orig == nil {
		// The count of its messages is enough: no history page is read.
		if orig, err = s.LoadTask(ctx, id, new(int)); err != nil {
			return nil, 0, nil, err
		}
	}
	total = orig.HistoryLength
	if total == 0 {
		// Recorded before snapshots counted their messages.
		if orig, err = s.LoadTask(ctx, id, nil); err != nil {
			return nil, 0, nil, err
		}
		total = len(orig.Task.History)
	}
	return orig, total, latest, nil
}

// startFork starts the fork of task id with input in, and answers it once
// it has reached the fork point (or the wait passed).
func (s *TaskService) startFork(ctx context.Context, id a2a.TaskID, in wire.TaskInput) (*a2a.Task, error) {
	forkID := uuid.NewString()
	// The first message makes the fork working in its first workflow task
	// (wire.MergedWrites): the start says so.
	sa := StartSearchAttributes(s.agent, in.ContextID, in.Owner, a2a.TaskStateWorking, in.Message)
	sa = append(sa, wire.ForkOfKey.ValueSet(string(id)))
	memo := StartMemo(s.agent, in.Message)
	memo["forkOf"] = string(id)
	opts := client.StartWorkflowOptions{
		ID:                       forkID,
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		Memo:                     memo,
	}
	opts.StaticSummary, opts.StaticDetails = StartUserMetadata(s.agent, in.Owner, in.ContextID, in.Message,
		Origin{ForkOf: id, AtMessage: in.Fork.AtMessage, Retry: in.Fork.Retry})
	if s.agent.Versioning == workflows.AutoUpgrade {
		opts.VersioningOverride = &client.AutoUpgradeVersioningOverride{}
	}
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
			Args:         []any{wire.ForkSettledInput{Agent: s.agent.Name, Owner: in.Owner, HistoryLength: historyLength}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var res wire.TaskUpdateResult
	if err == nil {
		err = handle.Get(waitCtx, &res)
	}
	if err != nil && !apierror.BoundPassed(ctx, err) {
		if _, derr := s.temporal.DescribeWorkflowExecution(ctx, forkID, ""); derr != nil {
			return nil, apierror.FromTemporal(err) // the fork did not start
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
			s.await(ctx, a2a.TaskID(forkID), res.EventSeq, deadline, Settles(true))
		}
		if snap, err = s.LoadTask(ctx, a2a.TaskID(forkID), historyLength); err != nil {
			return nil, err
		}
	}
	if o, ok := snap.Task.Metadata[wire.ForkMetadataKey].(map[string]any); ok {
		if refused, _ := o["refused"].(string); refused != "" {
			return nil, fmt.Errorf("%w: %s (the fork, task %s, failed)", apierror.ErrForkRefused, refused, forkID)
		}
	}
	return snap.Task, nil
}

// startedLocalModelCalls reports whether the run whose events these are
// was started with wire.LocalModelCalls (a continued run has its task's
// first run's), in its Recording or, recorded before it, its boolean. A
// fork makes its model calls as its original did: its recorded calls
// answer the fork's only in their kind (an activity's by its input, a
// local activity's by its order).
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
	runs, err := s.runs(ctx, id, latest)
	if err != nil {
		return nil, nil, err
	}
	started := runs[0][0].GetEventTime().AsTime()
	r := &forkRecorder{id: id, contextID: contextID, fork: &wire.ForkInput{From: id, FromContextID: contextID, Started: &started}}
	if p := runs[0][0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads(); len(p) > 0 {
		var in wire.TaskInput
		if json.Unmarshal(p[0].GetData(), &in) == nil && in.Message != nil {
			r.first = in.Message
		}
	}
	for _, events := range runs {
		r.run(events)
	}
	return r.first, r.fork, nil
}

// runs reads the events of every run of task id, the first run first;
// latest are its latest run's, read already (nil: not read).
func (s *TaskService) runs(ctx context.Context, id a2a.TaskID, latest []*historypb.HistoryEvent) ([][]*historypb.HistoryEvent, error) {
	// Latest first: each run's first event names the one before.
	var runs [][]*historypb.HistoryEvent
	runID := ""
	for {
		events := latest
		if runID != "" || events == nil {
			var err error
			if events, err = s.runHistory(ctx, id, runID); err != nil {
				return nil, err
			}
		}
		if len(events) == 0 {
			return nil, apierror.TaskNotFound()
		}
		runs = append(runs, events)
		runID = events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			break
		}
	}
	slices.Reverse(runs)
	return runs, nil
}

// forkRecorder reads the runs of task id's history, in order, into the
// input of its fork: the task's first message, the results of the
// activities, timers and local activities a fork replays, and the inputs
// (updates) it received after which.
type forkRecorder struct {
	id        a2a.TaskID
	contextID string
	fork      *wire.ForkInput
	first     *a2a.Message
}

// run records the events of one run.
func (r *forkRecorder) run(events []*historypb.HistoryEvent) {
	type scheduled struct{ typ, hash string }
	sched := map[int64]scheduled{}
	timers := map[string]time.Duration{}
	recorded := func(scheduledID int64) (scheduled, bool) {
		sc, ok := sched[scheduledID]
		return sc, ok && wire.ForkRecorded(sc.typ)
	}
	for _, e := range events {
		switch {
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			a := e.GetActivityTaskScheduledEventAttributes()
			var data [][]byte
			for _, p := range a.GetInput().GetPayloads() {
				data = append(data, p.GetData())
			}
			sched[e.GetEventId()] = scheduled{a.GetActivityType().GetName(), wire.ForkHash(data, r.id, r.contextID)}
		case e.GetActivityTaskCompletedEventAttributes() != nil:
			a := e.GetActivityTaskCompletedEventAttributes()
			if sc, ok := recorded(a.GetScheduledEventId()); ok {
				r.fork.Activities = append(r.fork.Activities, wire.RecordedActivity{Type: sc.typ, Hash: sc.hash, Result: recordedPayloads(a.GetResult())})
			}
		case e.GetActivityTaskFailedEventAttributes() != nil:
			a := e.GetActivityTaskFailedEventAttributes()
			if sc, ok := recorded(a.GetScheduledEventId()); ok {
				r.fork.Activities = append(r.fork.Activities, wire.RecordedActivity{Type: sc.typ, Hash: sc.hash, Failure: recordedFailure(a.GetFailure())})
			}
		case e.GetActivityTaskTimedOutEventAttributes() != nil:
			a := e.GetActivityTaskTimedOutEventAttributes()
			if sc, ok := recorded(a.GetScheduledEventId()); ok {
				r.fork.Activities = append(r.fork.Activities, wire.RecordedActivity{Type: sc.typ, Hash: sc.hash,
					Failure: &wire.RecordedFailure{Message: "activity timed out: " + a.GetFailure().GetMessage(), Type: "TimedOut"}})
			}
		case e.GetTimerStartedEventAttributes() != nil:
			a := e.GetTimerStartedEventAttributes()
			timers[a.GetTimerId()] = a.GetStartToFireTimeout().AsDuration()
		case e.GetTimerFiredEventAttributes() != nil:
			if d, ok := timers[e.GetTimerFiredEventAttributes().GetTimerId()]; ok {
				r.fork.Activities = append(r.fork.Activities, wire.RecordedActivity{Kind: wire.RecordedTimer, Hash: d.String()})
			}
		case e.GetMarkerRecordedEventAttributes().GetMarkerName() == localActivityMarker:
			r.localActivity(e.GetMarkerRecordedEventAttributes())
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			r.input(e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput())
		}
	}
}

// localActivity records the result (or failure) of a local activity from
// its marker; a marker naming no activity type is not one a fork replays.
func (r *forkRecorder) localActivity(a *historypb.MarkerRecordedEventAttributes) {
	var data struct{ ActivityType string }
	if p := a.GetDetails()["data"].GetPayloads(); len(p) == 0 || json.Unmarshal(p[0].GetData(), &data) != nil || data.ActivityType == "" {
		return
	}
	rec := wire.RecordedActivity{Kind: wire.RecordedLocalActivity, Type: data.ActivityType}
	if f := a.GetFailure(); f != nil {
		rec.Failure = recordedFailure(f)
	} else {
		for _, p := range a.GetDetails()["result"].GetPayloads() {
			rec.Result = append(rec.Result, wire.RecordedPayload{Metadata: p.GetMetadata(), Data: p.GetData()})
			var named map[string]json.RawMessage
			if json.Unmarshal(p.GetData(), &named) == nil {
				_ = json.Unmarshal(named[wire.LocalForkHash], &rec.Hash)
			}
		}
	}
	r.fork.Activities = append(r.fork.Activities, rec)
}

// input records an update the task accepted: its first message (when its
// input did not hold it), or an input a fork replays (a message, a
// decision, a waitpoint's completion) after the activities recorded so
// far.
func (r *forkRecorder) input(req *updatepb.Input) {
	name := req.GetName()
	args := req.GetArgs().GetPayloads()
	if len(args) == 0 {
		return
	}
	switch name {
	case wire.UpdateSendMessage:
		if r.first == nil {
			var in wire.SendMessageInput
			if err := json.Unmarshal(args[0].GetData(), &in); err == nil && in.Message != nil {
				r.first = in.Message
				return
			}
		}
	case wire.UpdateDecideApproval, wire.UpdateCompleteWaitpoint:
	default:
		return
	}
	r.fork.Inputs = append(r.fork.Inputs, wire.RecordedInput{Update: name, Arg: json.RawMessage(args[0].GetData()), After: len(r.fork.Activities)})
}

// recordedPayloads are an activity's result payloads as a fork replays
// them.
func recordedPayloads(p *commonpb.Payloads) []wire.RecordedPayload {
	var out []wire.RecordedPayload
	for _, p := range p.GetPayloads() {
		out = append(out, wire.RecordedPayload{Metadata: p.GetMetadata(), Data: p.GetData()})
	}
	return out
}

// recordedFailure is an activity's failure as a fork replays it.
func recordedFailure(f *failurepb.Failure) *wire.RecordedFailure {
	rec := &wire.RecordedFailure{Message: f.GetMessage()}
	if info := f.GetApplicationFailureInfo(); info != nil {
		rec.Type, rec.NonRetryable = info.GetType(), info.GetNonRetryable()
	}
	return rec
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
			return nil, apierror.FromTemporal(err)
		}
		events = append(events, resp.GetHistory().GetEvents()...)
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return events, nil
		}
	}
}
