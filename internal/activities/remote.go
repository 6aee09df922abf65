package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.opentelemetry.io/otel/attribute"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/genai"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// Remote calls other A2A agents for delegating tasks (workflows'
// Task.CallAgent). Its methods are the activities
// wire.ActivitySendRemoteMessage, ActivityFollowRemoteTask and
// ActivityCancelRemoteTask. An agent is named by its name in the directory
// as the task's owner sees it (URL, card and auth reference from Directory,
// credentials from Keyring) or by an http(s) URL.
//
// Every request goes through Outbound. An agent the operator put in the
// directory (a shared entry) is reached on its host whatever the outbound
// policy says of its address; an agent a task remembered, or named by URL,
// obeys the policy. The errors say why a call failed in words a model may
// read (remote.Reason); the details go to the worker's log.
type Remote struct {
	// Directory is the agent directory; nil allows URLs only.
	Directory *models.Store
	// Keyring holds the credentials directory entries refer to; nil is none.
	Keyring *remote.Keyring
	// Outbound makes every request; nil allows public addresses only.
	Outbound *outbound.Client
	// Owners says whose task calls; nil takes every task for the anonymous
	// owner "" (right only without authentication).
	Owners TaskOwners
	// PollInterval is how often a remote task whose card offers no
	// streaming is polled; default 2 s.
	PollInterval time.Duration
	// Credentials opens the credentials our users gave for remote agents'
	// auth-required questions (secrets.CredentialStore); nil refuses to
	// send any (the worker has no --secrets-key).
	Credentials DelegatedCredentials
	// RequireSignedPeers refuses remote agents whose card does not verify
	// (cardsign.VerifyAt: a signature by a key of the key set its jku names
	// on the card's own origin), as a non-retryable error; the directory's
	// stored copy of a card is no fallback then.
	RequireSignedPeers bool
	// Live, when set, takes the remote task's progress as it comes: each
	// working status message the agent sends while a send or follow
	// activity reads its task (streamed, or seen new by a poll) goes to
	// Live whole (a hints.Delta with Status), and, when the workflow asks
	// (RelayArtifacts), each artifact-update (a hints.Delta with Artifact:
	// see relayer), for the API processes' subscribers of our task.
	// Nothing of it goes through the workflow.
	Live hints.LiveNotifier
	// Heartbeats, when set (the worker's Temporal client), records the
	// heartbeat that keeps an artifact the remote finished at once, on
	// the server, rather than within the SDK's throttle (80% of the
	// heartbeat timeout): see relayer.
	Heartbeats HeartbeatRecorder

	mu      sync.Mutex
	clients map[clientKey]*remoteClient
}

// HeartbeatRecorder records an activity's heartbeat on the Temporal server
// at once (client.Client.RecordActivityHeartbeat).
type HeartbeatRecorder interface {
	RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error
}

// DelegatedCredentials opens a credential a user gave task taskID for
// remote task remoteTask of agent (secrets.CredentialStore.DelegatedSecret):
// an error wrapping workerenv.ErrNoCredential when ref names no credential
// given for that agent's task.
type DelegatedCredentials interface {
	DelegatedSecret(ctx context.Context, taskID, ref, agent, remoteTask string) (string, error)
}

// clientKey is whose call to which agent a client is kept for: the same
// name may be two owners' two agents.
type clientKey struct {
	owner, agent string
	extensions   string // the calling agent's, space-separated (they are URIs)
}

type remoteClient struct {
	key    clientKey
	client *a2aclient.Client // nil until the card is resolved
	card   *a2a.AgentCard
}

// SendRemoteMessage sends one message to a remote agent and returns the task
// (or message) it answers with, without waiting for the remote work: it asks
// for returnImmediately (an agent that ignores it is waited for, with
// heartbeats).
//
// A new remote task that is not settled yet is read again for up to
// settleWithin (an agent that finishes at once then costs the workflow no
// follow activity); unless the first read finds it settled, its ID is
// recorded as the attempt's heartbeat before the next, so that an attempt
// retried after our worker died meanwhile reads that task instead of
// sending the message again.
//
// With in.Credential, the message answers the remote task's auth-required
// question with the credential our user gave for it: see sendCredential.
func (a *Remote) SendRemoteMessage(ctx context.Context, in wire.RemoteSendInput) (*wire.RemoteTaskResult, error) {
	if in.Message == nil || len(in.Message.Parts) == 0 {
		return nil, temporal.NewNonRetryableApplicationError("no message to send", ErrTypeInvalidInput, nil)
	}
	// The delegation's invoke_agent client span: its requests, and so the
	// remote agent's own spans (traceparent), are its children.
	ctx, span := genai.StartInvokeRemoteAgent(ctx, in.Agent, remoteURL(in.Agent), "SendMessage",
		string(in.Message.TaskID), in.Message.ContextID)
	if in.Message.TaskID == "" && in.Credential == "" {
		in.Message = delegatedFrom(ctx, in.Message)
	}
	var res *wire.RemoteTaskResult
	var err error
	if in.Credential != "" {
		res, err = a.sendCredential(ctx, in)
	} else {
		res, err = a.sendMessage(ctx, in)
	}
	if res != nil && res.Task != nil {
		span.SetAttributes(attribute.String(genai.AttrA2ATaskState, string(res.Task.Status.State)),
			attribute.String(genai.AttrA2ATaskID, string(res.Task.ID)))
	}
	genai.End(span, err, "")
	return res, err
}

// delegatedFrom is m, the first message of a new remote task, naming the
// task that delegates it (wire.DelegatedFromKey), unless the skill's
// metadata names one already: the remote server's static details (an
// a2aflow's) say where its task came from. It is added here, not in the
// workflow, so that the message history records (and the activity input
// a fork matches) stays as it was.
func delegatedFrom(ctx context.Context, m *a2a.Message) *a2a.Message {
	if _, ok := m.Metadata[wire.DelegatedFromKey]; ok {
		return m
	}
	task := workerenv.TaskOf(ctx)
	if task.ID == "" {
		task.ID = activity.GetInfo(ctx).WorkflowExecution.ID
	}
	c := *m
	c.Metadata = maps.Clone(m.Metadata)
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	from := map[string]any{"taskId": task.ID}
	if task.Agent != "" {
		from["agent"] = task.Agent
	}
	c.Metadata[wire.DelegatedFromKey] = from
	return &c
}

// remoteURL is the agent's address for its span when the workflow named it
// by URL (a directory name has none here).
func remoteURL(agent string) string {
	if strings.HasPrefix(agent, "http://") || strings.HasPrefix(agent, "https://") {
		return agent
	}
	return ""
}

// sendCredential sends the remote task the credential in.Credential names,
// which the API sealed for that agent's task (the task's own activities,
// and any other agent or task, cannot open it): the secret, as the
// message's text, replaces the parts history records (which name the
// reference). An a2aflow agent takes it as its own credential answer and
// seals it in turn. The request goes only over https, or to an agent the
// operator configured (outbound.WithSecret). The secret is kept out of
// what the activity returns and logs: were the agent to echo it, the echo
// is redacted.
func (a *Remote) sendCredential(ctx context.Context, in wire.RemoteSendInput) (*wire.RemoteTaskResult, error) {
	if in.Message.TaskID == "" {
		return nil, temporal.NewNonRetryableApplicationError("a credential answers a remote task's question: the message names no task", ErrTypeInvalidInput, nil)
	}
	if a.Credentials == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %s asks for a credential, but this worker keeps no credentials (it has no --secrets-key)", in.Agent), wire.ErrTypeRemoteConfig, nil)
	}
	secret, err := a.Credentials.DelegatedSecret(ctx, activity.GetInfo(ctx).WorkflowExecution.ID, in.Credential, in.Agent, string(in.Message.TaskID))
	if errors.Is(err, workerenv.ErrNoCredential) {
		activity.GetLogger(ctx).Warn("delegated credential refused", "agent", in.Agent, "remote_task", in.Message.TaskID, "error", err)
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("credential %s was not given for task %s of agent %s", in.Credential, in.Message.TaskID, in.Agent), wire.ErrTypeRemoteConfig, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("read credential %s: %w", in.Credential, err) // the store may be back on the next attempt
	}
	msg := *in.Message
	msg.Parts = a2a.ContentParts{a2a.NewTextPart(secret)}
	in.Message = &msg
	// Its errors say why in fixed words (callError), which never quote the
	// agent; the worker's log gets the details, redacted (logRedacting).
	res, err := a.sendMessage(outbound.WithSecret(logRedacting(ctx, secret)), in)
	if err != nil {
		return nil, err
	}
	return redactResult(res, secret), nil
}

// sendMessage sends in.Message (SendRemoteMessage).
func (a *Remote) sendMessage(ctx context.Context, in wire.RemoteSendInput) (*wire.RemoteTaskResult, error) {
	rc, err := a.client(ctx, in.Agent, in.Extensions)
	if err != nil {
		return nil, err
	}
	newTask := in.Message.TaskID == ""
	relay := a.relay(ctx, in.RelayArtifacts, in.Relayed)
	if sent := sentTask(ctx); newTask && sent != "" {
		task, err := a.getTask(ctx, rc, sent)
		if err != nil {
			return nil, err
		}
		relay.sentTo(sent)
		relay.snapshot(task)
		return relay.result(&wire.RemoteTaskResult{Task: task}), nil
	}
	if task, err := a.answeredBefore(ctx, rc, in); err != nil {
		return nil, err
	} else if task != nil {
		relay.snapshot(task)
		return relay.result(&wire.RemoteTaskResult{Task: task}), nil
	}
	if rc.card.Capabilities.Streaming && (newTask || in.Answered != "") {
		return a.sendStreaming(ctx, rc, in, relay)
	}
	stop := heartbeatEvery(ctx, 5*time.Second, relay)
	defer stop()
	noHistory := 0
	sendStart := time.Now()
	res, err := rc.client.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: in.Message,
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true, HistoryLength: &noHistory},
	})
	metrics.Delegation(err)
	if err != nil {
		return nil, a.callError(ctx, rc, "send message", err)
	}
	switch r := res.(type) {
	case *a2a.Task:
		r.History = nil
		// Only when this attempt has not heartbeated yet (the send was
		// quick): the SDK sends the first heartbeat at once, later ones
		// batched.
		relay.snapshot(r)
		if newTask && !settledState(r.Status.State) && time.Since(sendStart) < sendHeartbeatAfter {
			stop()
			r = a.settleSoon(ctx, rc, r, relay)
		}
		return relay.result(&wire.RemoteTaskResult{Task: r}), nil
	case *a2a.Message:
		return &wire.RemoteTaskResult{Message: r}, nil
	}
	return nil, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("agent %s answered SendMessage with %T, neither a task nor a message", in.Agent, res), wire.ErrTypeRemoteA2A, nil)
}

// answeredBefore is, on a retried attempt of an answer to the remote
// task's question in.Answered, the remote task when it no longer asks that
// question: an earlier attempt's answer reached the agent and only its
// reply was lost (a reset, a timeout). Sending the answer again would be
// refused (the task ended) or answer a later question. Otherwise nil: send.
func (a *Remote) answeredBefore(ctx context.Context, rc *remoteClient, in wire.RemoteSendInput) (*a2a.Task, error) {
	if in.Message.TaskID == "" || in.Answered == "" || !activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt < 2 {
		return nil, nil
	}
	task, err := a.getTask(ctx, rc, in.Message.TaskID)
	if err != nil || wire.IsAnsweredQuestion(task.Status, in.Answered) {
		return nil, err
	}
	activity.GetLogger(ctx).Info("remote task moved past the question: an earlier attempt's answer reached it",
		"agent", in.Agent, "remote_task", task.ID, "state", task.Status.State)
	return task, nil
}

// sendStreaming sends a message to an agent that streams
// (SendStreamingMessage): a new task's first one, or an answer to the
// question in.Answered. It reads the task's events as they come, for up to
// settleWithin after the first, until the task settles: it ends, or waits
// for input or auth other than the question answered. A task that settles
// meanwhile is answered without a follow activity, with one GetTask when
// the stream did not carry the whole task (its artifacts came as events).
// A new task's ID is recorded as the attempt's heartbeat heartbeatTaskAfter
// after it arrives unless the task settled by then (see sentTask), so that
// an attempt retried after our worker died reads that task instead of
// sending the message again. A stream that breaks after the task is known,
// or is still open after settleWithin, answers with the task as it is then:
// the workflow follows it.
func (a *Remote) sendStreaming(ctx context.Context, rc *remoteClient, in wire.RemoteSendInput, relay *relayer) (*wire.RemoteTaskResult, error) {
	stop := heartbeatEvery(ctx, 5*time.Second, relay)
	defer stop()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &streamedSend{in: in, relay: relay, newTask: in.Message.TaskID == ""}
	defer s.stopTimers()
	noHistory := 0
	events := rc.client.SendStreamingMessage(sctx, &a2a.SendMessageRequest{
		Message: in.Message,
		Config:  &a2a.SendMessageConfig{HistoryLength: &noHistory},
	})
	var sendErr error
	for ev, err := range events {
		if err != nil {
			sendErr = err
			break
		}
		if s.settle == nil {
			// The agent took the message: from now on the task is read
			// rather than the message sent again.
			s.settle = time.AfterFunc(settleWithin, cancel)
		}
		if msg := s.take(ev); msg != nil {
			metrics.Delegation(nil)
			return &wire.RemoteTaskResult{Message: msg}, nil
		}
		if s.task != nil && s.settled(s.task.Status) {
			break
		}
	}
	task := s.task
	if task == nil && !s.newTask && s.settle != nil {
		// The answered task streamed events but not itself: read it.
		task, s.readAgain = &a2a.Task{ID: in.Message.TaskID, ContextID: in.Message.ContextID}, true
	}
	if task == nil {
		if sendErr == nil {
			sendErr = errors.New("the stream ended before the agent answered")
		}
		metrics.Delegation(sendErr)
		return nil, a.callError(ctx, rc, "send message", sendErr)
	}
	metrics.Delegation(nil)
	if sendErr != nil && sctx.Err() == nil {
		activity.GetLogger(ctx).Info("remote task stream broke; the task is followed", "agent", in.Agent, "task", task.ID, "error", redactError(sendErr, redactionOf(ctx)))
	}
	if s.readAgain || !s.settled(task.Status) {
		// The task as the agent holds it now (a failed read: as last seen).
		if read, err := a.getTask(ctx, rc, task.ID); err == nil {
			task = read
			relay.snapshot(task)
		}
	}
	return relay.result(&wire.RemoteTaskResult{Task: task}), nil
}

// streamedSend is what sendStreaming has read of the stream so far.
type streamedSend struct {
	in        wire.RemoteSendInput
	relay     *relayer
	newTask   bool        // the message starts a task, rather than answering one
	task      *a2a.Task   // nil until the stream names it
	readAgain bool        // the stream did not carry the whole task
	settle    *time.Timer // ends the stream settleWithin after its first event
	heartbeat *time.Timer // records a new task's ID as the heartbeat
}

// settled reports whether the task in status st needs no more reading: it
// ended, or waits for input or auth other than the question answered.
func (s *streamedSend) settled(st a2a.TaskStatus) bool {
	return settledState(st.State) && !wire.IsAnsweredQuestion(st, s.in.Answered)
}

// take reads one event of the stream into s, relaying what it shows; it
// returns the agent's message when the agent answered with one instead of
// a task.
func (s *streamedSend) take(ev a2a.Event) *a2a.Message {
	switch e := ev.(type) {
	case *a2a.Message:
		if s.task == nil {
			return e
		}
	case *a2a.Task:
		e.History = nil
		if s.task == nil && s.newTask {
			id := e.ID
			s.heartbeat = time.AfterFunc(heartbeatTaskAfter, func() { s.relay.sentTo(id) })
		}
		s.task = e
		s.relay.status(e.ID, e.Status)
		s.relay.snapshot(e)
	case *a2a.TaskStatusUpdateEvent:
		switch {
		case s.task == nil && !s.newTask && e.TaskID == s.in.Message.TaskID:
			// The answered task's stream may start with its events
			// (the last read fills in the rest).
			s.task = &a2a.Task{ID: e.TaskID, ContextID: e.ContextID, Status: e.Status}
			s.readAgain = true
		case s.task != nil && e.TaskID == s.task.ID:
			s.task.Status = e.Status
		}
		s.relay.status(e.TaskID, e.Status)
	case *a2a.TaskArtifactUpdateEvent:
		s.readAgain = true
		s.relay.update(e.TaskID, e)
	}
	return nil
}

// stopTimers stops the timers the send started.
func (s *streamedSend) stopTimers() {
	if s.settle != nil {
		s.settle.Stop()
	}
	if s.heartbeat != nil {
		s.heartbeat.Stop()
	}
}

// heartbeatTaskAfter is how long a streamed send waits, once the new task
// arrived, before it records the task's ID as its heartbeat: a task that
// settles sooner costs no heartbeat call.
const heartbeatTaskAfter = 5 * time.Millisecond

// sendHeartbeatAfter is when a send starts heartbeating (heartbeatEvery).
const sendHeartbeatAfter = 5 * time.Second

// settleWithin is how long SendRemoteMessage reads a new remote task again
// for it to settle: reads 2 ms after the answer, then each after three times
// the last wait (at 2, 8, 26, 80, 242 and 728 ms).
const settleWithin = time.Second

// sentTask is the remote task an earlier attempt of this send activity got
// (its heartbeat), or "".
func sentTask(ctx context.Context) a2a.TaskID {
	if !activity.HasHeartbeatDetails(ctx) {
		return ""
	}
	var beat relayBeat
	if activity.GetHeartbeatDetails(ctx, &beat) == nil {
		return beat.Task
	}
	var id a2a.TaskID // an attempt of a worker before relayBeat
	if activity.GetHeartbeatDetails(ctx, &id) != nil {
		return ""
	}
	return id
}

// settleSoon reads task again until it settles or settleWithin passes, and
// returns it as last read; a failed read ends it (the workflow follows the
// task). After the first read, the task's ID is recorded as the heartbeat
// (see sentTask): the first one of the attempt, which the SDK sends at once.
func (a *Remote) settleSoon(ctx context.Context, rc *remoteClient, task *a2a.Task, relay *relayer) *a2a.Task {
	deadline := time.Now().Add(settleWithin)
	for wait := 2 * time.Millisecond; time.Now().Add(wait).Before(deadline); wait *= 3 {
		if wait == 6*time.Millisecond { // after the first read
			relay.sentTo(task.ID)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return task
		case <-t.C:
		}
		read, err := a.getTask(ctx, rc, task.ID)
		if err != nil {
			return task
		}
		task = read
		relay.snapshot(task)
		if settledState(task.Status.State) {
			break
		}
	}
	return task
}

// FollowRemoteTask returns the remote task once it is terminal or waits for
// input or auth, or as it is when in.Window passes. It streams the task's
// events when the agent's card offers streaming, else polls GetTask; it
// heartbeats all along, so a worker that dies is noticed in 20 s and the
// follow goes on from another attempt.
func (a *Remote) FollowRemoteTask(ctx context.Context, in wire.RemoteFollowInput) (*wire.RemoteTaskResult, error) {
	if in.TaskID == "" {
		return nil, temporal.NewNonRetryableApplicationError("no remote task ID", ErrTypeInvalidInput, nil)
	}
	rc, err := a.client(ctx, in.Agent, in.Extensions)
	if err != nil {
		return nil, err
	}
	window := followFor(in.Window, activity.GetInfo(ctx).Deadline, time.Now())
	// A task still asking the question just answered has not taken the
	// answer yet: it is not settled.
	settled := func(s a2a.TaskStatus) bool {
		return settledState(s.State) && !wire.IsAnsweredQuestion(s, in.Answered)
	}
	relay := a.relay(ctx, in.RelayArtifacts, in.Relayed)
	task, err := a.getTask(ctx, rc, in.TaskID)
	if err != nil {
		return nil, err
	}
	relay.snapshot(task)
	if settled(task.Status) {
		return relay.result(&wire.RemoteTaskResult{Task: task}), nil
	}
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	if rc.card.Capabilities.Streaming {
		err = a.stream(wctx, rc, in.TaskID, settled, relay)
		if errors.Is(err, outbound.ErrBodyTooLarge) {
			// A stream past the A2A bound: read the task as it is, and the
			// workflow follows again with a new stream.
			activity.GetLogger(ctx).Info("remote task stream reached its bound; following again", "agent", in.Agent, "task", in.TaskID)
			err = nil
		}
	} else {
		err = a.poll(wctx, rc, in.TaskID, settled, relay)
	}
	if err != nil && wctx.Err() == nil {
		return nil, a.callError(ctx, rc, "follow task "+string(in.TaskID), err)
	}
	// Settled, or the window passed: the task as it is now.
	task, err = a.getTask(ctx, rc, in.TaskID)
	if err != nil {
		return nil, err
	}
	relay.snapshot(task)
	return relay.result(&wire.RemoteTaskResult{Task: task}), nil
}

// followFor is how long one follow attempt waits for the remote task:
// window (an hour when unset), but ending followMargin before the attempt's
// deadline, so that the attempt returns the task as it is and the workflow
// follows again, rather than Temporal timing the attempt out. (Follows
// scheduled before the retry budget was counted in attempts have a
// ScheduleToClose timeout; a retried attempt's deadline may be near.)
func followFor(window time.Duration, deadline, now time.Time) time.Duration {
	if window <= 0 {
		window = time.Hour
	}
	if deadline.IsZero() {
		return window
	}
	return max(min(window, deadline.Sub(now)-followMargin), 0)
}

// followMargin is the time a follow attempt keeps before its deadline to
// read the task one last time and answer.
const followMargin = 15 * time.Second

// stream reads the task's events until one settles it or the stream ends.
func (a *Remote) stream(ctx context.Context, rc *remoteClient, id a2a.TaskID, settled func(a2a.TaskStatus) bool, relay *relayer) error {
	stop := heartbeatEvery(ctx, 5*time.Second, relay)
	defer stop()
	for ev, err := range rc.client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if errors.Is(err, a2a.ErrUnsupportedOperation) {
			// A2A refuses to subscribe to a terminal task: the task ended
			// between the read before and this subscription (or the agent
			// does not take subscriptions after all). Polling sees the end
			// at once, and copes with an agent that cannot stream.
			return a.poll(ctx, rc, id, settled, relay)
		}
		if err != nil {
			return err
		}
		relay.beat()
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			relay.update(e.TaskID, e)
		case *a2a.TaskStatusUpdateEvent:
			relay.status(e.TaskID, e.Status)
			if settled(e.Status) {
				return nil
			}
		case *a2a.Task:
			relay.status(e.ID, e.Status)
			relay.snapshot(e)
			if settled(e.Status) {
				return nil
			}
		}
	}
	return nil
}

// poll reads the task every PollInterval until it settles.
func (a *Remote) poll(ctx context.Context, rc *remoteClient, id a2a.TaskID, settled func(a2a.TaskStatus) bool, relay *relayer) error {
	every := a.PollInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		task, err := a.getTask(ctx, rc, id)
		if err != nil {
			return err
		}
		relay.status(task.ID, task.Status)
		relay.snapshot(task)
		relay.beat()
		if settled(task.Status) {
			return nil
		}
	}
}

// CancelRemoteTask cancels a remote task. A task that is already terminal
// (not cancelable) or gone is left as it is.
func (a *Remote) CancelRemoteTask(ctx context.Context, in wire.RemoteCancelInput) error {
	rc, err := a.client(ctx, in.Agent, in.Extensions)
	if err != nil {
		return err
	}
	_, err = rc.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: in.TaskID})
	if err == nil || errors.Is(err, a2a.ErrTaskNotCancelable) || errors.Is(err, a2a.ErrTaskNotFound) {
		return nil
	}
	return a.callError(ctx, rc, "cancel task "+string(in.TaskID), err)
}

func (a *Remote) getTask(ctx context.Context, rc *remoteClient, id a2a.TaskID) (*a2a.Task, error) {
	noHistory := 0
	task, err := rc.client.GetTask(ctx, &a2a.GetTaskRequest{ID: id, HistoryLength: &noHistory})
	if err != nil {
		return nil, a.callError(ctx, rc, "get task "+string(id), err)
	}
	task.History = nil
	return task, nil
}

// settledState reports whether a followed task in state s needs the
// workflow: it ended or waits for input or auth.
func settledState(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// client returns the a2a-go client for agent (a name in the directory as
// the task's owner sees it, or a URL), made once per owner and agent and
// kept until a call through it fails.
func (a *Remote) client(ctx context.Context, agent string, extensions []string) (*remoteClient, error) {
	owner, err := ownerOf(ctx, a.Owners)
	if err != nil {
		return nil, err
	}
	key := clientKey{owner: owner, agent: agent, extensions: strings.Join(extensions, " ")}
	a.mu.Lock()
	rc := a.clients[key]
	a.mu.Unlock()
	if rc != nil {
		return rc, nil
	}
	entry, stored, err := a.lookup(owner, agent)
	if err != nil {
		return nil, err
	}
	var endpoint remote.Endpoint
	if entry.AuthRef != "" {
		if endpoint, err = a.Keyring.Endpoint(entry.URL, entry.Shared, entry.AuthRef); err != nil {
			activity.GetLogger(ctx).Warn("remote agent credentials", "agent", agent, "error", err)
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("agent %s: its credentials are not configured on this worker", agent), wire.ErrTypeRemoteConfig, nil)
		}
	} else {
		endpoint = remote.Endpoint{URL: entry.URL, Trusted: entry.Shared}
	}
	clients, err := endpoint.Clients(a.outbound())
	if err != nil {
		activity.GetLogger(ctx).Warn("remote agent clients", "agent", agent, "error", err)
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %s: %s", agent, reasonOf(err)), wire.ErrTypeRemoteConfig, nil)
	}
	rc = &remoteClient{key: key}
	card, err := remote.ResolveCard(ctx, clients.Card, entry.URL)
	if err != nil && stored != nil && !outbound.Refused(err) {
		card, err = stored, nil // the directory's copy, from the last good fetch
	}
	if err != nil {
		return nil, a.callError(ctx, rc, "fetch agent card", err)
	}
	if a.RequireSignedPeers {
		if _, verr := cardsign.VerifyAt(ctx, clients.Card, entry.URL, card); verr != nil {
			activity.GetLogger(ctx).Warn("remote agent card not verified", "agent", agent, "error", verr)
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("agent %s: its card's signature does not verify (%v), and this worker delegates to signed agents only (--require-signed-peers)", agent, verr),
				wire.ErrTypeRemoteConfig, nil)
		}
	}
	c, err := remote.NewClient(ctx, clients.Calls, card, extensions...)
	if err != nil {
		activity.GetLogger(ctx).Warn("remote agent card offers no usable interface", "agent", agent, "error", err)
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %s: %s (its card offers no interface a2aflow speaks)", agent, remote.ReasonNotAnA2AAgent), wire.ErrTypeRemoteConfig, nil)
	}
	rc.client, rc.card = c, card
	a.mu.Lock()
	if a.clients == nil {
		a.clients = map[clientKey]*remoteClient{}
	}
	if prev := a.clients[key]; prev != nil {
		_ = c.Destroy()
		rc = prev
	} else {
		a.clients[key] = rc
	}
	a.mu.Unlock()
	return rc, nil
}

// outbound is the client of every request: Outbound, or one allowing
// public addresses only.
func (a *Remote) outbound() *outbound.Client {
	if a.Outbound != nil {
		return a.Outbound
	}
	return defaultOutbound()
}

// lookup finds agent as owner's tasks see it: the directory entry of that
// name (its URL, auth reference, whether it is shared and its stored card),
// or an entry made of a URL, which is nobody's and so obeys the outbound
// policy.
func (a *Remote) lookup(owner, agent string) (entry *models.RemoteAgent, card *a2a.AgentCard, err error) {
	if strings.HasPrefix(agent, "http://") || strings.HasPrefix(agent, "https://") {
		return &models.RemoteAgent{Name: agent, URL: agent}, nil, nil
	}
	if agent == "" {
		return nil, nil, temporal.NewNonRetryableApplicationError("no agent given", ErrTypeInvalidInput, nil)
	}
	if a.Directory == nil {
		return nil, nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %q: this worker has no agent directory; give a URL", agent), wire.ErrTypeUnknownRemoteAgent, nil)
	}
	entry, err = a.Directory.AgentVisibleTo(owner, agent)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %q is not in the agent directory (add it with: a2aflow agents add URL --name %s)", agent, agent),
			wire.ErrTypeUnknownRemoteAgent, nil)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the agent directory: %w", err)
	}
	if len(entry.Card) > 0 {
		var c a2a.AgentCard
		if json.Unmarshal(entry.Card, &c) == nil && c.Name != "" && len(c.SupportedInterfaces) > 0 {
			card = &c
		}
	}
	return entry, card, nil
}

// callError turns a failed call into the activity's error, logging the
// details: a message that says why in words a model may read
// (remote.Reason: never the agent's answer, a status or an address);
// retryable when trying again may help (the client is dropped, so the next
// attempt fetches the card again), else non-retryable.
func (a *Remote) callError(ctx context.Context, rc *remoteClient, op string, err error) error {
	a.mu.Lock()
	if cur := a.clients[rc.key]; cur != nil && cur == rc {
		delete(a.clients, rc.key)
		_ = cur.client.Destroy()
	}
	a.mu.Unlock()
	agent := rc.key.agent
	activity.GetLogger(ctx).Warn("remote agent call failed", "agent", agent, "op", op, "error", redactError(err, redactionOf(ctx)))
	msg := fmt.Sprintf("agent %s: %s: %s", agent, op, reasonOf(err))
	switch {
	case outbound.Refused(err), errors.Is(err, outbound.ErrBodyTooLarge), errors.Is(err, remote.ErrCredentialsHost):
		return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeRemoteConfig, nil)
	case errors.Is(err, remote.ErrInvalidCard):
		return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeRemoteConfig, nil)
	case !remote.Retryable(err):
		return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeRemoteA2A, nil)
	}
	return errors.New(msg)
}

// reasonOf is remote.Reason of a failed call, never empty.
func reasonOf(err error) string {
	if r := remote.Reason(err); r != "" {
		return r
	}
	return remote.ReasonUnreachable
}

// heartbeatEvery records an activity heartbeat every d until stopped, so a
// long call is not taken for a dead worker and a cancel is noticed. stop may
// be called more than once.
func heartbeatEvery(ctx context.Context, d time.Duration, relay *relayer) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, relay.details()...)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
