package api

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TaskService implements the A2A methods of one agent on Temporal: every task
// is a TaskWorkflow execution whose ID is the task ID.
type TaskService struct {
	temporal  client.Client
	namespace string
	agent     *workflows.Agent
	taskQueue string
	logger    *slog.Logger
	// notifier hints new events when the worker runs in this process; nil
	// means poll every pollInterval.
	notifier     *hints.Broker
	closed       *closedWatch // with notifier (closedwatch.go)
	pollInterval time.Duration
	// queryTimeout bounds each query of a stream's follower, and
	// unreachableAfter ends a stream whose workflow stays unreachable
	// (Config.StreamQueryTimeout, Config.StreamUnreachableAfter).
	queryTimeout, unreachableAfter time.Duration
	// followers query each followed task once for all its streams
	// (follower.go).
	followers followers
	push      PushOptions // push.go
	// approverGroups maps approvers to their groups; nil: any group
	// (without authentication).
	approverGroups map[string][]string
	// authOn says authentication is configured (approverGroups).
	authOn bool
	// payloads holds the pages of long histories (and large payloads).
	payloads blobstore.Store
	// waitTimeout bounds how long a request waits for the worker.
	waitTimeout time.Duration
	// recording is what the tasks it starts record (Config.recording).
	recording wire.Recording
	// defaultHistory is how many messages a task read without historyLength
	// holds (0: all); see Config.DefaultHistoryLength.
	defaultHistory int
	// credentials keeps the secrets of auth-required answers; nil: none kept.
	credentials *secrets.CredentialStore
	// shuttingDown, once closed, ends the streams (Config.ShuttingDown).
	shuttingDown <-chan struct{}
	// defaultAgent is whether agent is the server's default one, which
	// A2A 0.3 gRPC clients reach without naming it (grpc.go).
	defaultAgent bool
}

var _ a2asrv.RequestHandler = (*TaskService)(nil)

// taskIDSpace namespaces the task IDs derived from message IDs.
var taskIDSpace = uuid.MustParse("6f1c1c52-3c1a-4a59-9d3e-5b0c1e7a2a10")

// newTaskID derives the ID of the task a first message creates. Deriving it
// (instead of drawing a random one) is what makes SendMessage idempotent: a
// retried request with the same messageId names the same workflow, and
// Update-with-Start finds it instead of starting a second task.
func newTaskID(agent, owner, contextID, messageID string) string {
	return uuid.NewSHA1(taskIDSpace, []byte(agent+"\x00"+owner+"\x00"+contextID+"\x00"+messageID)).String()
}

// SendMessage implements A2A SendMessage: a message without taskId creates a
// task (Update-with-Start), one with taskId is an Update on that task. It
// blocks until the task is interrupted or terminal unless the configuration
// asks to return immediately, but never longer than the wait bound
// (Config.WaitTimeout): then it answers with the task as it is.
func (s *TaskService) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	returnImmediately := req.Config != nil && req.Config.ReturnImmediately
	var historyLength *int
	if req.Config != nil {
		historyLength = req.Config.HistoryLength
	}
	// Without historyLength, the answer holds the messages since the
	// caller's own (within the default limit): the size of the turn, not of
	// the task, which A2A allows ("the server MAY apply a lower limit").
	// GetTask keeps the default limit. See docs/concepts.md.
	var since string
	if historyLength == nil && req.Message != nil {
		since = req.Message.ID
	}
	historyLength = s.historyLimit(historyLength)
	res, err := s.send(ctx, req, returnImmediately, &taskWant{historyLength: historyLength, since: since != ""})
	if err != nil {
		return nil, err
	}
	if res.Decision != nil {
		return decisionMessage(req.Message, res.Decision), nil
	}
	if res.Task != nil && res.Settled && s.owns(ctx, res.Task) {
		// The task came with the update's result: no read is needed. (The
		// result of an earlier update with the same ID is answered
		// without the validator that checks the caller: a caller who is
		// not the task's owner is answered by the read, as not found.)
		snap, err := s.withHistory(ctx, res.Task, historyLength)
		if err != nil {
			return nil, err
		}
		return sinceMessage(snap.Task, since), nil
	}
	if !res.Settled && !returnImmediately {
		// The task continued as new, or too many senders waited: follow its
		// events until it is interrupted or ends, within the bound.
		s.await(ctx, res.taskID, res.EventSeq, res.deadline, settles(true))
	}
	snap, err := s.loadTaskSince(ctx, res.taskID, historyLength, since)
	if err != nil {
		return nil, err
	}
	return sinceMessage(snap.Task, since), nil
}

// sinceMessage cuts t's history to the messages since the one whose ID is
// since (included) when it holds it; since "" leaves it. The workflow
// already cut it (wire.SendMessageInput.HistorySince); this covers the
// reads it could not: a closed run, a worker of an earlier version.
func sinceMessage(t *a2a.Task, since string) *a2a.Task {
	if since != "" && t != nil {
		t.History = wire.SinceMessage(t.History, since)
	}
	return t
}

// taskWant is what a caller that answers with the task asks of the
// SendMessage update's result: the history length it answers with and
// whether the history starts at the caller's message.
type taskWant struct {
	historyLength *int
	since         bool
}

// takeCredential answers a task waiting for a credential (refused says
// what it waits for): the secret in msg (its text, or a data part
// {"credential": ...}) is stored sealed in the credential store, and the
// message sent instead carries the reference only, so the secret never
// reaches Temporal history, streams or webhooks.
func (s *TaskService) takeCredential(ctx context.Context, taskID a2a.TaskID, owner string, msg *a2a.Message, refused error) (*a2a.Message, error) {
	var appErr *temporal.ApplicationError
	var req wire.CredentialRequest
	if !errors.As(refused, &appErr) || appErr.Details(&req) != nil || req.Service == "" {
		return nil, toA2AError(refused)
	}
	if s.credentials == nil {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation,
			fmt.Sprintf("task %s asks for a %s credential, but this server keeps no credentials (configure a secrets key, --secrets-key)", taskID, req.Service))
	}
	secret := credentialIn(msg)
	if secret == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams,
			fmt.Sprintf("task %s waits for a %s credential for %s: send it as the message's text", taskID, orNone(req.AuthType), req.Service))
	}
	ref, err := s.credentials.Put(ctx, secrets.Credential{Service: req.Service, AuthType: req.AuthType, Secret: secret,
		TaskID: string(taskID), Owner: owner, Created: time.Now().UTC(), Agent: req.Agent, RemoteTask: req.RemoteTask})
	if err != nil {
		s.logger.ErrorContext(ctx, "credential not stored", "task_id", taskID, "service", req.Service, "error", err)
		return nil, a2a.NewError(a2a.ErrInternalError, fmt.Sprintf("the %s credential could not be stored; nothing was recorded, send it again", req.Service))
	}
	data := map[string]any{wire.CredentialRefKey: ref, "service": req.Service, "authType": req.AuthType}
	said := fmt.Sprintf("Credential provided for %s.", req.Service)
	if req.Agent != "" {
		// A credential a remote agent asked for: sealed for it alone.
		data[wire.CredentialAgentKey] = req.Agent
		said = fmt.Sprintf("Credential provided for %s (agent %s).", req.Service, req.Agent)
	}
	refPart := a2a.NewDataPart(data)
	refPart.MediaType = "application/json"
	out := &a2a.Message{
		ID: msg.ID, Role: msg.Role, TaskID: msg.TaskID, ContextID: msg.ContextID,
		ReferenceTasks: msg.ReferenceTasks, Extensions: msg.Extensions,
		Parts: a2a.ContentParts{a2a.NewTextPart(said), refPart},
	}
	return out, nil
}

// credentialIn returns the secret a user's answer carries: a data part's
// "credential" field, else its text.
func credentialIn(m *a2a.Message) string {
	for _, p := range m.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if v, ok := data[wire.CredentialSecretKey].(string); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
	}
	return strings.TrimSpace(workflows.MessageText(m))
}

func orNone(s string) string {
	if s == "" {
		return "secret"
	}
	return s
}

// decisionMessage is the answer to an approver's decision on a task of
// another owner: a message about the approval, never the task (see
// workflows/access.go).
func decisionMessage(req *a2a.Message, a *workflows.Approval) *a2a.Message {
	data := a2a.NewDataPart(map[string]any{"approvalId": a.ID, "state": a.State, "decisions": len(a.Decisions)})
	data.MediaType = "application/json"
	return &a2a.Message{
		ID:   req.ID + "-decision",
		Role: a2a.MessageRoleAgent,
		Parts: a2a.ContentParts{
			a2a.NewTextPart(fmt.Sprintf("Your decision on approval %s is recorded; the approval is %s.", a.ID, a.State)),
			data,
		},
	}
}

// sendResult is the result of the SendMessage update: the bounded
// wire.TaskUpdateResult and, for an approver's decision on a task of another
// owner, the approval it decided (never the task).
type sendResult struct {
	wire.TaskUpdateResult
	Decision *workflows.Approval `json:"decision,omitempty"`
}

// sent is the outcome of delivering a message: the update's result, the
// task it went to and when the caller's wait bound ends.
type sent struct {
	sendResult
	taskID   a2a.TaskID
	deadline time.Time
}

// maxContinuingRetries is how often a write refused because the task was
// continuing as new at that moment is sent again.
const maxContinuingRetries = 10

// send delivers req's message through the SendMessage update. It waits for
// the worker to accept the message (the message is then durable) and, for a
// blocking send, for the update's result, each within the wait bound. A
// caller that answers with the task gives want (the history length it
// answers with, and whether it starts at the caller's message): the result
// then carries the task when it is small.
func (s *TaskService) send(ctx context.Context, req *a2a.SendMessageRequest, returnImmediately bool, want *taskWant) (sent, error) {
	if err := validateSendMessageRequest(req); err != nil {
		return sent{}, err
	}
	if err := checkInputModes(s.agent, req.Message); err != nil {
		return sent{}, err
	}
	if req.Config != nil {
		if err := checkAcceptedOutputModes(s.agent, req.Config.AcceptedOutputModes); err != nil {
			return sent{}, err
		}
	}
	msg := req.Message
	owner := principal(ctx)
	in := wire.SendMessageInput{Agent: s.agent.Name, Owner: owner, Message: msg, ReturnImmediately: returnImmediately,
		Extensions: activatedExtensions(ctx)}
	if want != nil {
		in.WantTask, in.HistoryLength, in.HistorySince = true, want.historyLength, want.since
	}
	// The message may be an approval decision (approval.go): it carries who
	// sends it, from authentication or, with it off, the X-Approver header.
	in.Approver, in.ApproverGroups = s.messageApprover(ctx)
	taskID := msg.TaskID
	var startOp client.WithStartWorkflowOperation
	if taskID == "" {
		var id string
		id, startOp = s.newTask(msg, owner)
		taskID = a2a.TaskID(id)
	}
	if req.Config != nil {
		// The push config's secrets are sealed for this task and config.
		push, err := s.preparePushConfig(ctx, taskID, req.Config.PushConfig)
		if err != nil {
			return sent{}, err
		}
		in.PushConfig = push
	}
	update := client.UpdateWorkflowOptions{
		UpdateID:     msg.ID,
		UpdateName:   wire.UpdateSendMessage,
		Args:         []any{in},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	}
	deadline := time.Now().Add(s.waitTimeout)
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	update.WorkflowID = string(taskID)
	var res sendResult
	var err error
	accepted := false        // the worker took the update: the message is recorded
	credentialTaken := false // the message's secret went to the credential store
	for attempt := 0; ; attempt++ {
		var handle client.WorkflowUpdateHandle
		if startOp != nil {
			handle, err = s.temporal.UpdateWithStartWorkflow(waitCtx, client.UpdateWithStartWorkflowOptions{
				StartWorkflowOperation: startOp,
				UpdateOptions:          update,
			})
			if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
				// A retry of a request whose task already ended: answer with that task.
				return sent{sendResult: sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}}, taskID: taskID, deadline: deadline}, nil
			}
		} else {
			handle, err = s.temporal.UpdateWorkflow(waitCtx, update)
		}
		if err == nil {
			// A validator's refusal and the handler's outcome both come
			// from Get; the update was accepted unless Get says refused.
			err = handle.Get(waitCtx, &res)
			accepted = err == nil || !isValidatorRefusal(err)
		}
		if isAppErrorType(err, wire.ErrTypeCredentialRequired) && !credentialTaken {
			// The task waits for a credential: the secret goes to the
			// credential store, the message carries its reference.
			credentialTaken = true
			if msg, err = s.takeCredential(ctx, taskID, owner, msg, err); err != nil {
				return sent{}, err
			}
			in.Message = msg
			update.Args = []any{in}
			continue
		}
		// The message reached a workflow task that then failed (e.g. it
		// continued as new while another message came: Temporal refuses
		// that completion): Temporal does not retry such an update, and
		// nothing of it was recorded, so it is sent again, as a message
		// refused while the task was continuing as new is.
		var notReady *serviceerror.WorkflowNotReady
		if (isAppErrorType(err, wire.ErrTypeContinuing) || errors.As(err, &notReady)) && attempt < maxContinuingRetries {
			if startOp != nil {
				_, startOp = s.newTask(msg, owner) // an operation is used once
			}
			sleep(waitCtx, time.Duration(attempt+1)*20*time.Millisecond)
			continue
		}
		break
	}
	if startOp != nil && accepted {
		metrics.TaskStarted(s.agent.Name)
	}
	switch {
	case err == nil:
	case isAppErrorType(err, wire.ErrTypeDuplicateMessage):
		// An earlier run of the task received this message: it is not
		// recorded twice; the caller gets the task as it is.
		return sent{sendResult: sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}}, taskID: taskID, deadline: deadline}, nil
	case boundPassed(ctx, err) && accepted:
		// Recorded, but the handler is still at work: the caller gets the
		// task as it is.
		return sent{sendResult: sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}}, taskID: taskID, deadline: deadline}, nil
	case boundPassed(ctx, err):
		if st := s.diagnoseStuck(ctx, taskID); st != nil {
			return sent{}, s.stuckError(taskID, st, "take the message")
		}
		return sent{}, noWorkerError(taskID, s.waitTimeout, "accepted the message")
	case msg.TaskID != "" || accepted:
		return sent{}, s.writeError(ctx, string(taskID), err, a2a.ErrUnsupportedOperation)
	default:
		return sent{}, toA2AError(err)
	}
	if res.Decision != nil && !decidedBy(res.Decision, in.Approver) {
		// Temporal answered with the result of an earlier update of this
		// message ID (a decision by another approver) without the validator
		// that checks the caller: nothing was recorded for this caller.
		return sent{}, taskNotFound()
	}
	return sent{sendResult: res, taskID: taskID, deadline: deadline}, nil
}

// decidedBy reports whether approver made one of a's decisions.
func decidedBy(a *workflows.Approval, approver string) bool {
	return slices.ContainsFunc(a.Decisions, func(d workflows.ApprovalDecision) bool { return d.Approver == approver })
}

// settles returns the condition a blocking send (or a cancel, when
// afterWork is false... see await) waits for in the task's events: the task
// ended, or it is interrupted after it worked on the message.
func settles(blockingSend bool) func(wire.Event, *bool) bool {
	return func(e wire.Event, worked *bool) bool {
		if e.Status == nil {
			return false
		}
		state := e.Status.Status.State
		if state == a2a.TaskStateWorking {
			*worked = true
		}
		return state.Terminal() || (blockingSend && *worked && interrupted(state))
	}
}

// await follows the task's events after seq until stop accepts one or the
// deadline passes, for a write whose update could not wait for its outcome.
func (s *TaskService) await(ctx context.Context, taskID a2a.TaskID, seq int64, deadline time.Time, stop func(wire.Event, *bool) bool) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	worked := false
	s.follow(ctx, taskID, seq, "", func(e wire.Event) bool { return stop(e, &worked) },
		func(a2a.Event, error) bool { return true })
}

// noWorkerError is the retryable answer to a write no worker took in time.
func noWorkerError(taskID a2a.TaskID, waited time.Duration, what string) error {
	return retryableError(fmt.Sprintf("no worker %s for task %s within %s; it may still be applied once a worker runs. "+
		"Send the same request again (same messageId): it is applied once", what, taskID, waited), "NO_WORKER")
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// events queries a task's events and returns the current task with the
// number of its latest event.
func (s *TaskService) events(ctx context.Context, taskID a2a.TaskID, in wire.EventsInput) (*wire.TaskSnapshot, error) {
	out, err := s.queryEvents(ctx, taskID, in)
	if err != nil {
		return nil, err
	}
	if out.Task == nil {
		return nil, toA2AError(fmt.Errorf("task %s: the events query returned no task", taskID))
	}
	out.Task.EventSeq = out.Last
	return s.withHistory(ctx, out.Task, in.HistoryLength)
}

// queryEvents runs the QueryEvents query on the task's workflow. A workflow
// that ended outside its handler (terminated, timed out...) answers with its
// task read as failed and one last event saying so.
func (s *TaskService) queryEvents(ctx context.Context, taskID a2a.TaskID, in wire.EventsInput) (wire.EventsOutput, error) {
	if err := checkTaskID(string(taskID)); err != nil {
		return wire.EventsOutput{}, err
	}
	in.Agent, in.Owner = s.agent.Name, principal(ctx)
	var resp *client.QueryWorkflowWithOptionsResponse
	var err error
	for attempt := 0; ; attempt++ {
		resp, err = s.temporal.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
			WorkflowID:           string(taskID),
			QueryType:            wire.QueryEvents,
			Args:                 []any{in},
			QueryRejectCondition: enums.QUERY_REJECT_CONDITION_NOT_COMPLETED_CLEANLY,
		})
		if err != nil {
			return wire.EventsOutput{}, toA2AError(err)
		}
		// The run read had just continued as new: read the next one.
		if st := resp.QueryRejected.GetStatus(); (st == enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW ||
			st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING) && attempt < maxContinuingRetries {
			sleep(ctx, time.Duration(attempt+1)*10*time.Millisecond)
			continue
		}
		break
	}
	if rejected := resp.QueryRejected; rejected != nil {
		snap, err := s.endedOutsideHandler(ctx, taskID, "", rejected.GetStatus(), in.HistoryLength)
		if err != nil {
			return wire.EventsOutput{}, err
		}
		out := wire.EventsOutput{Task: snap, Last: snap.EventSeq}
		if in.After < snap.EventSeq {
			out.Events = []wire.Event{{Seq: snap.EventSeq, Status: &a2a.TaskStatusUpdateEvent{
				TaskID: taskID, ContextID: snap.ContextID, Status: snap.Status,
			}}}
		}
		return out, nil
	}
	var out wire.EventsOutput
	if err := resp.QueryResult.Get(&out); err != nil {
		return wire.EventsOutput{}, toA2AError(fmt.Errorf("decode events of task %s: %w", taskID, err))
	}
	return out, nil
}

// newTask prepares the start of the workflow for a new task created by msg.
func (s *TaskService) newTask(msg *a2a.Message, owner string) (string, client.WithStartWorkflowOperation) {
	contextID := msg.ContextID
	taskID := newTaskID(s.agent.Name, owner, contextID, msg.ID)
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	// The first message makes the task working in its first workflow task
	// (wire.MergedWrites): the start says so, and a task that completes in
	// that turn writes no A2ATaskState of its own (wire.LeanWrites).
	sa := startSearchAttributes(s.agent, contextID, owner, a2a.TaskStateWorking)
	opts := client.StartWorkflowOptions{
		ID:                       taskID,
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// A retried message finds its task, even finished; only a workflow
		// that failed (one that never got its first message: no task) or
		// was terminated lets the same message start its task again.
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
		// The memo makes a run readable at a glance in the Temporal UI.
		Memo: map[string]any{"agent": s.agent.Name, "text": truncate(workflows.MessageText(msg), 200)},
	}
	if s.agent.Versioning == workflows.AutoUpgrade {
		// Workers of a Worker Deployment pin tasks by default; this agent's
		// follow the deployment's current build.
		opts.VersioningOverride = &client.AutoUpgradeVersioningOverride{}
	}
	in := wire.TaskInput{Agent: s.agent.Name, ContextID: contextID, Owner: owner, Recording: s.recording}
	return taskID, s.temporal.NewWithStartWorkflowOperation(opts, wire.TaskWorkflowName, in)
}

// startSearchAttributes are the search attributes a task starts with: its
// context, state, agent, the agent's default skill and its owner.
func startSearchAttributes(agent *workflows.Agent, contextID, owner string, state a2a.TaskState) []temporal.SearchAttributeUpdate {
	sa := []temporal.SearchAttributeUpdate{
		wire.ContextIDKey.ValueSet(contextID),
		wire.TaskStateKey.ValueSet(string(state)),
		wire.AgentKey.ValueSet(agent.Name),
	}
	if skill := agent.DefaultSkill(); skill != "" {
		sa = append(sa, wire.SkillKey.ValueSet(skill))
	}
	if owner != "" {
		sa = append(sa, wire.OwnerKey.ValueSet(owner))
	}
	return sa
}

// GetTask implements A2A GetTask (see loadTask).
func (s *TaskService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "historyLength must not be negative")
	}
	snap, err := s.loadTask(ctx, req.ID, s.historyLimit(req.HistoryLength))
	if err != nil {
		return nil, err
	}
	return snap.Task, nil
}

// CancelTask implements A2A CancelTask with the cancel update. When the
// update cannot get in (Temporal's limit of updates in flight) or no worker
// accepts it in time, the cancel is requested from Temporal instead, which
// records it durably: the task ends canceled as soon as a worker runs it.
func (s *TaskService) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	deadline := time.Now().Add(s.waitTimeout)
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	handle, err := s.temporal.UpdateWorkflow(waitCtx, client.UpdateWorkflowOptions{
		WorkflowID:   string(req.ID),
		UpdateName:   wire.UpdateCancelTask,
		Args:         []any{wire.CancelTaskInput{Agent: s.agent.Name, Owner: principal(ctx)}},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	})
	var res wire.TaskUpdateResult
	switch {
	case err == nil:
		if err := handle.Get(waitCtx, &res); err != nil && !boundPassed(ctx, err) {
			return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
		}
	case isResourceExhausted(err) || boundPassed(ctx, err):
		if err := s.requestCancel(ctx, req.ID); err != nil {
			return nil, err
		}
	default:
		return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
	}
	if !res.Settled {
		s.await(ctx, req.ID, res.EventSeq, deadline, settles(false))
	}
	snap, err := s.loadTask(ctx, req.ID, s.historyLimit(nil))
	if err != nil {
		return nil, err
	}
	if !snap.Status.State.Terminal() {
		return nil, retryableError(fmt.Sprintf("the cancellation of task %s is recorded; no worker ended the task within %s. "+
			"It ends canceled as soon as a worker runs it; read it with GetTask", req.ID, s.waitTimeout), "NO_WORKER")
	}
	return snap.Task, nil
}

// requestCancel asks Temporal to cancel the task's workflow, after checking
// from visibility that the caller may: the workflow's own validator is not
// in this path.
func (s *TaskService) requestCancel(ctx context.Context, id a2a.TaskID) error {
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return toA2AError(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if !s.callerSees(ctx, info) {
		return taskNotFound()
	}
	if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s is in a terminal state", id))
	}
	if err := s.temporal.CancelWorkflow(ctx, string(id), ""); err != nil {
		return toA2AError(err)
	}
	s.logger.InfoContext(ctx, "cancel requested from Temporal (the cancel update could not get in)", "task_id", id)
	return nil
}

// writeError maps the error of a write (an update) on taskID. Temporal
// answers NotFound both for a task that never existed and for one whose
// workflow has closed; a closed one is terminal, so the write gets
// whenClosed (UnsupportedOperation for a message, TaskNotCancelable for a
// cancel) rather than TaskNotFound.
func (s *TaskService) writeError(ctx context.Context, taskID string, err error, whenClosed error) error {
	if isResourceExhausted(err) {
		return retryableError(fmt.Sprintf("task %s has too many requests in flight; try again in a moment", taskID), "TOO_MANY_UPDATES")
	}
	if !isNotFound(err) {
		return toA2AError(err)
	}
	if _, derr := s.loadTask(ctx, a2a.TaskID(taskID), new(int)); derr != nil {
		return derr
	}
	return a2a.NewError(whenClosed, fmt.Sprintf("task %s is in a terminal state", taskID))
}

// GetExtendedAgentCard returns the card extended for the authenticated
// caller (see extendedCard in auth.go); without auth it answers
// ExtendedCardNotConfigured, as there is nothing more than the public card.
func (s *TaskService) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return s.extendedCard(ctx)
}

// validateSendMessageRequest refuses malformed messages before they reach
// Temporal; the workflow's update validator checks them again against the
// task's state.
func validateSendMessageRequest(req *a2a.SendMessageRequest) error {
	invalid := func(format string, args ...any) error {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
	}
	m := req.Message
	switch {
	case m == nil:
		return invalid("message is required")
	case m.ID == "":
		return invalid("message.messageId is required")
	case len(m.ID) > 256:
		return invalid("message.messageId is longer than 256 bytes")
	case m.Role != a2a.MessageRoleUser:
		return invalid("message.role must be ROLE_USER")
	case len(m.Parts) == 0:
		return invalid("message.parts must not be empty")
	case req.Config != nil && req.Config.HistoryLength != nil && *req.Config.HistoryLength < 0:
		return invalid("configuration.historyLength must not be negative")
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalid("message.parts[%d] has no content", i)
		}
		if !utf8.ValidString(p.Text()) {
			return invalid("message.parts[%d].text is not valid UTF-8", i)
		}
		if data, ok := p.Data().(map[string]any); ok && data[wire.CredentialRefKey] != nil {
			// A reference is what the server puts in place of a secret it
			// sealed (takeCredential): one a caller wrote would point a
			// waiting task at a credential it was not given for.
			return invalid("message.parts[%d] carries a credential reference (%q), which only the server sets: send the credential itself, as the message's text or a data part {%q: \"...\"}",
				i, wire.CredentialRefKey, wire.CredentialSecretKey)
		}
	}
	return nil
}

// checkAcceptedOutputModes refuses a request whose acceptedOutputModes
// share no media type with what agent produces (its card's default output
// modes and its skills' output modes) with UnsupportedContentType (-32005,
// HTTP 415), naming what it produces. Wildcards match either way ("*/*",
// "image/*"); parameters (";charset=utf-8") and case are ignored, and blank
// entries skipped. Only the refusal is done: the artifacts of an agent that
// produces several modes are not filtered by the accepted ones.
func checkAcceptedOutputModes(agent *workflows.Agent, accepted []string) error {
	var asked []string
	for _, m := range accepted {
		if strings.TrimSpace(m) != "" {
			asked = append(asked, m)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	card := AgentCard(agent, "")
	produced := slices.Clone(card.DefaultOutputModes)
	for _, skill := range card.Skills {
		for _, m := range skill.OutputModes {
			if !slices.Contains(produced, m) {
				produced = append(produced, m)
			}
		}
	}
	for _, a := range asked {
		for _, p := range produced {
			if mediaTypesMatch(a, p) {
				return nil
			}
		}
	}
	return a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf(
		"configuration.acceptedOutputModes %s: agent %s produces none of them; it produces %s",
		truncate(strings.Join(asked, ", "), 200), agent.Name, strings.Join(produced, ", ")))
}

// mediaTypesMatch reports whether media types a and b (either may be a
// wildcard such as "*/*" or "text/*") can name the same content.
func mediaTypesMatch(a, b string) bool {
	base := func(s string) (string, string) {
		s, _, _ = strings.Cut(s, ";")
		typ, sub, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "/")
		return typ, sub
	}
	at, as := base(a)
	bt, bs := base(b)
	if at == "" || bt == "" {
		return false
	}
	if at == "*" || bt == "*" {
		return true
	}
	return at == bt && (as == bs || as == "*" || bs == "*")
}

func errorEvents(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// historyLimit is the historyLength a read uses: the request's, or without
// one the server's default (A2A lets a server apply a lower limit), so that
// a client that never sets it does not read a long task's whole history on
// every turn.
func (s *TaskService) historyLimit(requested *int) *int {
	if requested != nil || s.defaultHistory <= 0 {
		return requested
	}
	n := s.defaultHistory
	return &n
}
