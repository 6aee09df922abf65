package taskservice

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Reading a task's runs for its timeline (timeline.go): the events of each
// run, oldest first, in Temporal's pages, mapped (timeline_map.go) until
// the timeline's page is full, where the next page's token is cut.

// timelineBuilder builds one page of a task's timeline.
type timelineBuilder struct {
	ctx  context.Context
	s    *TaskService
	id   a2a.TaskID
	snap *wire.TaskSnapshot
	msgs *timelineMessages
	// start is where the page starts, size how many entries it holds.
	start timelineCursor
	size  int
	// tokenGiven says start came from the client's page token.
	tokenGiven bool

	// pages reads the runs' events (TaskService.temporalHistory).
	pages historyPages

	entries []TimelineEntry
	next    string // the next page's token ("" none)
	// delegating names the remote agent whose task the task follows at
	// its end ("" none).
	delegating string

	// The mapping's state: what it carries from event to event (in the
	// tokens), the event being mapped, the run's activities by their
	// scheduled event, and what the task's queries said.
	state      timelineState
	at         eventContext
	acts       map[int64]*scheduledActivity
	notices    map[string]wire.ApprovalNotice
	approvals  map[string]*approvalRecord
	waitpoints map[string]*waitpointRecord
}

// eventContext is the event whose entries are being made: its run, ID and
// time (EventID 0: after the run's last event).
type eventContext struct {
	run     string
	eventID int64
	time    time.Time
}

func newTimelineBuilder(ctx context.Context, s *TaskService, snap *wire.TaskSnapshot, start *timelineCursor, size int) *timelineBuilder {
	return &timelineBuilder{ctx: ctx, s: s, id: snap.ID, snap: snap, msgs: newTimelineMessages(ctx, s, snap),
		start: *start, size: size, state: start.timelineState, notices: map[string]wire.ApprovalNotice{}, pages: s.temporalHistory}
}

// historyPages reads a page of the events of run of task id: the events
// and the token of the next page (none: the last).
type historyPages func(ctx context.Context, id a2a.TaskID, run string, token []byte, size int32) ([]*historypb.HistoryEvent, []byte, error)

// temporalHistory reads the pages of a run's events from Temporal.
func (s *TaskService) temporalHistory(ctx context.Context, id a2a.TaskID, run string, token []byte, size int32) ([]*historypb.HistoryEvent, []byte, error) {
	resp, err := s.temporal.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              s.namespace,
		Execution:              &commonpb.WorkflowExecution{WorkflowId: string(id), RunId: run},
		MaximumPageSize:        size,
		NextPageToken:          token,
		HistoryEventFilterType: enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	})
	if err != nil {
		return nil, nil, apierror.FromTemporal(err)
	}
	return resp.GetHistory().GetEvents(), resp.GetNextPageToken(), nil
}

// fetch reads a page of run's events.
func (b *timelineBuilder) fetch(run string, token []byte, size int32) ([]*historypb.HistoryEvent, []byte, error) {
	return b.pages(b.ctx, b.id, run, token, size)
}

// historyPageRef is a page of a run's events as Temporal serves it: the
// token it is read with (nil: the run's first page) and its first event.
type historyPageRef struct {
	token []byte
	first int64
}

// runRead is how reading a run ended: the page is full, or the run ended
// by continuing as new in run next, or its events ran out (after event
// last, the page holding it read with lastPage).
type runRead struct {
	full     bool
	next     string
	last     int64
	lastTime time.Time
	pages    []historyPageRef
}

// build fills the page from its start: the runs one after another, then
// the tail of what the events did not place.
func (b *timelineBuilder) build() error {
	start := b.start
	for {
		r, err := b.readRun(start)
		if err != nil {
			return err
		}
		switch {
		case r.full:
			return nil
		case r.next == "":
			b.tail(start, r)
			return nil
		}
		start = timelineCursor{Task: start.Task, Run: r.next, Event: 1}
		if b.full() {
			b.cut(start.Run, 1, 0, nil)
			return nil
		}
	}
}

func (b *timelineBuilder) full() bool { return len(b.entries) >= b.size }

// temporalPageSize is how many events the builder asks Temporal for at a
// time: Temporal's most (GetHistoryMaxPageSize).
const temporalPageSize = 256

// readRun maps the events of start.Run from start.Event on, and replays
// those before it that the Temporal page it starts from holds (they give
// the activities open there their inputs).
func (b *timelineBuilder) readRun(start timelineCursor) (runRead, error) {
	b.acts = map[int64]*scheduledActivity{}
	var r runRead
	token, fromToken := start.Page, len(start.Page) > 0
	var lastSeen int64
	var lastType enums.EventType
	for {
		events, nextToken, err := b.fetch(start.Run, token, temporalPageSize)
		if err != nil && b.fromToken(start) && (errors.Is(err, a2a.ErrTaskNotFound) || errors.Is(err, a2a.ErrInvalidParams)) {
			// The client's token names no run of this task, or no page of it.
			return r, errBadTimelineToken()
		}
		if err != nil {
			return r, err
		}
		if len(events) > 0 {
			r.pages = append(r.pages, historyPageRef{token: token, first: events[0].GetEventId()})
		}
		for _, e := range events {
			if e.GetEventId() <= lastSeen {
				continue // read again after a stale token (below)
			}
			lastSeen, lastType, r.last, r.lastTime = e.GetEventId(), e.GetEventType(), e.GetEventId(), e.GetEventTime().AsTime()
			if e.GetEventId() < start.Event {
				b.track(e)
				continue
			}
			if b.give(start, e, r.pages) {
				r.full = true
				return r, nil
			}
			if c := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); c != nil {
				r.next = c.GetNewExecutionRunId()
				return r, nil
			}
		}
		token = nextToken
		if len(token) > 0 {
			continue
		}
		if fromToken && !closingEvent(lastType) {
			// A token of an earlier request ends where the run's history
			// ended then: read the run again for what came since.
			fromToken, token = false, nil
			continue
		}
		return r, nil
	}
}

// fromToken reports whether start is the run the client's page token
// named.
func (b *timelineBuilder) fromToken(start timelineCursor) bool {
	return b.tokenGiven && start.Run == b.start.Run
}

// closingEvent reports whether an event of type t ends its run.
func closingEvent(t enums.EventType) bool {
	switch t {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

// give maps event e and adds its entries to the page, but those an earlier
// page gave (start.Sub of start's event); it reports whether the page is
// full, having cut the next page's token.
func (b *timelineBuilder) give(start timelineCursor, e *historypb.HistoryEvent, pages []historyPageRef) bool {
	b.at = eventContext{run: start.Run, eventID: e.GetEventId(), time: e.GetEventTime().AsTime()}
	return b.giveEntries(start, e.GetEventId(), func() []TimelineEntry { return b.mapEvent(e) }, pages)
}

// giveEntries adds the entries that make makes for event (of start's run)
// to the page: see give.
func (b *timelineBuilder) giveEntries(start timelineCursor, event int64, make func() []TimelineEntry, pages []historyPageRef) bool {
	if b.full() {
		b.cut(start.Run, event, 0, pages)
		return true
	}
	sub := 0
	if start.Event == event {
		sub = start.Sub
	}
	before := b.state
	entries := make()
	sub = min(sub, len(entries))
	rest := entries[sub:]
	room := b.size - len(b.entries)
	if len(rest) > room {
		b.add(rest[:room], before.Seq+int64(sub))
		b.state = before
		b.cut(start.Run, event, sub+room, pages)
		return true
	}
	b.add(rest, before.Seq+int64(sub))
	b.state.Seq = before.Seq + int64(len(entries))
	return false
}

// add appends entries to the page, numbered after seq.
func (b *timelineBuilder) add(entries []TimelineEntry, seq int64) {
	for i := range entries {
		entries[i].Seq = seq + int64(i) + 1
		b.entries = append(b.entries, entries[i])
	}
}

// cut sets the next page's token: it starts at event (its first sub
// entries given) of run, read from the latest Temporal page that holds
// both that event and the scheduling of every activity open there.
func (b *timelineBuilder) cut(run string, event int64, sub int, pages []historyPageRef) {
	from := event
	for id := range b.acts {
		from = min(from, id)
	}
	c := timelineCursor{Task: string(b.id), Run: run, Event: event, Sub: sub, timelineState: b.state}
	for _, p := range pages {
		if p.first <= from {
			c.Page, c.PageFirst = p.token, p.first
		}
	}
	if run == b.start.Run && len(c.Page) == 0 && b.start.PageFirst > 0 && b.start.PageFirst <= from {
		c.Page, c.PageFirst = b.start.Page, b.start.PageFirst
	}
	b.next = encodeTimelineToken(&c)
}

// tail gives what the events placed nowhere, after the last run's last
// event: the messages, artifacts, approvals and waitpoints not given yet,
// and the task's state now.
func (b *timelineBuilder) tail(start timelineCursor, r runRead) {
	at := r.lastTime
	if ts := b.snap.Status.Timestamp; ts != nil && ts.After(at) {
		at = *ts
	}
	b.at = eventContext{run: start.Run, time: at}
	for _, a := range b.acts {
		if a.kind == actDelegation {
			b.delegating = a.agent
		}
	}
	b.giveEntries(start, r.last+1, b.tailEntries, r.pages)
}

// tailEntries are the entries of the tail (see tail).
func (b *timelineBuilder) tailEntries() []TimelineEntry {
	out := b.flushMessages(b.msgs.total)
	out = append(out, b.flushArtifacts(len(b.snap.Artifacts))...)
	if !b.snap.Status.State.Terminal() {
		// A running task's approvals and waitpoints not shown yet (an
		// ended one showed each where it was asked for).
		out = append(out, b.approvalsUpTo(b.maxApproval())...)
		out = append(out, b.waitpointsUpTo(b.maxWaitpoint())...)
	}
	return append(out, b.status(b.snap.Status.State, messageText(b.snap.Status.Message))...)
}

// timelineMessages reads the task's messages by position: the recent ones
// from the task's snapshot, older ones from the history pages in the
// payload store, each page read once.
type timelineMessages struct {
	ctx    context.Context
	s      *TaskService
	taskID a2a.TaskID
	recent []*a2a.Message
	// recentFirst is the position of recent[0]; total the number of
	// messages.
	recentFirst, total int
	pages              []wire.HistoryPage
	loaded             map[int][]*a2a.Message
}

func newTimelineMessages(ctx context.Context, s *TaskService, snap *wire.TaskSnapshot) *timelineMessages {
	m := &timelineMessages{ctx: ctx, s: s, taskID: snap.ID, recent: snap.History, pages: snap.EarlierHistory, loaded: map[int][]*a2a.Message{}}
	inPages := 0
	if n := len(snap.EarlierHistory); n > 0 {
		last := snap.EarlierHistory[n-1]
		inPages = last.First + last.Count
	}
	m.total = max(snap.HistoryLength, inPages+len(m.recent))
	m.recentFirst = m.total - len(m.recent)
	return m
}

// at is the message at position i (from 0), or nil when it cannot be read.
func (m *timelineMessages) at(i int) *a2a.Message {
	if i < 0 || i >= m.total {
		return nil
	}
	if i >= m.recentFirst {
		return m.recent[i-m.recentFirst]
	}
	for _, p := range m.pages {
		if i < p.First || i >= p.First+p.Count {
			continue
		}
		msgs, ok := m.loaded[p.First]
		if !ok {
			msgs = m.load(p)
			m.loaded[p.First] = msgs
		}
		if i-p.First < len(msgs) {
			return msgs[i-p.First]
		}
	}
	return nil
}

// load reads a history page from the payload store (nil when it cannot).
func (m *timelineMessages) load(p wire.HistoryPage) []*a2a.Message {
	if m.s.payloads == nil {
		return nil
	}
	data, err := m.s.payloads.Get(m.ctx, p.Key)
	var msgs []*a2a.Message
	if err == nil {
		err = json.Unmarshal(data, &msgs)
	}
	if err != nil {
		m.s.logger.WarnContext(m.ctx, "timeline: a history page could not be read", "task_id", m.taskID, "page", p.Key, "error", err)
		return nil
	}
	return msgs
}

// firstUserLine is the first line of the task's first message, when a
// user sent it.
func (m *timelineMessages) firstUserLine() string {
	first := m.at(0)
	if first == nil || first.Role != a2a.MessageRoleUser {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(messageText(first)), "\n")
	return truncate(strings.TrimSpace(line), 200)
}

// approvalRecord is an approval as the Approvals query answers it.
type approvalRecord struct {
	ID      string `json:"id"`
	Request struct {
		Title    string          `json:"title"`
		Action   json.RawMessage `json:"action"`
		Required int             `json:"required"`
		// Policy names the approval policies that judged it.
		Policy *struct {
			Version  int64    `json:"version"`
			Policies []string `json:"policies"`
		} `json:"policy"`
	} `json:"request"`
	State     string     `json:"state"`
	Groups    []string   `json:"groups"`
	Deadline  *time.Time `json:"deadline"`
	Decisions []struct {
		Approved  bool            `json:"approved"`
		Approver  string          `json:"approver"`
		Comment   string          `json:"comment"`
		Time      time.Time       `json:"time"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"decisions"`
}

// waitpointRecord is a waitpoint as the Waitpoints query answers it.
type waitpointRecord struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	State       string     `json:"state"`
	CompletedAt *time.Time `json:"completedAt"`
	CompletedBy string     `json:"completedBy"`
}

// approvalsOf reads the task's approvals, once (none when the query
// fails: the entries then show what history holds).
func (b *timelineBuilder) approvalsOf() map[string]*approvalRecord {
	if b.approvals != nil {
		return b.approvals
	}
	b.approvals = map[string]*approvalRecord{}
	var list []*approvalRecord
	if b.query(wire.QueryApprovals, wire.Caller{Agent: b.s.agent.Name, Principal: guard.Principal(b.ctx)}, &list) {
		for _, a := range list {
			b.approvals[a.ID] = a
		}
	}
	return b.approvals
}

// waitpointsOf reads the task's waitpoints, once.
func (b *timelineBuilder) waitpointsOf() map[string]*waitpointRecord {
	if b.waitpoints != nil {
		return b.waitpoints
	}
	b.waitpoints = map[string]*waitpointRecord{}
	var list []*waitpointRecord
	if b.query(wire.QueryWaitpoints, wire.WaitpointsQuery{Agent: b.s.agent.Name, Owner: guard.Principal(b.ctx)}, &list) {
		for _, w := range list {
			b.waitpoints[w.ID] = w
		}
	}
	return b.waitpoints
}

// query runs a query of the task's workflow into out, within the wait for
// a worker; false when it failed (logged).
func (b *timelineBuilder) query(name string, arg, out any) bool {
	ctx, cancel := context.WithTimeout(b.ctx, b.s.waitTimeout)
	defer cancel()
	v, err := b.s.temporal.QueryWorkflow(ctx, string(b.id), "", name, arg)
	if err == nil {
		err = v.Get(out)
	}
	if err != nil {
		b.s.logger.WarnContext(b.ctx, "timeline: a query of the task failed", "task_id", b.id, "query", name, "error", err)
		return false
	}
	return true
}
