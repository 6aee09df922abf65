package taskservice

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TaskService implements the task methods of A2A for one agent on
// Temporal: every task is a TaskWorkflow execution whose ID is the task ID.
// Every binding serves it (with the agent's card methods), and /mcp calls
// it.
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
	// (Config.QueryTimeout, Config.UnreachableAfter).
	queryTimeout, unreachableAfter time.Duration
	// followers query each followed task once for all its streams
	// (follower.go).
	followers followers
	push      PushOptions // push.go
	// guard.ApproverGroups maps approvers to their groups; nil: any group
	// (without authentication).
	approverGroups map[string][]string
	// authOn says authentication is configured (guard.ApproverGroups).
	authOn bool
	// delegates checks a decision part's onBehalfOf.
	delegates Delegates
	// payloads holds the pages of long histories (and large payloads).
	payloads blobstore.Store
	// waitTimeout bounds how long a request waits for the worker.
	waitTimeout time.Duration
	// recording is what the tasks it starts record (Config.Recording).
	recording wire.Recording
	// defaultHistory is how many messages a task read without historyLength
	// holds (0: all); see Config.DefaultHistoryLength.
	defaultHistory int
	// credentials keeps the secrets of auth-required answers; nil: none kept.
	credentials *secrets.CredentialStore
	// shuttingDown, once closed, ends the streams (Config.ShuttingDown).
	shuttingDown <-chan struct{}
	// usage sums the tasks' recorded LLM usage (nil: no database), and
	// temporalUIURL links timelines to the Temporal Web UI ("" no link):
	// timeline.go.
	usage         UsageReader
	temporalUIURL string
	// storageCheck refuses messages while storage is full (Config.StorageCheck).
	storageCheck func() error
}

// ReasonStorageFull is the reason, in a retryable error's data, of a
// message refused because the server's storage is full.
const ReasonStorageFull = "STORAGE_FULL"

// Config configures the task services of a server's agents; api.New
// fills in the defaults of its Config, whose fields of the same names say
// what each does.
type Config struct {
	TaskQueue string
	Namespace string
	Logger    *slog.Logger
	// Notifier hints new events when the worker runs in this process; nil:
	// the streams poll every PollInterval.
	Notifier     *hints.Broker
	PollInterval time.Duration
	// QueryTimeout bounds each query of a stream; a stream whose task stays
	// unreachable for UnreachableAfter ends.
	QueryTimeout, UnreachableAfter time.Duration
	WaitTimeout                    time.Duration
	Push                           PushOptions
	// ApproverGroups maps approvers to their groups; nil: any group
	// (without authentication, AuthOn false).
	ApproverGroups map[string][]string
	AuthOn         bool
	// Delegations finds the approvers' delegations, for a decision part's
	// onBehalfOf; nil: none are kept.
	Delegations DelegationLookup
	Payloads    blobstore.Store
	// Recording is what the tasks the services start record.
	Recording            wire.Recording
	Credentials          *secrets.CredentialStore
	DefaultHistoryLength int
	ShuttingDown         <-chan struct{}
	// Usage sums the LLM usage the workers recorded (nil: no database);
	// TemporalUIURL is the Temporal Web UI's base URL ("" none). The
	// timeline (timeline.go) reads both.
	Usage         UsageReader
	TemporalUIURL string
	// StorageCheck, when set, is asked before a message is delivered: an
	// error (serve: its data directory's disk is full) refuses the message
	// at once with a retryable error, reason STORAGE_FULL, instead of a wait
	// for a Temporal that cannot record it. A message carrying an approval
	// decision is not asked about: like a cancel or a decision through
	// REST, a decision ends or frees work (a few events of a task already
	// recorded, once per approval), which the disk's reserve is kept for.
	StorageCheck func() error
}

// NewServices returns the TaskService of each agent of reg, by name, over
// the Temporal client c. They share one watch of the tasks that ended
// outside their handler (closedwatch.go).
func NewServices(c client.Client, reg *engine.Registry, cfg Config) map[string]*TaskService {
	var closed *closedWatch
	if cfg.Notifier != nil {
		closed = newClosedWatch(c, cfg.Namespace, cfg.Notifier, cfg.Logger)
	}
	services := map[string]*TaskService{}
	for _, name := range reg.Names() {
		agent, _ := reg.Get(name)
		services[name] = &TaskService{
			temporal: taskIDGuard{c}, agent: agent, taskQueue: cfg.TaskQueue, logger: cfg.Logger,
			notifier: cfg.Notifier, closed: closed, pollInterval: cfg.PollInterval,
			queryTimeout: cfg.QueryTimeout, unreachableAfter: cfg.UnreachableAfter, push: cfg.Push,
			approverGroups: cfg.ApproverGroups, authOn: cfg.AuthOn, payloads: cfg.Payloads, waitTimeout: cfg.WaitTimeout,
			recording:   cfg.Recording,
			credentials: cfg.Credentials, defaultHistory: cfg.DefaultHistoryLength, namespace: cfg.Namespace,
			shuttingDown: cfg.ShuttingDown, usage: cfg.Usage, temporalUIURL: strings.TrimRight(cfg.TemporalUIURL, "/"),
			storageCheck: cfg.StorageCheck,
			delegates:    Delegates{Lookup: cfg.Delegations, ApproverGroups: cfg.ApproverGroups, AuthOn: cfg.AuthOn, Logger: cfg.Logger},
		}
	}
	return services
}

// Agent is the agent the service serves.
func (s *TaskService) Agent() *workflows.Agent { return s.agent }

// TaskIDSpace namespaces the task IDs derived from message IDs.
var TaskIDSpace = uuid.MustParse("6f1c1c52-3c1a-4a59-9d3e-5b0c1e7a2a10")

// newTaskID derives the ID of the task a first message creates. Deriving it
// (instead of drawing a random one) is what makes SendMessage idempotent: a
// retried request with the same messageId names the same workflow, and
// Update-with-Start finds it instead of starting a second task.
func newTaskID(agent, owner, contextID, messageID string) string {
	return uuid.NewSHA1(TaskIDSpace, []byte(agent+"\x00"+owner+"\x00"+contextID+"\x00"+messageID)).String()
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
	res, err := s.Send(ctx, req, returnImmediately, &taskWant{historyLength: historyLength, since: since != ""})
	if err != nil {
		return nil, err
	}
	if res.Decision != nil {
		return DecisionMessage(req.Message, res.Decision), nil
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
		return s.messageOnlyAnswer(req, stampTask(ctx, sinceMessage(snap.Task, since), snap.EventSeq)), nil
	}
	if !res.Settled && !returnImmediately {
		// The task continued as new, or too many senders waited: follow its
		// events until it is interrupted or ends, within the bound.
		s.await(ctx, res.TaskID, res.EventSeq, res.deadline, Settles(true))
	}
	snap, err := s.loadTaskSince(ctx, res.TaskID, historyLength, since)
	if err != nil {
		return nil, err
	}
	return s.messageOnlyAnswer(req, stampTask(ctx, sinceMessage(snap.Task, since), snap.EventSeq)), nil
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

// sendResult is the result of the SendMessage update: the bounded
// wire.TaskUpdateResult and, for an approver's decision on a task of another
// owner, the approval it decided (never the task).
type sendResult struct {
	wire.TaskUpdateResult
	Decision *workflows.Approval `json:"decision,omitempty"`
}

// Sent is the outcome of delivering a message: the update's result, the
// task it went to and when the caller's wait bound ends.
type Sent struct {
	sendResult
	TaskID   a2a.TaskID
	deadline time.Time
}

// maxContinuingRetries is how often a write refused because the task was
// continuing as new at that moment is sent again.
const maxContinuingRetries = 10

// Send delivers req's message through the SendMessage update. It waits for
// the worker to accept the message (the message is then durable) and, for a
// blocking send, for the update's result, each within the wait bound. A
// caller that answers with the task gives want (the history length it
// answers with, and whether it starts at the caller's message): the result
// then carries the task when it is small.
func (s *TaskService) Send(ctx context.Context, req *a2a.SendMessageRequest, returnImmediately bool, want *taskWant) (Sent, error) {
	d, err := s.newDelivery(ctx, req, returnImmediately, want)
	if err != nil {
		return Sent{}, err
	}
	if s.storageCheck != nil && !carriesDecision(req.Message) {
		if err := s.storageCheck(); err != nil {
			return Sent{}, apierror.Retryable(err.Error(), ReasonStorageFull)
		}
	}
	waitCtx, cancel := context.WithDeadline(ctx, d.deadline)
	defer cancel()
	res, accepted, err := s.deliver(waitCtx, d)
	if apierror.IsAppErrorType(err, wire.ErrTypeCredentialRequired) {
		// The task waits for a credential: the secret goes to the
		// credential store, the message carries its reference (once).
		if err := s.withCredential(ctx, d, err); err != nil {
			return Sent{}, err
		}
		res, accepted, err = s.deliver(waitCtx, d)
	}
	return s.answerDelivery(ctx, d, res, accepted, err)
}

// delivery is a message on its way to its task through the SendMessage
// update.
type delivery struct {
	in     wire.SendMessageInput
	update client.UpdateWorkflowOptions
	// startOp starts the task's workflow when the message creates the
	// task; nil when it goes to a task that exists.
	startOp client.WithStartWorkflowOperation
	taskID  a2a.TaskID
	owner   string
	// deadline ends the caller's wait (Config.WaitTimeout).
	deadline time.Time
	// attempts counts the sends so far (maxContinuingRetries).
	attempts int
}

// newDelivery checks req and builds the delivery of its message: the
// update's input, and the start of the task's workflow when the message
// creates the task.
func (s *TaskService) newDelivery(ctx context.Context, req *a2a.SendMessageRequest, returnImmediately bool, want *taskWant) (*delivery, error) {
	if err := ValidateSendMessageRequest(req); err != nil {
		return nil, err
	}
	if err := CheckInputModes(s.agent, req.Message); err != nil {
		return nil, err
	}
	if req.Config != nil {
		if err := checkAcceptedOutputModes(s.agent, req.Config.AcceptedOutputModes); err != nil {
			return nil, err
		}
	}
	msg := req.Message
	d := &delivery{owner: guard.Principal(ctx), taskID: msg.TaskID}
	d.in = wire.SendMessageInput{Agent: s.agent.Name, Owner: d.owner, Message: msg, ReturnImmediately: returnImmediately,
		Extensions: activatedExtensions(ctx)}
	if want != nil {
		d.in.WantTask, d.in.HistoryLength, d.in.HistorySince = true, want.historyLength, want.since
	}
	// The message may be an approval decision (approval.go): it carries who
	// sends it, from authentication or, with it off, the X-Approver header.
	d.in.Approver, d.in.ApproverGroups = s.messageApprover(ctx)
	if from := decisionOnBehalfOf(msg); from != "" {
		// A delegate deciding for an approver out of office (delegation.go).
		who, err := s.delegates.OnBehalfOf(ctx, wire.Caller{Principal: d.owner, Approver: d.in.Approver, Groups: d.in.ApproverGroups}, from)
		if err != nil {
			return nil, err
		}
		d.in.Approver, d.in.ApproverGroups, d.in.OnBehalfOf = who.Approver, who.Groups, who.OnBehalfOf
	}
	if d.taskID == "" {
		var id string
		id, d.startOp = s.newTask(msg, d.owner)
		d.taskID = a2a.TaskID(id)
	} else if g, ok := generationOf(ctx); ok {
		// A2A 1.1's conditional message, checked by the workflow's
		// validator (workflows/generation.go); ignored on a new task.
		d.in.IfGenerationMatch = g.IfMatch
	}
	if req.Config != nil {
		// The push config's secrets are sealed for this task and config.
		push, err := s.PreparePushConfig(ctx, d.taskID, req.Config.PushConfig)
		if err != nil {
			return nil, err
		}
		d.in.PushConfig, d.in.PushGeneration = push, wantsGeneration(ctx)
	}
	d.update = client.UpdateWorkflowOptions{
		WorkflowID:   string(d.taskID),
		UpdateID:     msg.ID,
		UpdateName:   wire.UpdateSendMessage,
		Args:         []any{d.in},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	}
	d.deadline = time.Now().Add(s.waitTimeout)
	return d, nil
}

// deliver sends d's update until the task takes it or refuses it, within
// waitCtx: a write the task could not take at that moment, with nothing of
// it recorded, is sent again (apierror.NotTaken). It returns the update's result,
// whether the worker accepted the update (the message is then recorded),
// and the update's error. A task that already ended, which a retry of the
// request that created it finds, answers settled.
func (s *TaskService) deliver(waitCtx context.Context, d *delivery) (res sendResult, accepted bool, err error) {
	for ; ; d.attempts++ {
		var handle client.WorkflowUpdateHandle
		if d.startOp != nil {
			handle, err = s.temporal.UpdateWithStartWorkflow(waitCtx, client.UpdateWithStartWorkflowOptions{
				StartWorkflowOperation: d.startOp,
				UpdateOptions:          d.update,
			})
			if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
				// A retry of a request whose task already ended: answer with that task.
				return sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}}, false, nil
			}
		} else {
			handle, err = s.temporal.UpdateWorkflow(waitCtx, d.update)
		}
		if err == nil {
			// A validator's refusal and the handler's outcome both come
			// from Get; the update was accepted unless Get says refused.
			err = handle.Get(waitCtx, &res)
			accepted = err == nil || !apierror.IsValidatorRefusal(err)
		}
		// The message reached a workflow task that then failed (e.g. it
		// continued as new while another message came: Temporal refuses
		// that completion): Temporal does not retry such an update, and
		// nothing of it was recorded, so it is sent again, as a message
		// refused while the task was continuing as new is.
		if !apierror.NotTaken(err) || d.attempts >= maxContinuingRetries {
			return res, accepted, err
		}
		if d.startOp != nil {
			_, d.startOp = s.newTask(d.in.Message, d.owner) // an operation is used once
		}
		sleep(waitCtx, time.Duration(d.attempts+1)*20*time.Millisecond)
	}
}

// withCredential puts the credential of d's message, which the task
// refused for waiting for one (refused), in the credential store, and has
// the message carry its reference instead (takeCredential).
func (s *TaskService) withCredential(ctx context.Context, d *delivery, refused error) error {
	msg, err := s.takeCredential(ctx, d.taskID, d.owner, d.in.Message, refused)
	if err != nil {
		return err
	}
	d.in.Message = msg
	d.update.Args = []any{d.in}
	d.attempts++
	return nil
}

// answerDelivery is what the caller of d gets from the update's outcome:
// the update's result; the task as it is for a message recorded but not
// answered in time, or one an earlier run of the task got; or the error.
func (s *TaskService) answerDelivery(ctx context.Context, d *delivery, res sendResult, accepted bool, err error) (Sent, error) {
	if d.startOp != nil && accepted {
		metrics.TaskStarted(s.agent.Name)
	}
	asItIs := Sent{sendResult: sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}}, TaskID: d.taskID, deadline: d.deadline}
	switch {
	case err == nil:
	case apierror.IsAppErrorType(err, wire.ErrTypeDuplicateMessage):
		// An earlier run of the task received this message: it is not
		// recorded twice; the caller gets the task as it is.
		return asItIs, nil
	case apierror.BoundPassed(ctx, err) && accepted:
		// Recorded, but the handler is still at work: the caller gets the
		// task as it is.
		return asItIs, nil
	case apierror.BoundPassed(ctx, err):
		if st := s.diagnoseStuck(ctx, d.taskID); st != nil {
			return Sent{}, s.stuckError(d.taskID, st, "take the message")
		}
		return Sent{}, noWorkerError(d.taskID, s.waitTimeout, "accepted the message")
	case d.in.Message.TaskID != "" || accepted:
		return Sent{}, s.writeError(ctx, string(d.taskID), err, a2a.ErrUnsupportedOperation)
	default:
		return Sent{}, apierror.FromTemporal(err)
	}
	if res.Decision != nil && !decidedBy(res.Decision, d.in.Approver) {
		// Temporal answered with the result of an earlier update of this
		// message ID (a decision by another approver) without the validator
		// that checks the caller: nothing was recorded for this caller.
		return Sent{}, apierror.TaskNotFound()
	}
	return Sent{sendResult: res, TaskID: d.taskID, deadline: d.deadline}, nil
}

// Settles returns the condition a blocking send (or a cancel, when
// afterWork is false... see await) waits for in the task's events: the task
// ended, or it is interrupted after it worked on the message.
func Settles(blockingSend bool) func(wire.Event, *bool) bool {
	return func(e wire.Event, worked *bool) bool {
		if e.Status == nil {
			return false
		}
		state := e.Status.Status.State
		if state == a2a.TaskStateWorking {
			*worked = true
		}
		return state.Terminal() || (blockingSend && *worked && Interrupted(state))
	}
}

// await follows the task's events after seq until stop accepts one or the
// deadline passes, for a write whose update could not wait for its outcome.
func (s *TaskService) await(ctx context.Context, taskID a2a.TaskID, seq int64, deadline time.Time, stop func(wire.Event, *bool) bool) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	worked := false
	s.Follow(ctx, taskID, seq, "", func(e wire.Event) bool { return stop(e, &worked) },
		func(a2a.Event, error) bool { return true })
}

// noWorkerError is the retryable answer to a write no worker took in time.
func noWorkerError(taskID a2a.TaskID, waited time.Duration, what string) error {
	return apierror.Retryable(fmt.Sprintf("no worker %s for task %s within %s; it may still be applied once a worker runs. "+
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
		return nil, apierror.FromTemporal(fmt.Errorf("task %s: the events query returned no task", taskID))
	}
	out.Task.EventSeq = out.Last
	return s.withHistory(ctx, out.Task, in.HistoryLength)
}

// queryEvents runs the QueryEvents query on the task's workflow. A workflow
// that ended outside its handler (terminated, timed out...) answers with its
// task read as failed and one last event saying so.
func (s *TaskService) queryEvents(ctx context.Context, taskID a2a.TaskID, in wire.EventsInput) (wire.EventsOutput, error) {
	if err := CheckTaskID(string(taskID)); err != nil {
		return wire.EventsOutput{}, err
	}
	in.Agent, in.Owner = s.agent.Name, guard.Principal(ctx)
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
			return wire.EventsOutput{}, apierror.FromTemporal(err)
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
		return wire.EventsOutput{}, apierror.FromTemporal(fmt.Errorf("decode events of task %s: %w", taskID, err))
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
	sa := StartSearchAttributes(s.agent, contextID, owner, a2a.TaskStateWorking, msg)
	opts := client.StartWorkflowOptions{
		ID:                       taskID,
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// A retried message finds its task, even finished; only a workflow
		// that failed (one that never got its first message: no task) or
		// was terminated lets the same message start its task again.
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
		Memo:                  StartMemo(s.agent, msg),
	}
	opts.StaticSummary, opts.StaticDetails = StartUserMetadata(s.agent, owner, contextID, msg, Origin{})
	if s.agent.Versioning == workflows.AutoUpgrade {
		// Workers of a Worker Deployment pin tasks by default; this agent's
		// follow the deployment's current build.
		opts.VersioningOverride = &client.AutoUpgradeVersioningOverride{}
	}
	in := wire.TaskInput{Agent: s.agent.Name, ContextID: contextID, Owner: owner, Recording: s.recording}
	return taskID, s.temporal.NewWithStartWorkflowOperation(opts, wire.TaskWorkflowName, in)
}

// StartMemo is the memo a task starts with, which makes its run readable
// at a glance in the Temporal UI: its agent and the start of its first
// message's text. A fork and a schedule's run add what they come from.
func StartMemo(agent *workflows.Agent, first *a2a.Message) map[string]any {
	return map[string]any{"agent": agent.Name, "text": truncate(workflows.MessageText(first), 200)}
}

// StartSearchAttributes are the search attributes a task starts with: its
// context, state, agent, the agent's default skill, its owner and the
// start of its first message's text (wire.TextKey, what the task list's
// text filter matches). They are the start's options, no command of the
// workflow: adding one changes no replay.
func StartSearchAttributes(agent *workflows.Agent, contextID, owner string, state a2a.TaskState, first *a2a.Message) []temporal.SearchAttributeUpdate {
	sa := []temporal.SearchAttributeUpdate{
		wire.ContextIDKey.ValueSet(contextID),
		wire.TaskStateKey.ValueSet(string(state)),
		wire.AgentKey.ValueSet(agent.Name),
	}
	if text := wire.SearchText(workflows.MessageText(first)); text != "" {
		sa = append(sa, wire.TextKey.ValueSet(text))
	}
	if skill := agent.DefaultSkill(); skill != "" {
		sa = append(sa, wire.SkillKey.ValueSet(skill))
	}
	if owner != "" {
		sa = append(sa, wire.OwnerKey.ValueSet(owner))
	}
	return sa
}

// GetTask implements A2A GetTask (see LoadTask).
func (s *TaskService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "historyLength must not be negative")
	}
	historyLength := s.historyLimit(req.HistoryLength)
	snap, err := s.LoadTask(ctx, req.ID, historyLength)
	if err != nil {
		return nil, err
	}
	if g, ok := generationOf(ctx); ok && g.Current != nil {
		// A2A 1.1's long-poll (generation.go).
		if snap, err = s.longPoll(ctx, snap, *g.Current, historyLength); err != nil {
			return nil, err
		}
	}
	return stampTask(ctx, snap.Task, snap.EventSeq), nil
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
		Args:         []any{wire.CancelTaskInput{Agent: s.agent.Name, Owner: guard.Principal(ctx)}},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	})
	var res wire.TaskUpdateResult
	switch {
	case err == nil:
		if err := handle.Get(waitCtx, &res); err != nil && !apierror.BoundPassed(ctx, err) {
			return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
		}
	case apierror.IsResourceExhausted(err) || apierror.BoundPassed(ctx, err):
		if err := s.requestCancel(ctx, req.ID); err != nil {
			return nil, err
		}
	default:
		return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
	}
	if !res.Settled {
		s.await(ctx, req.ID, res.EventSeq, deadline, Settles(false))
	}
	snap, err := s.LoadTask(ctx, req.ID, s.historyLimit(nil))
	if err != nil {
		return nil, err
	}
	if !snap.Status.State.Terminal() {
		return nil, apierror.Retryable(fmt.Sprintf("the cancellation of task %s is recorded; no worker ended the task within %s. "+
			"It ends canceled as soon as a worker runs it; read it with GetTask", req.ID, s.waitTimeout), "NO_WORKER")
	}
	return stampTask(ctx, snap.Task, snap.EventSeq), nil
}

// requestCancel asks Temporal to cancel the task's workflow, after checking
// from visibility that the caller may: the workflow's own validator is not
// in this path.
func (s *TaskService) requestCancel(ctx context.Context, id a2a.TaskID) error {
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return apierror.FromTemporal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if !s.CallerSees(ctx, info) {
		return apierror.TaskNotFound()
	}
	if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s is in a terminal state", id))
	}
	if err := s.temporal.CancelWorkflow(ctx, string(id), ""); err != nil {
		return apierror.FromTemporal(err)
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
	if !apierror.IsNotFound(err) {
		return apierror.FromWrite(taskID, err)
	}
	if _, derr := s.LoadTask(ctx, a2a.TaskID(taskID), new(int)); derr != nil {
		return derr
	}
	return a2a.NewError(whenClosed, fmt.Sprintf("task %s is in a terminal state", taskID))
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
