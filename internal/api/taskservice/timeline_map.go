package taskservice

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
)

// Mapping a task's history events to its timeline's entries (timeline.go).
// What the task workflow records, and so what the timeline shows:
//
//   - a user's message: the SendMessage update accepted (or the input of a
//     task started with its message); the agent's messages between two of
//     the user's, which no event records, where an update's result counts
//     them (or at the next user message, or at the end);
//   - a state: the A2ATaskState search attribute upserted, an update's
//     result, the run's end;
//   - a model call: the CompleteChat activity (or local activity marker);
//   - a tool call: a "tool:NAME" activity or CallMCPTool, with the approval
//     it ran under (its activity ID is "call-" and the approval's);
//   - an approval: its first webhook notice (one per group, always sent),
//     or the status message that waits for it; a waitpoint and a
//     credential request: the status message that waits for them;
//   - a delegation: SendRemoteMessage and FollowRemoteTask;
//   - a fork: the first run's input; continue-as-new: its event.
//
// Approvals and waitpoints show as they are now (the task's queries);
// messages with their position in the task's history (its snapshot and
// history pages).

// Kinds of activities the timeline shows.
const (
	actModel = iota + 1
	actTool
	actDelegation
)

// scheduledActivity is an activity of the run, from its scheduled event.
type scheduledActivity struct {
	kind       int
	typ        string
	activityID string
	summary    string
	started    time.Time
	input      *commonpb.Payloads
	// model: the request's provider and model; delegation: the agent and
	// the remote task followed.
	provider, model string
	agent           string
	remoteTask      a2a.TaskID
}

// track records what event e says of the run's activities: scheduled,
// started, closed (the approvals' notices too). Events before a page's
// first go through it alone.
func (b *timelineBuilder) track(e *historypb.HistoryEvent) {
	switch {
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		b.scheduled(e)
	case e.GetActivityTaskStartedEventAttributes() != nil:
		if a := b.acts[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]; a != nil {
			a.started = e.GetEventTime().AsTime()
		}
	default:
		if id, closed := activityClosed(e); closed {
			delete(b.acts, id)
		}
	}
}

// activityClosed returns the scheduled event of the activity e closes.
func activityClosed(e *historypb.HistoryEvent) (int64, bool) {
	switch {
	case e.GetActivityTaskCompletedEventAttributes() != nil:
		return e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), true
	case e.GetActivityTaskFailedEventAttributes() != nil:
		return e.GetActivityTaskFailedEventAttributes().GetScheduledEventId(), true
	case e.GetActivityTaskTimedOutEventAttributes() != nil:
		return e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId(), true
	case e.GetActivityTaskCanceledEventAttributes() != nil:
		return e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId(), true
	}
	return 0, false
}

// scheduled records an activity the timeline shows, and an approval's
// notice; it returns the notice's approval number (0: none).
func (b *timelineBuilder) scheduled(e *historypb.HistoryEvent) int {
	attrs := e.GetActivityTaskScheduledEventAttributes()
	typ := attrs.GetActivityType().GetName()
	a := &scheduledActivity{typ: typ, activityID: attrs.GetActivityId(), summary: eventSummary(e), input: attrs.GetInput()}
	switch {
	case typ == wire.ActivityNotifyApprovalWebhook:
		var n wire.ApprovalNotice
		if b.decode(attrs.GetInput(), &n) && n.ApprovalID != "" {
			b.notices[n.ApprovalID] = n
			return numberAfter(n.ApprovalID, "-approval-")
		}
		return 0
	case typ == wire.ActivityCompleteChat:
		a.kind = actModel
		var req llm.Request
		if b.decodeInline(attrs.GetInput(), &req) {
			a.provider, a.model = req.Provider, req.Model
		}
	case strings.HasPrefix(typ, llm.ToolActivityPrefix) || typ == wire.ActivityCallMCPTool:
		a.kind = actTool
	case typ == wire.ActivitySendRemoteMessage:
		a.kind = actDelegation
		var in wire.RemoteSendInput
		if b.decodeInline(attrs.GetInput(), &in) {
			a.agent = in.Agent
		}
	case typ == wire.ActivityFollowRemoteTask:
		a.kind = actDelegation
		var in wire.RemoteFollowInput
		if b.decodeInline(attrs.GetInput(), &in) {
			a.agent, a.remoteTask = in.Agent, in.TaskID
		}
	default:
		return 0
	}
	b.acts[e.GetEventId()] = a
	return 0
}

// mapEvent returns the entries of event e (b.at is e), advancing the
// mapping's state. A state waiting for the user that visibility got
// (pending) shows with the next entries, or with the update's result that
// says it (after the question the result counts).
func (b *timelineBuilder) mapEvent(e *historypb.HistoryEvent) []TimelineEntry {
	pending := b.state.Pending
	entries := b.eventEntries(e)
	if pending != "" && b.state.Pending == pending && len(entries) > 0 {
		b.state.Pending = ""
		entries = append(b.status(pending, ""), entries...)
	}
	return entries
}

// eventEntries returns the entries of event e (see mapEvent).
func (b *timelineBuilder) eventEntries(e *historypb.HistoryEvent) []TimelineEntry {
	switch {
	case e.GetWorkflowExecutionStartedEventAttributes() != nil:
		return b.onStarted(e.GetWorkflowExecutionStartedEventAttributes())
	case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
		return b.onUpdateAccepted(e.GetWorkflowExecutionUpdateAcceptedEventAttributes())
	case e.GetWorkflowExecutionUpdateCompletedEventAttributes() != nil:
		return b.onUpdateCompleted(e.GetWorkflowExecutionUpdateCompletedEventAttributes())
	case e.GetUpsertWorkflowSearchAttributesEventAttributes() != nil:
		var state string
		if p := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()[wire.TaskStateKey.GetName()]; p != nil &&
			converter.GetDefaultDataConverter().FromPayload(p, &state) == nil {
			return b.stateChanged(a2a.TaskState(state))
		}
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		if n := b.scheduled(e); n > 0 {
			return b.approvalsUpTo(n)
		}
	case e.GetMarkerRecordedEventAttributes().GetMarkerName() == localActivityMarker:
		return b.onLocalActivity(e)
	case e.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
		en := b.entry(EntryContinueAsNew)
		en.ContinueAsNew = &TimelineContinueAsNew{NewRunID: e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()}
		return []TimelineEntry{en}
	case closingEvent(e.GetEventType()):
		// The task's end: its messages, artifacts and state as they are.
		out := b.flushMessages(b.msgs.total)
		out = append(out, b.flushArtifacts(len(b.snap.Artifacts))...)
		return append(out, b.status(b.snap.Status.State, messageText(b.snap.Status.Message))...)
	default:
		if id, closed := activityClosed(e); closed {
			return b.onActivityClosed(e, id)
		}
		b.track(e)
	}
	return nil
}

// entry is an entry of kind at the event being mapped.
func (b *timelineBuilder) entry(kind string) TimelineEntry {
	return TimelineEntry{Kind: kind, Time: b.at.time, RunID: b.at.run, EventID: b.at.eventID}
}

// onStarted maps a run's start: a fork's origin, and the first message of
// a task started with it (a schedule's run, a fork).
func (b *timelineBuilder) onStarted(a *historypb.WorkflowExecutionStartedEventAttributes) []TimelineEntry {
	if a.GetContinuedExecutionRunId() != "" {
		return nil // a continued run: its input is the task's state
	}
	var in struct {
		Message *a2a.Message `json:"Message"`
		Fork    *struct {
			From      a2a.TaskID `json:"from"`
			AtMessage int        `json:"atMessage"`
			Retry     bool       `json:"retry"`
		} `json:"Fork"`
	}
	if !b.decode(a.GetInput(), &in) {
		return nil
	}
	var out []TimelineEntry
	if in.Fork != nil {
		en := b.entry(EntryFork)
		en.Fork = &TimelineFork{FromTaskID: in.Fork.From, AtMessage: in.Fork.AtMessage, Retry: in.Fork.Retry}
		out = append(out, en)
	}
	if in.Message != nil && b.state.Msgs == 0 {
		out = append(out, b.flushMessages(1)...)
		out = append(out, b.status(a2a.TaskStateWorking, "")...)
	}
	return out
}

// onUpdateAccepted maps an update the task took: a user's message (at its
// place in the history), a waitpoint's completion.
func (b *timelineBuilder) onUpdateAccepted(a *historypb.WorkflowExecutionUpdateAcceptedEventAttributes) []TimelineEntry {
	in := a.GetAcceptedRequest().GetInput()
	switch in.GetName() {
	case wire.UpdateSendMessage:
		var send struct {
			Message *struct {
				ID string `json:"messageId"`
			} `json:"Message"`
		}
		if !b.decode(in.GetArgs(), &send) || send.Message == nil {
			return nil
		}
		out := b.anchorMessage(send.Message.ID)
		if b.state.Msgs > 0 && b.state.State == "" {
			out = append(out, b.status(a2a.TaskStateWorking, "")...)
		}
		return out
	case wire.UpdateCompleteWaitpoint:
		var c wire.CompleteWaitpointInput
		if b.decode(in.GetArgs(), &c) {
			return b.waitpointsUpTo(numberAfter(c.WaitpointID, "-waitpoint-"))
		}
	}
	return nil
}

// onUpdateCompleted maps an update's answer: a send's or a cancel's result
// counts the task's messages and artifacts and says its state.
func (b *timelineBuilder) onUpdateCompleted(a *historypb.WorkflowExecutionUpdateCompletedEventAttributes) []TimelineEntry {
	var res struct {
		EventSeq  *int64          `json:"eventSeq"`
		Settled   *bool           `json:"settled"`
		State     a2a.TaskState   `json:"state"`
		Status    *a2a.TaskStatus `json:"status"`
		Messages  int             `json:"messages"`
		Artifacts int             `json:"artifacts"`
		Task      *struct {
			HistoryLength int `json:"a2aflowHistoryLength"`
		} `json:"task"`
		// A send's result recorded before results were bounded: the task.
		History []json.RawMessage `json:"history"`
	}
	if !b.decode(a.GetOutcome().GetSuccess(), &res) {
		return nil
	}
	if res.EventSeq == nil && res.Settled == nil {
		// Another update's result (an approval, a waitpoint), or a send's
		// recorded before results were bounded (the task itself, with at
		// most all its messages).
		if res.Status == nil || res.Status.State == "" || res.State != "" {
			return nil
		}
		out := b.flushMessages(len(res.History))
		return append(out, b.status(res.Status.State, messageText(res.Status.Message))...)
	}
	messages := res.Messages
	if res.Task != nil {
		messages = max(messages, res.Task.HistoryLength)
	}
	out := b.flushMessages(messages)
	out = append(out, b.flushArtifacts(res.Artifacts)...)
	state, text := res.State, ""
	if res.Status != nil {
		state, text = res.Status.State, messageText(res.Status.Message)
	}
	return append(out, b.status(state, text)...)
}

// onActivityClosed maps the end of an activity the timeline shows.
func (b *timelineBuilder) onActivityClosed(e *historypb.HistoryEvent, scheduledID int64) []TimelineEntry {
	a := b.acts[scheduledID]
	delete(b.acts, scheduledID)
	if a == nil {
		return nil
	}
	var result *commonpb.Payloads
	var failure string
	switch {
	case e.GetActivityTaskCompletedEventAttributes() != nil:
		result = e.GetActivityTaskCompletedEventAttributes().GetResult()
	case e.GetActivityTaskFailedEventAttributes() != nil:
		failure = failureText(e.GetActivityTaskFailedEventAttributes().GetFailure())
	case e.GetActivityTaskTimedOutEventAttributes() != nil:
		failure = "timed out: " + failureText(e.GetActivityTaskTimedOutEventAttributes().GetFailure())
	default:
		failure = "canceled"
	}
	var dur time.Duration
	if !a.started.IsZero() {
		dur = e.GetEventTime().AsTime().Sub(a.started)
	}
	switch a.kind {
	case actModel:
		return []TimelineEntry{b.modelCall(a.provider, a.model, a.summary, result, failure, dur)}
	case actTool:
		return []TimelineEntry{b.toolCall(a, result, failure)}
	case actDelegation:
		return []TimelineEntry{b.delegation(a, result, failure)}
	}
	return nil
}

// onLocalActivity maps a local activity's marker: a model call made as one.
func (b *timelineBuilder) onLocalActivity(e *historypb.HistoryEvent) []TimelineEntry {
	m := e.GetMarkerRecordedEventAttributes()
	var data struct{ ActivityType string }
	if !b.decode(m.GetDetails()["data"], &data) || data.ActivityType != wire.ActivityCompleteChat {
		return nil
	}
	return []TimelineEntry{b.modelCall("", "", eventSummary(e), m.GetDetails()["result"], failureText(m.GetFailure()), 0)}
}

// turnSummary reads the turn of a tool loop's model call from its
// activity's summary: "model call 4 (gpt-4o), turn 3: ..." since the
// Temporal UI's summaries name the call, "turn 3: ..." in histories
// recorded before.
var turnSummary = regexp.MustCompile(`^(?:model call \d+ \([^)]*\), )?turn (\d+):`)

// modelCall is the entry of a model call.
func (b *timelineBuilder) modelCall(provider, model, summary string, result *commonpb.Payloads, failure string, dur time.Duration) TimelineEntry {
	call := &TimelineModelCall{Provider: provider, Model: model, DurationMs: dur.Milliseconds(), Error: failure}
	if m := turnSummary.FindStringSubmatch(summary); m != nil {
		call.Turn, _ = strconv.Atoi(m[1])
	}
	var resp llm.Response
	if result != nil && b.decode(result, &resp) {
		call.InputTokens, call.OutputTokens, call.CostUSD = resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.CostUSD
		if resp.Model != "" {
			call.Model = resp.Model
		}
		// A local activity's marker names neither: its result does
		// (llm.Response, recorded since it holds them).
		if call.Provider == "" {
			call.Provider = resp.Provider
		}
		if call.DurationMs == 0 {
			call.DurationMs = resp.DurationMs
		}
	}
	en := b.entry(EntryModelCall)
	en.Model = call
	return en
}

// maxToolResultBytes is how much of a tool's result an entry shows.
const maxToolResultBytes = 4 << 10

// toolCall is the entry of a tool call, with the approval it ran under.
func (b *timelineBuilder) toolCall(a *scheduledActivity, result *commonpb.Payloads, failure string) TimelineEntry {
	call := &TimelineToolCall{Name: strings.TrimPrefix(a.typ, llm.ToolActivityPrefix), Error: failure}
	if a.typ == wire.ActivityCallMCPTool {
		var in wire.MCPCallToolInput
		if b.decode(a.input, &in) {
			call.Name, call.Arguments = in.Tool, in.Arguments
		}
		var out wire.MCPCallToolResult
		if result != nil && b.decode(result, &out) {
			call.Result = cutResult([]byte(out.Text))
		}
	} else {
		var in, out json.RawMessage
		if b.decode(a.input, &in) {
			call.Arguments = in
		}
		if result != nil && b.decode(result, &out) {
			call.Result = cutResult(out)
		}
	}
	if id, ok := strings.CutPrefix(a.activityID, "call-"); ok && approvalOf(id, b.id) {
		call.ApprovalID = id
		if rec := b.approvalsOf()[id]; rec != nil {
			if edited := rec.editedArguments(); len(edited) > 0 {
				var action struct {
					Arguments json.RawMessage `json:"arguments"`
				}
				if json.Unmarshal(rec.Request.Action, &action) == nil && len(action.Arguments) > 0 {
					call.Arguments = action.Arguments
				}
				call.EditedArguments = edited
			}
		}
	}
	en := b.entry(EntryToolCall)
	en.Tool = call
	return en
}

// editedArguments are the arguments an approver approved instead of the
// proposed ones (the latest approving decision's), or nil.
func (a *approvalRecord) editedArguments() json.RawMessage {
	if a.State != "approved" {
		return nil
	}
	for i := len(a.Decisions) - 1; i >= 0; i-- {
		if d := a.Decisions[i]; d.Approved && len(d.Arguments) > 0 {
			return d.Arguments
		}
	}
	return nil
}

// cutResult is a tool's result as an entry shows it: JSON as it is, up to
// maxToolResultBytes; text (a JSON string's too) cut there.
func cutResult(raw []byte) any {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		if len(raw) <= maxToolResultBytes && json.Valid(raw) {
			return json.RawMessage(raw)
		}
		text = string(raw)
	} else if len(raw) <= maxToolResultBytes && json.Valid([]byte(text)) && strings.TrimSpace(text) != "" {
		return json.RawMessage(text)
	}
	return truncate(text, maxToolResultBytes)
}

// delegation is the entry of a message to a remote agent, or of following
// its task.
func (b *timelineBuilder) delegation(a *scheduledActivity, result *commonpb.Payloads, failure string) TimelineEntry {
	d := &TimelineDelegation{AgentURL: a.agent, RemoteTaskID: a.remoteTask, Error: failure}
	var res wire.RemoteTaskResult
	if result != nil && b.decode(result, &res) && res.Task != nil {
		d.RemoteTaskID, d.RemoteState = res.Task.ID, res.Task.Status.State
	}
	en := b.entry(EntryDelegation)
	en.Delegation = d
	return en
}

// anchorMessage gives the user's message id, found at its place in the
// history, with the agent's messages before it; nothing when the history
// holds no such message after those given (a decision the task did not
// record as a message).
func (b *timelineBuilder) anchorMessage(id string) []TimelineEntry {
	limit := min(b.msgs.total, b.state.Msgs+maxMessageScan)
	for i := b.state.Msgs; i < limit; i++ {
		if m := b.msgs.at(i); m != nil && m.ID == id {
			return b.flushMessages(i + 1)
		}
	}
	return nil
}

// maxMessageScan bounds how far after the messages given the timeline
// looks for a user's message: two history pages.
const maxMessageScan = 2 * wire.HistoryPageSize

// flushMessages gives the messages before position to not given yet.
func (b *timelineBuilder) flushMessages(to int) []TimelineEntry {
	var out []TimelineEntry
	for ; b.state.Msgs < min(to, b.msgs.total); b.state.Msgs++ {
		out = append(out, b.messageEntries(b.state.Msgs)...)
	}
	return out
}

// messageEntries is the entry of the message at position i and, for an
// agent's message that waits for something, that something: approvals,
// waitpoints, a credential.
func (b *timelineBuilder) messageEntries(i int) []TimelineEntry {
	m := b.msgs.at(i)
	en := b.entry(EntryMessage)
	en.Message = &TimelineMessage{Message: m, MessageIndex: i + 1}
	if m == nil {
		en.Message.Message = &a2a.Message{}
	}
	out := []TimelineEntry{en}
	if m == nil || m.Role != a2a.MessageRoleAgent {
		return out
	}
	for _, d := range dataParts(m) {
		if id, _ := d["approvalId"].(string); id != "" {
			b.noticeFrom(id, d)
			out = append(out, b.approvalsUpTo(numberAfter(id, "-approval-"))...)
		}
		if id, _ := d["waitpointId"].(string); id != "" {
			out = append(out, b.waitpointsUpTo(numberAfter(id, "-waitpoint-"))...)
		}
		service, _ := d["service"].(string)
		authType, _ := d["authType"].(string)
		if service != "" && authType != "" {
			agent, _ := d[wire.CredentialAgentKey].(string)
			state := "answered"
			if b.snap.Status.State == a2a.TaskStateAuthRequired && b.snap.Status.Message != nil && b.snap.Status.Message.ID == m.ID {
				state = "pending"
			}
			c := b.entry(EntryCredentialRequest)
			c.Credential = &TimelineCredential{Name: service, AuthType: authType, Agent: agent, State: state}
			out = append(out, c)
		}
	}
	return out
}

// noticeFrom keeps what the data part d of a status waiting for approval
// id says of it (its title, groups, deadline), unless a notice said it.
func (b *timelineBuilder) noticeFrom(id string, d map[string]any) {
	if _, ok := b.notices[id]; ok {
		return
	}
	n := wire.ApprovalNotice{ApprovalID: id}
	n.Title, _ = d["title"].(string)
	groups, _ := d["groups"].([]any)
	for _, g := range groups {
		if s, ok := g.(string); ok {
			n.Groups = append(n.Groups, s)
		}
	}
	if s, _ := d["deadline"].(string); s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			n.Deadline = &t
		}
	}
	b.notices[id] = n
}

// flushArtifacts gives the artifacts before position to not given yet.
func (b *timelineBuilder) flushArtifacts(to int) []TimelineEntry {
	var out []TimelineEntry
	for ; b.state.Arts < min(to, len(b.snap.Artifacts)); b.state.Arts++ {
		a := b.snap.Artifacts[b.state.Arts]
		en := b.entry(EntryArtifact)
		en.Artifact = &TimelineArtifact{ArtifactID: a.ID, Name: a.Name, Parts: a.Parts}
		out = append(out, en)
	}
	return out
}

// stateChanged maps the task's state as visibility got it: an ended
// task's messages and artifacts come before its end; a state waiting for
// the user waits for its question (pending, see mapEvent).
func (b *timelineBuilder) stateChanged(state a2a.TaskState) []TimelineEntry {
	switch {
	case wire.Interrupted(state):
		if state != b.state.State {
			b.state.Pending = state
		}
		return nil
	case !state.Terminal():
		return b.status(state, "")
	}
	out := b.flushMessages(b.msgs.total)
	out = append(out, b.flushArtifacts(len(b.snap.Artifacts))...)
	text := ""
	if state == b.snap.Status.State {
		text = messageText(b.snap.Status.Message)
	}
	return append(out, b.status(state, text)...)
}

// status gives a change to state (none when it is the state shown last).
func (b *timelineBuilder) status(state a2a.TaskState, text string) []TimelineEntry {
	var out []TimelineEntry
	if pending := b.state.Pending; pending != "" {
		b.state.Pending = ""
		if pending != state {
			out = b.status(pending, "")
		}
	}
	if state == "" || state == b.state.State {
		return out
	}
	b.state.State = state
	en := b.entry(EntryStatus)
	en.Status = &TimelineStatus{State: state, Text: text}
	return append(out, en)
}

// approvalsUpTo gives the task's approvals up to the n-th not given yet.
func (b *timelineBuilder) approvalsUpTo(n int) []TimelineEntry {
	var out []TimelineEntry
	for b.state.Approvals < n {
		b.state.Approvals++
		id := string(b.id) + "-approval-" + strconv.Itoa(b.state.Approvals)
		a := &TimelineApproval{ID: id, Decisions: []TimelineDecision{}}
		if n, ok := b.notices[id]; ok {
			a.Title, a.Groups, a.Deadline = n.Title, n.Groups, n.Deadline
		}
		if rec := b.approvalsOf()[id]; rec != nil {
			a.Title, a.Groups, a.Deadline, a.State = rec.Request.Title, rec.Groups, rec.Deadline, rec.State
			a.Quorum = max(rec.Request.Required, 1)
			if p := rec.Request.Policy; p != nil {
				a.PolicyVersion, a.Policies = p.Version, p.Policies
			}
			for _, d := range rec.Decisions {
				verdict := "rejected"
				if d.Approved {
					verdict = "approved"
				}
				a.Decisions = append(a.Decisions, TimelineDecision{By: d.Approver, Decision: verdict, At: d.Time, Comment: d.Comment})
			}
		}
		en := b.entry(EntryApproval)
		en.Approval = a
		out = append(out, en)
	}
	return out
}

// waitpointsUpTo gives the task's waitpoints up to the n-th not given yet.
func (b *timelineBuilder) waitpointsUpTo(n int) []TimelineEntry {
	var out []TimelineEntry
	for b.state.Waitpoints < n {
		b.state.Waitpoints++
		id := string(b.id) + "-waitpoint-" + strconv.Itoa(b.state.Waitpoints)
		w := &TimelineWaitpoint{ID: id}
		if rec := b.waitpointsOf()[id]; rec != nil {
			w.Name, w.State, w.CompletedAt, w.CompletedBy = rec.Name, rec.State, rec.CompletedAt, rec.CompletedBy
		}
		en := b.entry(EntryWaitpoint)
		en.Waitpoint = w
		out = append(out, en)
	}
	return out
}

// maxApproval is the highest number among the task's approvals.
func (b *timelineBuilder) maxApproval() int {
	n := 0
	for id := range b.approvalsOf() {
		n = max(n, numberAfter(id, "-approval-"))
	}
	return n
}

// maxWaitpoint is the highest number among the task's waitpoints.
func (b *timelineBuilder) maxWaitpoint() int {
	n := 0
	for id := range b.waitpointsOf() {
		n = max(n, numberAfter(id, "-waitpoint-"))
	}
	return n
}

// numberAfter reads the number after the last sep of id (0: none).
func numberAfter(id, sep string) int {
	i := strings.LastIndex(id, sep)
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(id[i+len(sep):])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// eventSummary is the summary an activity's (or marker's) event carries.
func eventSummary(e *historypb.HistoryEvent) string {
	var s string
	if p := e.GetUserMetadata().GetSummary(); p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
	}
	return s
}

// failureText is a failure's message, its cause's when it wraps one.
func failureText(f *failurepb.Failure) string {
	if f == nil {
		return ""
	}
	msg := f.GetMessage()
	for c := f.GetCause(); c != nil; c = c.GetCause() {
		if c.GetMessage() != "" {
			msg = c.GetMessage()
		}
	}
	return msg
}

// decode decodes the first of payloads into v as the SDK would, reading a
// payload kept in the payload store by reference from there.
func (b *timelineBuilder) decode(payloads *commonpb.Payloads, v any) bool {
	p := payloads.GetPayloads()
	if len(p) == 0 {
		return false
	}
	payload := p[0]
	if blobstore.IsReference(payload) {
		if b.s.payloads == nil {
			return false
		}
		got, err := blobstore.Resolve(b.ctx, b.s.payloads, b.s.namespace, p[:1])
		if err != nil {
			b.s.logger.WarnContext(b.ctx, "timeline: a payload could not be read", "task_id", b.id, "error", err)
			return false
		}
		payload = got[0]
	}
	return converter.GetDefaultDataConverter().FromPayload(payload, v) == nil
}

// decodeInline decodes payloads held in history itself, and skips one
// kept by reference (a model call's request of 256 KiB or more, read for
// two names).
func (b *timelineBuilder) decodeInline(payloads *commonpb.Payloads, v any) bool {
	p := payloads.GetPayloads()
	if len(p) == 0 || blobstore.IsReference(p[0]) {
		return false
	}
	return converter.GetDefaultDataConverter().FromPayload(p[0], v) == nil
}

// approvalOf reports whether id is an approval of task.
func approvalOf(id string, task a2a.TaskID) bool {
	t, ok := wire.ApprovalTaskID(id)
	return ok && t == task
}
