package taskservice

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// A task's timeline (GET {agent endpoint}/tasks/{id}/timeline, the console's
// view of a task): its whole story as one ordered list of entries, in
// pages, read from the task's Temporal history (every run of it, oldest
// first) and joined with what the task's own queries say now (its
// messages, approvals, waitpoints). The history gives the order and the
// times; the task's message history gives each message its position, the
// value a fork's atMessage takes. Reading it is reading the task: the
// owner only (the GetTask query answers not found to anyone else).
//
// A page reads the history from where the page before stopped (its token
// names the run, Temporal's page of events and the event), so a page costs
// the events it maps, not the task's age. timeline_map.go maps events to
// entries; timeline_read.go reads the runs and cuts the pages.

// Timeline page sizes.
const (
	DefaultTimelinePageSize = 100
	MaxTimelinePageSize     = 1000
)

// TimelinePage is one page of a task's timeline.
type TimelinePage struct {
	TaskID    a2a.TaskID `json:"taskId"`
	Agent     string     `json:"agent"`
	ContextID string     `json:"contextId"`
	// State is the task's state now, by its A2A 1.0 name.
	State a2a.TaskState `json:"state"`
	// Summary is "<agent> · <first line of the first user message>".
	Summary string `json:"summary"`
	// WaitingFor says what the task waits for now; null when nothing.
	WaitingFor *WaitingFor `json:"waitingFor"`
	// CostUSD sums the task's recorded LLM usage (absent without a
	// database).
	CostUSD *float64 `json:"costUsd,omitempty"`
	// TemporalURL is the task's workflow in the Temporal Web UI.
	TemporalURL string          `json:"temporalUrl,omitempty"`
	Entries     []TimelineEntry `json:"entries"`
	// NextPageToken continues the timeline; "" on its last page.
	NextPageToken string `json:"nextPageToken"`
}

// WaitingFor is what a task waits for: kind "input", "approval",
// "waitpoint", "credential" or "delegation".
type WaitingFor struct {
	Kind        string `json:"kind"`
	Text        string `json:"text,omitempty"`
	ApprovalID  string `json:"approvalId,omitempty"`
	WaitpointID string `json:"waitpointId,omitempty"`
}

// Kinds of timeline entries.
const (
	EntryMessage           = "message"
	EntryStatus            = "status"
	EntryArtifact          = "artifact"
	EntryModelCall         = "model_call"
	EntryToolCall          = "tool_call"
	EntryApproval          = "approval"
	EntryWaitpoint         = "waitpoint"
	EntryCredentialRequest = "credential_request"
	EntryDelegation        = "delegation"
	EntryContinueAsNew     = "continue_as_new"
	EntryFork              = "fork"
)

// TimelineEntry is one step of a task's story. Exactly one of the kind's
// fields is set.
type TimelineEntry struct {
	// Seq numbers the entries of the timeline from 1.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	// RunID and EventID are the run and the history event the entry was
	// read at (EventID 0: after the run's last event); TemporalURL links
	// to it.
	RunID       string `json:"runId,omitempty"`
	EventID     int64  `json:"eventId,omitempty"`
	TemporalURL string `json:"temporalUrl,omitempty"`

	Message       *TimelineMessage       `json:"message,omitempty"`
	Status        *TimelineStatus        `json:"status,omitempty"`
	Artifact      *TimelineArtifact      `json:"artifact,omitempty"`
	Model         *TimelineModelCall     `json:"model,omitempty"`
	Tool          *TimelineToolCall      `json:"tool,omitempty"`
	Approval      *TimelineApproval      `json:"approval,omitempty"`
	Waitpoint     *TimelineWaitpoint     `json:"waitpoint,omitempty"`
	Credential    *TimelineCredential    `json:"credential,omitempty"`
	Delegation    *TimelineDelegation    `json:"delegation,omitempty"`
	Fork          *TimelineFork          `json:"fork,omitempty"`
	ContinueAsNew *TimelineContinueAsNew `json:"continueAsNew,omitempty"`
}

// TimelineMessage is a message of the task's history, as A2A 1.0 writes
// it, with its 1-based position in that history (ForkRequest.atMessage).
type TimelineMessage struct {
	*a2a.Message
	MessageIndex int `json:"messageIndex"`
}

// MarshalJSON writes the message's own JSON with messageIndex added.
func (m TimelineMessage) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(m.Message)
	if err != nil {
		return nil, err
	}
	raw = []byte(strings.TrimSpace(string(raw)))
	if len(raw) < 2 || raw[0] != '{' {
		return nil, fmt.Errorf("message %s: not a JSON object", m.ID)
	}
	sep := ","
	if string(raw) == "{}" {
		sep = ""
	}
	return fmt.Appendf(raw[:len(raw)-1:len(raw)-1], `%s"messageIndex":%d}`, sep, m.MessageIndex), nil
}

// TimelineStatus is a change of the task's state.
type TimelineStatus struct {
	State a2a.TaskState `json:"state"`
	Text  string        `json:"text,omitempty"`
}

// TimelineArtifact is an artifact the task produced.
type TimelineArtifact struct {
	ArtifactID a2a.ArtifactID   `json:"artifactId"`
	Name       string           `json:"name,omitempty"`
	Parts      a2a.ContentParts `json:"parts"`
}

// TimelineModelCall is one LLM call (the CompleteChat activity, or its
// local activity's marker).
type TimelineModelCall struct {
	Provider     string  `json:"provider,omitempty"`
	Model        string  `json:"model,omitempty"`
	Turn         int     `json:"turn,omitempty"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
	DurationMs   int64   `json:"durationMs,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// TimelineToolCall is one call of an LLM tool that runs as an activity (a
// Go tool's "tool:NAME" activity, or an MCP server's tool).
type TimelineToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is the tool's result, JSON or text, cut to 4 KB.
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// ApprovalID is the approval the call ran under; EditedArguments the
	// arguments its approver approved instead of the model's (Arguments
	// are then the model's).
	ApprovalID      string          `json:"approvalId,omitempty"`
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
}

// TimelineApproval is an approval the task asked for, as it is now.
type TimelineApproval struct {
	ID        string             `json:"id"`
	Title     string             `json:"title,omitempty"`
	Groups    []string           `json:"groups,omitempty"`
	Quorum    int                `json:"quorum,omitempty"`
	Deadline  *time.Time         `json:"deadline,omitempty"`
	State     string             `json:"state,omitempty"`
	Decisions []TimelineDecision `json:"decisions"`
	// PolicyVersion and Policies name the approval policies the request
	// was judged by (docs/guides/policies.md), when any was in force.
	PolicyVersion int64    `json:"policyVersion,omitempty"`
	Policies      []string `json:"policies,omitempty"`
}

// TimelineDecision is one approver's decision.
type TimelineDecision struct {
	By       string    `json:"by"`
	Decision string    `json:"decision"`
	At       time.Time `json:"at"`
	Comment  string    `json:"comment,omitempty"`
}

// TimelineWaitpoint is a waitpoint the task waited on, as it is now.
type TimelineWaitpoint struct {
	ID          string     `json:"id"`
	Name        string     `json:"name,omitempty"`
	State       string     `json:"state,omitempty"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	CompletedBy string     `json:"completedBy,omitempty"`
}

// TimelineCredential is a credential the task asked for: its name, never
// the secret.
type TimelineCredential struct {
	Name     string `json:"name"`
	AuthType string `json:"authType,omitempty"`
	Agent    string `json:"agent,omitempty"`
	State    string `json:"state"`
}

// TimelineDelegation is a message to a remote agent, or what its task
// became.
type TimelineDelegation struct {
	AgentURL     string        `json:"agentUrl"`
	RemoteTaskID a2a.TaskID    `json:"remoteTaskId,omitempty"`
	RemoteState  a2a.TaskState `json:"remoteState,omitempty"`
	Error        string        `json:"error,omitempty"`
}

// TimelineFork says the task is a fork of another, at its atMessage-th
// message.
type TimelineFork struct {
	FromTaskID a2a.TaskID `json:"fromTaskId,omitempty"`
	AtMessage  int        `json:"atMessage,omitempty"`
	Retry      bool       `json:"retry,omitempty"`
	ForkTaskID a2a.TaskID `json:"forkTaskId,omitempty"`
}

// TimelineContinueAsNew is the task's workflow continuing in a new run.
type TimelineContinueAsNew struct {
	NewRunID string `json:"newRunId"`
}

// UsageReader sums the LLM usage the workers recorded (models.Store).
type UsageReader interface {
	UsageTotals(ctx context.Context, q models.UsageQuery) ([]models.UsageTotal, error)
}

// Timeline returns a page of task id's timeline: pageSize entries (0: the
// default) from pageToken ("" the start).
func (s *TaskService) Timeline(ctx context.Context, id a2a.TaskID, pageSize int, pageToken string) (*TimelinePage, error) {
	if err := CheckTaskID(string(id)); err != nil {
		return nil, err
	}
	if pageSize == 0 {
		pageSize = DefaultTimelinePageSize
	}
	if pageSize < 1 || pageSize > MaxTimelinePageSize {
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageSize must be from 1 to %d", MaxTimelinePageSize))
	}
	cur, err := decodeTimelineToken(pageToken, id)
	if err != nil {
		return nil, err
	}
	// The read is the one authorization rule: another owner's task, or
	// another agent's, is not found.
	snap, err := s.LoadTask(withoutHistoryPages(ctx), id, nil)
	if err != nil {
		return nil, err
	}
	given := cur != nil
	if cur == nil {
		first, err := s.firstRun(ctx, id)
		if err != nil {
			return nil, err
		}
		cur = &timelineCursor{Task: string(id), Run: first, Event: 1}
	}
	b := newTimelineBuilder(ctx, s, snap, cur, pageSize)
	b.tokenGiven = given
	if err := b.build(); err != nil {
		return nil, err
	}
	page := &TimelinePage{TaskID: id, Agent: s.agent.Name, ContextID: snap.ContextID, State: snap.Status.State,
		Entries: b.entries, NextPageToken: b.next}
	if page.Entries == nil {
		page.Entries = []TimelineEntry{}
	}
	page.Summary = s.agent.Name
	if first := b.msgs.firstUserLine(); first != "" {
		page.Summary += " · " + first
	}
	page.WaitingFor = waitingFor(snap, b.delegating)
	page.CostUSD = s.taskCost(ctx, id)
	if s.temporalUIURL != "" {
		page.TemporalURL = fmt.Sprintf("%s/namespaces/%s/workflows/%s", s.temporalUIURL, s.namespace, id)
		for i := range page.Entries {
			page.Entries[i].TemporalURL = s.entryURL(id, page.Entries[i])
		}
	}
	return page, nil
}

// entryURL links an entry to its event in the Temporal Web UI (to its run
// when it has none).
func (s *TaskService) entryURL(id a2a.TaskID, e TimelineEntry) string {
	if e.RunID == "" {
		return ""
	}
	u := fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", s.temporalUIURL, s.namespace, id, e.RunID)
	if e.EventID > 0 {
		u += fmt.Sprintf("/events/%d", e.EventID)
	}
	return u
}

// taskCost sums the recorded LLM usage of task id; nil without a database
// (or when it cannot be read: the timeline goes on without it).
func (s *TaskService) taskCost(ctx context.Context, id a2a.TaskID) *float64 {
	if s.usage == nil {
		return nil
	}
	q := models.UsageQuery{By: models.UsageByTask, TaskID: string(id)}
	if s.authOn {
		q.Owner, q.OwnerSet = guard.Principal(ctx), true
	}
	totals, err := s.usage.UsageTotals(ctx, q)
	if err != nil {
		s.logger.WarnContext(ctx, "timeline: the task's LLM usage could not be read", "task_id", id, "error", err)
		return nil
	}
	var sum float64
	for _, t := range totals {
		sum += t.CostUSD
	}
	return &sum
}

// waitingFor reads what the task waits for from its status: the data part
// of an approval's or a waitpoint's wait, a credential's auth-required, a
// question; delegating says a remote agent's task is being followed.
func waitingFor(snap *wire.TaskSnapshot, delegating string) *WaitingFor {
	st := snap.Status
	text := messageText(st.Message)
	switch st.State {
	case a2a.TaskStateAuthRequired:
		return &WaitingFor{Kind: "credential", Text: text}
	case a2a.TaskStateInputRequired:
		w := &WaitingFor{Kind: "input", Text: text}
		for _, d := range dataParts(st.Message) {
			if id, _ := d["approvalId"].(string); id != "" && w.ApprovalID == "" {
				w.Kind, w.ApprovalID = "approval", id
			}
			if id, _ := d["waitpointId"].(string); id != "" && w.WaitpointID == "" && w.ApprovalID == "" {
				w.Kind, w.WaitpointID = "waitpoint", id
			}
		}
		return w
	case a2a.TaskStateWorking, a2a.TaskStateSubmitted:
		if delegating != "" {
			return &WaitingFor{Kind: "delegation", Text: "waiting for " + delegating}
		}
	}
	return nil
}

// messageText is the text parts of m, joined by newlines.
func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			texts = append(texts, p.Text())
		}
	}
	return strings.Join(texts, "\n")
}

// dataParts are the object data parts of m.
func dataParts(m *a2a.Message) []map[string]any {
	if m == nil {
		return nil
	}
	var out []map[string]any
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if d, ok := p.Data().(map[string]any); ok {
			out = append(out, d)
		}
	}
	return out
}

// timelineCursor is where a page of the timeline starts: the run, the
// Temporal page of its events to read from (nil: the run's first) and the
// first event of it, the event to map first and how many of its entries
// the pages before gave already, and the state of the mapping before that
// event. Its token is its JSON, base64url: opaque to clients, bounded
// (Temporal's page token is a few hundred bytes).
type timelineCursor struct {
	Task      string `json:"t"`
	Run       string `json:"r"`
	Page      []byte `json:"p,omitempty"`
	PageFirst int64  `json:"pf,omitempty"`
	Event     int64  `json:"e"`
	Sub       int    `json:"u,omitempty"`
	timelineState
}

// timelineState is what the mapping of events carries from one event to
// the next: the entries, messages and artifacts given so far, the last
// state shown (and one to show), and the highest approval and waitpoint
// numbers shown.
type timelineState struct {
	Seq        int64         `json:"s,omitempty"`
	Msgs       int           `json:"m,omitempty"`
	Arts       int           `json:"a,omitempty"`
	State      a2a.TaskState `json:"st,omitempty"`
	Approvals  int           `json:"ap,omitempty"`
	Waitpoints int           `json:"wp,omitempty"`
	// Pending is a state waiting for the user, not shown yet.
	Pending a2a.TaskState `json:"pd,omitempty"`
}

// maxTimelineTokenBytes bounds a page token a client sends.
const maxTimelineTokenBytes = 4096

func encodeTimelineToken(c *timelineCursor) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeTimelineToken reads a page token of task id; nil for "".
func decodeTimelineToken(token string, id a2a.TaskID) (*timelineCursor, error) {
	if token == "" {
		return nil, nil
	}
	bad := errBadTimelineToken()
	if len(token) > maxTimelineTokenBytes {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, bad
	}
	var c timelineCursor
	if err := json.Unmarshal(raw, &c); err != nil || c.Task != string(id) || c.Run == "" || c.Event < 1 || c.Sub < 0 ||
		c.Msgs < 0 || c.Arts < 0 || c.Seq < 0 {
		return nil, bad
	}
	if CheckTaskID(c.Run) != nil {
		return nil, bad
	}
	return &c, nil
}

// errBadTimelineToken is the answer to a page token that is not one of
// the task's timeline.
func errBadTimelineToken() error {
	return a2a.NewError(a2a.ErrInvalidParams, "pageToken is not a page token of this task's timeline")
}

// noHistoryPagesKey marks a read whose caller reads the pages of older
// messages it needs itself (withHistory leaves them).
type noHistoryPagesKey struct{}

func withoutHistoryPages(ctx context.Context) context.Context {
	return context.WithValue(ctx, noHistoryPagesKey{}, true)
}

// firstRun is the ID of task id's first run: the first of the chain of
// runs its latest run continues.
func (s *TaskService) firstRun(ctx context.Context, id a2a.TaskID) (string, error) {
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return "", apierror.FromTemporal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if first := info.GetFirstRunId(); first != "" {
		return first, nil
	}
	return info.GetExecution().GetRunId(), nil
}
