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

	"github.com/a2aflow/a2aflow/notify"
	"github.com/a2aflow/a2aflow/workflows"
)

// TaskService implements the A2A methods of one agent on Temporal: every task
// is a TaskWorkflow execution whose ID is the task ID.
type TaskService struct {
	temporal  client.Client
	agent     *workflows.Agent
	taskQueue string
	logger    *slog.Logger
	// notifier hints new events when the worker runs in this process; nil
	// means poll every pollInterval.
	notifier     *notify.Broker
	pollInterval time.Duration
	push         PushOptions // push.go
	// approverGroups maps approvers to their groups; nil: any group.
	approverGroups map[string][]string
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
// asks to return immediately.
func (s *TaskService) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	snap, err := s.send(ctx, req, req.Config != nil && req.Config.ReturnImmediately)
	if err != nil {
		return nil, err
	}
	return snap.Task, nil
}

// send delivers req's message through the SendMessage update and returns
// the task snapshot the update answered with.
func (s *TaskService) send(ctx context.Context, req *a2a.SendMessageRequest, returnImmediately bool) (workflows.TaskSnapshot, error) {
	if err := validateSendMessageRequest(req); err != nil {
		return workflows.TaskSnapshot{}, err
	}
	if req.Config != nil {
		if err := checkAcceptedOutputModes(s.agent, req.Config.AcceptedOutputModes); err != nil {
			return workflows.TaskSnapshot{}, err
		}
	}
	msg := req.Message
	owner := principal(ctx)
	in := workflows.SendMessageInput{Agent: s.agent.Name, Owner: owner, Message: msg, ReturnImmediately: returnImmediately}
	// The message may be an approval decision (approval.go): it carries who
	// sends it, from authentication or, with it off, the X-Approver header.
	in.Approver, in.ApproverGroups = s.messageApprover(ctx)
	if req.Config != nil {
		in.HistoryLength = req.Config.HistoryLength
		push, err := s.preparePushConfig(ctx, req.Config.PushConfig)
		if err != nil {
			return workflows.TaskSnapshot{}, err
		}
		in.PushConfig = push
	}
	update := client.UpdateWorkflowOptions{
		UpdateID:     msg.ID,
		UpdateName:   workflows.UpdateSendMessage,
		Args:         []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}

	var handle client.WorkflowUpdateHandle
	var err error
	if msg.TaskID != "" {
		update.WorkflowID = string(msg.TaskID)
		handle, err = s.temporal.UpdateWorkflow(ctx, update)
		if err != nil {
			return workflows.TaskSnapshot{}, s.writeError(ctx, string(msg.TaskID), err, a2a.ErrUnsupportedOperation)
		}
	} else {
		taskID, startOp := s.newTask(msg, owner)
		update.WorkflowID = taskID
		handle, err = s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: startOp,
			UpdateOptions:          update,
		})
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			// A retry of a request whose task already ended: answer with that task.
			return s.events(ctx, a2a.TaskID(taskID), workflows.EventsInput{WithTask: true, HistoryLength: in.HistoryLength})
		}
		if err != nil {
			return workflows.TaskSnapshot{}, toA2AError(err)
		}
	}
	var snap workflows.TaskSnapshot
	if err := handle.Get(ctx, &snap); err != nil {
		return workflows.TaskSnapshot{}, s.writeError(ctx, handle.WorkflowID(), err, a2a.ErrUnsupportedOperation)
	}
	return snap, nil
}

// events queries a task's events and returns the current task with the
// number of its latest event.
func (s *TaskService) events(ctx context.Context, taskID a2a.TaskID, in workflows.EventsInput) (workflows.TaskSnapshot, error) {
	out, err := s.queryEvents(ctx, taskID, in)
	if err != nil {
		return workflows.TaskSnapshot{}, err
	}
	return workflows.TaskSnapshot{Task: out.Task, EventSeq: out.Last}, nil
}

// queryEvents runs the QueryEvents query on the task's workflow.
func (s *TaskService) queryEvents(ctx context.Context, taskID a2a.TaskID, in workflows.EventsInput) (workflows.EventsOutput, error) {
	in.Agent, in.Owner = s.agent.Name, principal(ctx)
	value, err := s.temporal.QueryWorkflow(ctx, string(taskID), "", workflows.QueryEvents, in)
	if err != nil {
		return workflows.EventsOutput{}, toA2AError(err)
	}
	var out workflows.EventsOutput
	if err := value.Get(&out); err != nil {
		return workflows.EventsOutput{}, toA2AError(fmt.Errorf("decode events of task %s: %w", taskID, err))
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
	sa := []temporal.SearchAttributeUpdate{
		workflows.ContextIDKey.ValueSet(contextID),
		workflows.TaskStateKey.ValueSet(string(a2a.TaskStateSubmitted)),
		workflows.AgentKey.ValueSet(s.agent.Name),
	}
	if skill := s.agent.DefaultSkill(); skill != "" {
		sa = append(sa, workflows.SkillKey.ValueSet(skill))
	}
	if owner != "" {
		sa = append(sa, workflows.OwnerKey.ValueSet(owner))
	}
	opts := client.StartWorkflowOptions{
		ID:                       taskID,
		TaskQueue:                s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		// The memo makes a run readable at a glance in the Temporal UI.
		Memo: map[string]any{"agent": s.agent.Name, "text": truncate(workflows.MessageText(msg), 200)},
	}
	in := workflows.TaskInput{Agent: s.agent.Name, ContextID: contextID, Owner: owner}
	return taskID, s.temporal.NewWithStartWorkflowOperation(opts, workflows.TaskWorkflowName, in)
}

// GetTask implements A2A GetTask with a workflow query.
func (s *TaskService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "historyLength must not be negative")
	}
	value, err := s.temporal.QueryWorkflow(ctx, string(req.ID), "", workflows.QueryGetTask,
		workflows.GetTaskInput{Agent: s.agent.Name, Owner: principal(ctx), HistoryLength: req.HistoryLength})
	if err != nil {
		return nil, toA2AError(err)
	}
	var task a2a.Task
	if err := value.Get(&task); err != nil {
		return nil, toA2AError(fmt.Errorf("decode task %s: %w", req.ID, err))
	}
	return &task, nil
}

// CancelTask implements A2A CancelTask with the cancel update.
func (s *TaskService) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   string(req.ID),
		UpdateName:   workflows.UpdateCancelTask,
		Args:         []any{workflows.CancelTaskInput{Agent: s.agent.Name, Owner: principal(ctx)}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
	}
	var task a2a.Task
	if err := handle.Get(ctx, &task); err != nil {
		return nil, s.writeError(ctx, string(req.ID), err, a2a.ErrTaskNotCancelable)
	}
	return &task, nil
}

// writeError maps the error of a write (an update) on taskID. Temporal
// answers NotFound both for a task that never existed and for one whose
// workflow has closed; a closed one is terminal, so the write gets
// whenClosed (UnsupportedOperation for a message, TaskNotCancelable for a
// cancel) rather than TaskNotFound.
func (s *TaskService) writeError(ctx context.Context, taskID string, err error, whenClosed error) error {
	var notFound *serviceerror.NotFound
	if !errors.As(err, &notFound) {
		return toA2AError(err)
	}
	if _, derr := s.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID), HistoryLength: new(int)}); derr != nil {
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
