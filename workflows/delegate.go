package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/link"
	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Delegation is one remote task a task delegated to, recorded in its
// metadata and memo under [DelegationsMetadataKey].
type Delegation struct {
	Agent     string        `json:"agent"`
	TaskID    a2a.TaskID    `json:"taskId,omitempty"`
	ContextID string        `json:"contextId,omitempty"`
	State     a2a.TaskState `json:"state"`
}

// CallRequest is what [Task.CallAgent] sends and how it follows the answer.
type CallRequest struct {
	// Agent is the remote agent: a name in the agent directory (its URL,
	// card and credentials are looked up by the worker), or an http(s)
	// URL where its agent card is.
	Agent string
	// Text is the message to send; Parts, when set, are sent instead.
	Text  string
	Parts a2a.ContentParts
	// Answer, when set, may answer the remote agent's questions itself (an
	// LLM, a lookup...): it is workflow code, and a nil message means "ask
	// our user". Without it every question goes to our user: our task
	// waits for input with the remote question, and the answer is
	// forwarded.
	Answer func(ctx workflow.Context, question *a2a.Message) (*a2a.Message, error)
	// RetryBudget is how long an unreachable remote agent is retried, with
	// backoff from 1 s up to 30 s, before the call fails. Default: the
	// worker's [WithRetryBudget], else [DefaultRetryBudget].
	RetryBudget time.Duration
	// NoArtifacts leaves the remote task's artifacts out of our task; they
	// are still in the result.
	NoArtifacts bool
	// ContextID continues a conversation with the remote agent: the
	// ContextID of an earlier call's CallResult (or one the remote agent
	// gave otherwise). Empty: the remote agent starts a new context.
	ContextID string
	// ReferenceTaskIDs are remote tasks the message refers to (its
	// referenceTaskIds), e.g. an earlier call's CallResult.TaskID.
	ReferenceTaskIDs []a2a.TaskID
	// Metadata is the first message's metadata (extension-specific keys).
	// It is sent as is and recorded in our task's history: no secrets.
	Metadata map[string]any
}

// CallResult is a completed remote call.
type CallResult struct {
	// Agent is the agent called, as given in the request.
	Agent string
	// TaskID and ContextID identify the remote task; TaskID is empty when
	// the agent answered with a message and no task.
	TaskID    a2a.TaskID
	ContextID string
	// Message is the remote agent's final message: the completed task's
	// status message, or the message it answered with.
	Message *a2a.Message
	// Artifacts are the remote task's artifacts as received.
	Artifacts []*a2a.Artifact
}

// Text returns the text of the remote agent's final message.
func (r *CallResult) Text() string { return MessageText(r.Message) }

// RemoteTaskError is a remote task that ended failed, rejected or canceled.
type RemoteTaskError struct {
	Agent  string
	TaskID a2a.TaskID
	State  a2a.TaskState
	// Reason is the remote task's status message text.
	Reason string
}

// Error implements error.
func (e *RemoteTaskError) Error() string {
	msg := fmt.Sprintf("the task of agent %s ended %s", e.Agent, e.State)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// followWindow bounds one follow activity; the workflow follows again after
// it. Heartbeats (every 5 s, timeout 20 s) notice a dead worker and deliver
// a cancel long before, and a settled task ends the follow at once: the
// window only sets how many events a remote task that works for days adds
// to our history (about 6 per window, so some 150 a day).
const followWindow = time.Hour

// CallAgent sends a message to a remote A2A agent and follows its task to
// the end, durably: the remote task's ID is recorded in the workflow (and in
// the task's metadata under [DelegationsMetadataKey]), and every send,
// follow and cancel is an activity retried with backoff within
// req.RetryBudget, so our worker, the remote agent or both may restart
// meanwhile and the call goes on with the same remote task.
//
// When the remote task waits for input (or auth), req.Answer may answer;
// otherwise our task waits with the remote question as its own (slot
// "remote:<agent>") and forwards the user's answer, as often as the remote
// agent asks. A completed remote task returns its final message and
// artifacts, which are also added to our task (metadata "a2aflow.source"
// names where each came from). A remote task that ends failed, rejected or
// canceled returns a [*RemoteTaskError]. Cancelling our task cancels the
// remote one.
func (t *Task) CallAgent(ctx workflow.Context, req CallRequest) (*CallResult, error) {
	if req.Agent == "" {
		return nil, errors.New("call agent: no agent given")
	}
	parts := req.Parts
	if len(parts) == 0 && req.Text != "" {
		parts = a2a.ContentParts{a2a.NewTextPart(req.Text)}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("call agent %s: nothing to send", req.Agent)
	}
	budget := req.RetryBudget
	if budget <= 0 {
		budget = t.r.budget
	}
	if budget <= 0 {
		budget = link.DefaultRetryBudget
	}
	d := &t.r.delegations
	d.calls++
	c := &call{t: t, req: req, n: d.calls, budget: budget, record: len(d.list)}
	if !req.NoArtifacts {
		// A task started with lean writes (wire.LeanWrites) was started
		// by a build that relays artifacts: it needs no marker, one event
		// less per delegation (as the demo router's wire.RecordingOf).
		c.relay = t.r.recording.LeanWrites() || workflow.GetVersion(ctx, relayedArtifactsChange, workflow.DefaultVersion, 1) >= 1
	}
	res, err := c.send(ctx, parts, "", req.ContextID, "", "")
	if err != nil {
		return nil, err
	}
	if res.Message != nil {
		t.recordDelegation(ctx, c.record, Delegation{Agent: req.Agent, ContextID: res.Message.ContextID, State: a2a.TaskStateCompleted})
		return &CallResult{Agent: req.Agent, ContextID: res.Message.ContextID, Message: res.Message}, nil
	}
	task := res.Task
	t.recordDelegation(ctx, c.record, Delegation{Agent: req.Agent, TaskID: task.ID, ContextID: task.ContextID, State: task.Status.State})
	t.Progress(ctx, fmt.Sprintf("Delegated to %s (remote task %s).", req.Agent, task.ID))
	answered := "" // the status message ID of the question last answered
	for {
		state := task.Status.State
		switch {
		case state == a2a.TaskStateCompleted:
			return c.completed(ctx, task), nil
		case state.Terminal():
			return nil, &RemoteTaskError{Agent: req.Agent, TaskID: task.ID, State: state, Reason: MessageText(task.Status.Message)}
		case wire.Interrupted(state) && !wire.IsAnsweredQuestion(task.Status, answered):
			answer, credential, err := c.answer(ctx, task)
			if err != nil {
				return nil, c.stop(ctx, task, err)
			}
			answered = wire.QuestionID(task.Status)
			res, err := c.send(ctx, answer.Parts, task.ID, task.ContextID, answered, credential)
			if err != nil {
				return nil, c.stop(ctx, task, err)
			}
			if res.Task == nil {
				return nil, fmt.Errorf("agent %s answered the follow-up of task %s with a message, not the task", req.Agent, task.ID)
			}
			task = res.Task
		default: // submitted, working, a question already answered, or a state this version does not know
			next, err := c.follow(ctx, task, answered)
			if err != nil {
				return nil, c.stop(ctx, task, err)
			}
			task = next
		}
		t.recordDelegation(ctx, c.record, Delegation{Agent: req.Agent, TaskID: task.ID, ContextID: task.ContextID, State: task.Status.State})
	}
}

// call is one CallAgent in progress.
type call struct {
	t      *Task
	req    CallRequest
	n      int // the call's number in the task, for message IDs
	sent   int // messages sent so far
	budget time.Duration
	record int // index of its Delegation record
	// relay: the remote artifacts are relayed live and copied under
	// wire.RelayedArtifactID (relayedArtifactsChange); relayed are their
	// generations (wire.RemoteTaskResult.Relayed).
	relay   bool
	relayed map[a2a.ArtifactID]int
}

// relayedArtifactsChange is the workflow.GetVersion change ID of the remote
// artifacts relayed as they come. Calls that started before it copied the
// remote task's artifacts when it completed, as new artifacts of our task
// (IDs of its own numbering); from version 1 the activities relay each
// artifact-update of the remote live, and the copies take the IDs the live
// chunks had (wire.RelayedArtifactID), a remote artifact once.
const relayedArtifactsChange = "a2aflow.relayed-artifacts"

// retry is the retry policy of the remote calls: backoff from 1 s to 30 s,
// as many attempts as the budget's backoff waits hold ([budgetAttempts]).
//
// The budget is counted in attempts, not as the activity's
// ScheduleToCloseTimeout: that timer also runs while our own worker (or
// Temporal) is down, so a restart longer than the budget failed a send
// whose remote agent was fine, and a follow restarted near the end of its
// window was cut off by the timer with the remote task still working. An
// attempt lost with a dead worker costs one attempt (its heartbeat
// timeout), however long the worker stays down.
func (c *call) retry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        retryInitial,
		BackoffCoefficient:     2,
		MaximumInterval:        retryMaximum,
		MaximumAttempts:        budgetAttempts(c.budget),
		NonRetryableErrorTypes: []string{wire.ErrTypeUnknownRemoteAgent, wire.ErrTypeRemoteConfig, wire.ErrTypeRemoteA2A},
	}
}

// The backoff of remote calls: 1 s doubling to 30 s.
const (
	retryInitial = time.Second
	retryMaximum = 30 * time.Second
)

// budgetAttempts is how many attempts a remote call gets within budget: the
// first, and one more for each backoff wait (1 s, 2 s, 4 s ... 30 s) that
// still ends within budget. An agent that refuses connections is so tried
// for about budget; 6 s gives 3 attempts (at 0, 1 and 3 s), 5 minutes 14.
func budgetAttempts(budget time.Duration) int32 {
	attempts, waited, wait := int32(1), time.Duration(0), retryInitial
	for waited+wait <= budget {
		waited += wait
		attempts++
		wait = min(2*wait, retryMaximum)
	}
	return attempts
}

// send sends parts as the call's next message; to a new remote task when
// taskID is empty, else as the answer to the question answered. credential,
// when not empty, is the reference of the credential that answers it: the
// activity sends its secret instead of parts (which name the reference).
func (c *call) send(ctx workflow.Context, parts a2a.ContentParts, taskID a2a.TaskID, contextID, answered, credential string) (*wire.RemoteTaskResult, error) {
	c.sent++
	msg := &a2a.Message{
		// Deterministic: a retried or replayed send carries the same ID.
		ID:        fmt.Sprintf("%s-call-%d-%d", c.t.ID(), c.n, c.sent),
		Role:      a2a.MessageRoleUser,
		TaskID:    taskID,
		ContextID: contextID,
		Parts:     parts,
	}
	if c.sent == 1 {
		// The call's first message: the caller's references and metadata.
		msg.ReferenceTasks, msg.Metadata = c.req.ReferenceTaskIDs, c.req.Metadata
	}
	summary := fmt.Sprintf("send to %s: %s", c.req.Agent, wire.OneLine(partsSummary(parts), 120))
	actx := workflow.WithActivityOptions(ctx, withSummary(workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    20 * time.Second,
		RetryPolicy:         c.retry(),
	}, summary))
	var res wire.RemoteTaskResult
	err := workflow.ExecuteActivity(actx, wire.ActivitySendRemoteMessage, wire.RemoteSendInput{Agent: c.req.Agent, Message: msg, Extensions: c.t.agentExtensions(), Answered: answered, Credential: credential,
		RelayArtifacts: c.relay, Relayed: c.relayed}).Get(ctx, &res)
	if err != nil {
		return nil, c.failed("send a message to", err)
	}
	c.tookRelayed(res.Relayed)
	if res.Task == nil && res.Message == nil {
		return nil, fmt.Errorf("agent %s answered neither a task nor a message", c.req.Agent)
	}
	return &res, nil
}

// follow waits for the remote task to move on: one follow activity of at
// most followWindow, after which the loop follows again.
func (c *call) follow(ctx workflow.Context, task *a2a.Task, answered string) (*a2a.Task, error) {
	actx := workflow.WithActivityOptions(ctx, withSummary(workflow.ActivityOptions{
		StartToCloseTimeout: followWindow + time.Minute,
		HeartbeatTimeout:    20 * time.Second,
		RetryPolicy:         c.retry(),
	}, fmt.Sprintf("follow %s task %s", c.req.Agent, task.ID)))
	var res wire.RemoteTaskResult
	err := workflow.ExecuteActivity(actx, wire.ActivityFollowRemoteTask, wire.RemoteFollowInput{Agent: c.req.Agent, TaskID: task.ID, Window: followWindow, Answered: answered,
		Extensions: c.t.agentExtensions(), RelayArtifacts: c.relay, Relayed: c.relayed}).Get(ctx, &res)
	if err != nil {
		return nil, c.failed(fmt.Sprintf("follow task %s of", task.ID), err)
	}
	c.tookRelayed(res.Relayed)
	if res.Task == nil {
		return nil, fmt.Errorf("agent %s returned no task for %s", c.req.Agent, task.ID)
	}
	return res.Task, nil
}

// failed words an activity error for the user: an unreachable agent says
// for how long it was tried.
func (c *call) failed(what string, err error) error {
	var timeout *temporal.TimeoutError
	var actErr *temporal.ActivityError
	if errors.As(err, &actErr) && actErr.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED ||
		errors.As(err, &timeout) || (errors.As(err, &actErr) && actErr.RetryState() == enumspb.RETRY_STATE_TIMEOUT) {
		return fmt.Errorf("could not %s agent %s within the retry budget of %s: %w", what, c.req.Agent, c.budget, err)
	}
	return fmt.Errorf("could not %s agent %s: %w", what, c.req.Agent, err)
}

// delegatedCredentialChange is the workflow.GetVersion change ID of a
// remote agent's auth-required question answered with a credential. Tasks
// that started before it asked req.Answer, else their user with a plain
// wait, and sent the answer as recorded: the user's secret was in our
// task's history, GetTask, streams and push notifications. From version 1
// the user is asked as by RequireCredential (call.credential) and the
// secret never enters the workflow.
const delegatedCredentialChange = "a2aflow.delegated-credential"

// answer gets the answer to the remote task's question: from req.Answer,
// or from our user, our task waiting with the remote question. An
// auth-required question is always our user's to answer, with a credential
// (call.credential): its reference is returned with the answer.
func (c *call) answer(ctx workflow.Context, task *a2a.Task) (answer *a2a.Message, credential string, err error) {
	question := task.Status.Message
	if task.Status.State == a2a.TaskStateAuthRequired &&
		workflow.GetVersion(ctx, delegatedCredentialChange, workflow.DefaultVersion, 1) >= 1 {
		return c.credential(ctx, task)
	}
	if c.req.Answer != nil {
		answer, err := c.req.Answer(ctx, question)
		if err != nil {
			return nil, "", err
		}
		if answer != nil && len(answer.Parts) > 0 {
			return answer, "", nil
		}
	}
	prompt := MessageText(question)
	if prompt == "" {
		prompt = fmt.Sprintf("Agent %s needs more input.", c.req.Agent)
	}
	answer, err = c.t.wait(ctx, task.Status.State, "remote:"+c.req.Agent, prompt, nil)
	return answer, "", err
}

// credential asks our user for the credential the remote task asks for
// (auth-required) the way RequireCredential does: our task is
// auth-required with the remote question and a credential request naming
// the agent; the API seals the user's secret for that agent and remote task
// alone, and the answer recorded carries its reference, which the send
// activity opens. Neither req.Answer (an LLM's words are no credential)
// nor a message that came while our task was working answers it: such a
// message is kept in history as it came, and the question is asked again.
func (c *call) credential(ctx workflow.Context, task *a2a.Task) (*a2a.Message, string, error) {
	req := remoteCredentialRequest(c.req.Agent, task)
	r := c.t.r
	r.credentials.wait = &req
	defer func() { r.credentials.wait = nil }()
	for {
		m, err := c.t.waitWith(ctx, a2a.TaskStateAuthRequired, "remote:"+c.req.Agent, req.Prompt, credentialRequestPart(req), nil)
		if err != nil {
			return nil, "", err
		}
		if ref, agent, ok := credentialAnswerIn(m); ok && ref.Service == req.Service && agent == req.Agent {
			return m, ref.Ref, nil
		}
	}
}

// remoteCredentialRequest is what our user is asked for when agent's task
// is auth-required: the service and auth type its status names (a data
// part {"service": ..., "authType": ...}, as an a2aflow agent's), else the
// agent's name as the service; its status text as the prompt.
func remoteCredentialRequest(agent string, task *a2a.Task) wire.CredentialRequest {
	req := wire.CredentialRequest{Agent: agent, RemoteTask: string(task.ID)}
	if m := task.Status.Message; m != nil {
		for _, p := range m.Parts {
			if p == nil {
				continue
			}
			if data, ok := p.Data().(map[string]any); ok {
				service, _ := data["service"].(string)
				authType, _ := data["authType"].(string)
				if req.Service == "" && strings.TrimSpace(service) != "" {
					// Another server's words: one line, bounded.
					req.Service, req.AuthType = wire.OneLine(service, 100), wire.OneLine(authType, 40)
				}
			}
		}
	}
	if req.Service == "" {
		req.Service = agent
	}
	req.Prompt = MessageText(task.Status.Message)
	if req.Prompt == "" {
		req.Prompt = fmt.Sprintf("Agent %s needs a %s credential for %s.", agent, orDefault(req.AuthType, "secret"), req.Service)
	}
	return req
}

// stop ends the call on err: when our task was canceled, the remote task is
// canceled too (best effort, in a disconnected context).
func (c *call) stop(ctx workflow.Context, task *a2a.Task, err error) error {
	if ctx.Err() == nil {
		return err
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, withSummary(workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: c.retry().NonRetryableErrorTypes},
	}, fmt.Sprintf("cancel %s task %s", c.req.Agent, task.ID)))
	if cerr := workflow.ExecuteActivity(actx, wire.ActivityCancelRemoteTask, wire.RemoteCancelInput{Agent: c.req.Agent, TaskID: task.ID, Extensions: c.t.agentExtensions()}).Get(dctx, nil); cerr != nil {
		c.t.r.logger.Warn("cancel remote task", "agent", c.req.Agent, "task", task.ID, "error", cerr)
		c.t.recordDelegation(dctx, c.record, Delegation{Agent: c.req.Agent, TaskID: task.ID, ContextID: task.ContextID, State: task.Status.State})
	} else {
		c.t.recordDelegation(dctx, c.record, Delegation{Agent: c.req.Agent, TaskID: task.ID, ContextID: task.ContextID, State: a2a.TaskStateCanceled})
	}
	return err
}

// tookRelayed keeps the generations an activity relayed (the higher of
// each, whatever the map's order).
func (c *call) tookRelayed(gens map[a2a.ArtifactID]int) {
	if len(gens) == 0 {
		return
	}
	if c.relayed == nil {
		c.relayed = map[a2a.ArtifactID]int{}
	}
	keepHigher(c.relayed, gens) //workflowcheck:ignore (the higher of each: the same whatever the map's order)
}

// keepHigher sets each of to's generations to the higher of its own and
// from's.
func keepHigher(to, from map[a2a.ArtifactID]int) {
	for id, g := range from {
		to[id] = max(to[id], g)
	}
}

// completed copies the remote artifacts into our task and returns the result.
// Relayed (c.relay), each takes the ID its live chunks had, the last
// version of a remote artifact listed twice replacing the first.
func (c *call) completed(ctx workflow.Context, task *a2a.Task) *CallResult {
	res := &CallResult{Agent: c.req.Agent, TaskID: task.ID, ContextID: task.ContextID, Message: task.Status.Message, Artifacts: task.Artifacts}
	if c.req.NoArtifacts {
		return res
	}
	for _, a := range task.Artifacts {
		if a == nil {
			continue
		}
		meta := map[string]any{}
		// Copying a map gives the same result in any order.
		maps.Copy(meta, a.Metadata) //workflowcheck:ignore
		delete(meta, "version")     // our task numbers its own versions
		meta["a2aflow.source"] = map[string]any{"agent": c.req.Agent, "taskId": string(task.ID), "artifactId": string(a.ID)}
		var id a2a.ArtifactID
		if c.relay {
			id = wire.RelayedArtifactID(string(c.t.ID()), task.ID, a.ID)
		}
		c.t.artifactAs(ctx, id, &a2a.Artifact{Name: a.Name, Description: a.Description, Parts: a.Parts, Extensions: a.Extensions, Metadata: meta})
	}
	return res
}

// recordDelegation sets the task's delegation record i (appending it when
// new) in its metadata and memo.
func (t *Task) recordDelegation(ctx workflow.Context, i int, d Delegation) {
	u := &t.r.delegations
	if i < len(u.list) {
		if u.list[i] == d {
			return
		}
		u.list[i] = d
	} else {
		u.list = append(u.list, d)
	}
	t.SetMetadata(ctx, wire.DelegationsMetadataKey, append([]Delegation(nil), u.list...))
	t.r.showDetails(ctx)
}

// Delegations returns the remote tasks the task delegated to so far.
func (t *Task) Delegations() []Delegation {
	return append([]Delegation(nil), t.r.delegations.list...)
}

// delegations is the delegations unit of a run (units.go): the remote
// tasks the task delegated to.
type delegations struct {
	unitBase
	r *run `carry:"-"`

	calls int          // CallAgent calls so far, for deterministic message IDs
	list  []Delegation // the remote tasks delegated to
}

var _ unit = (*delegations)(nil)

// carry hands over the call count and the latest delegations
// (maxCarriedDelegations).
func (u *delegations) carry(c *continuedTask) {
	c.Calls, c.Delegations = u.calls, lastN(u.list, maxCarriedDelegations)
}

func (u *delegations) restore(c *continuedTask) {
	u.calls, u.list = c.Calls, slices.Clone(c.Delegations)
}

// partsSummary renders parts as one line for an activity summary.
func partsSummary(parts a2a.ContentParts) string {
	if text := MessageText(&a2a.Message{Parts: parts}); text != "" {
		return text
	}
	return fmt.Sprintf("%d part(s)", len(parts))
}

// agentExtensions returns the URIs of the extensions the task's agent
// declares, which its delegations activate where the remote card has them.
func (t *Task) agentExtensions() []string {
	if t.agent == nil {
		return nil
	}
	var uris []string
	for _, e := range t.agent.Extensions {
		uris = append(uris, e.URI)
	}
	return uris
}
