package taskservice

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// recordedTimeline is a recorded task (a replay fixture of the demo
// agents) served as the timeline reads a task: its events in Temporal's
// pages of chunk events, its task as its run completed with it.
type recordedTimeline struct {
	events []*historypb.HistoryEvent
	snap   *wire.TaskSnapshot
	chunk  int
	reads  int
}

func loadRecordedTimeline(t *testing.T, fixture string, chunk int) *recordedTimeline {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "cmd", "a2aflow", "internal", "demo", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events := h.GetEvents()
	done := events[len(events)-1].GetWorkflowExecutionCompletedEventAttributes()
	if done == nil {
		t.Fatalf("%s: the run did not complete", fixture)
	}
	var snap wire.TaskSnapshot
	if err := converter.GetDefaultDataConverter().FromPayload(done.GetResult().GetPayloads()[0], &snap); err != nil {
		t.Fatal(err)
	}
	return &recordedTimeline{events: events, snap: &snap, chunk: chunk}
}

// pages serves the recorded events, chunk at a time; the token is the
// position of the page's first event.
func (r *recordedTimeline) pages(_ context.Context, _ a2a.TaskID, _ string, token []byte, _ int32) ([]*historypb.HistoryEvent, []byte, error) {
	r.reads++
	from := 0
	if len(token) > 0 {
		from, _ = strconv.Atoi(string(token))
	}
	to := min(from+r.chunk, len(r.events))
	var next []byte
	if to < len(r.events) {
		next = []byte(strconv.Itoa(to))
	}
	return r.events[from:to], next, nil
}

// page builds one page of the recorded task's timeline from token.
func (r *recordedTimeline) page(t *testing.T, size int, token string) ([]TimelineEntry, string) {
	t.Helper()
	s := &TaskService{agent: &workflows.Agent{Name: "demo"}, logger: slog.New(slog.DiscardHandler)}
	cur, err := decodeTimelineToken(token, r.snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur == nil {
		cur = &timelineCursor{Task: string(r.snap.ID), Run: "run-1", Event: 1}
	}
	b := newTimelineBuilder(context.Background(), s, r.snap, cur, size)
	b.pages = r.pages
	// No workflow to query: what history holds.
	b.approvals, b.waitpoints = map[string]*approvalRecord{}, map[string]*waitpointRecord{}
	if err := b.build(); err != nil {
		t.Fatal(err)
	}
	return b.entries, b.next
}

// entryLine is an entry as one line: its kind and what tells it apart.
func entryLine(e TimelineEntry) string {
	switch {
	case e.Message != nil:
		return fmt.Sprintf("message #%d %s %s", e.Message.MessageIndex, e.Message.Role, messageText(e.Message.Message))
	case e.Status != nil:
		return "status " + string(e.Status.State)
	case e.Artifact != nil:
		return "artifact " + e.Artifact.Name
	case e.Model != nil:
		return fmt.Sprintf("model_call turn %d %d+%d tokens", e.Model.Turn, e.Model.InputTokens, e.Model.OutputTokens)
	case e.Tool != nil:
		return fmt.Sprintf("tool_call %s %s -> %v", e.Tool.Name, e.Tool.Arguments, e.Tool.Result)
	case e.Approval != nil:
		return fmt.Sprintf("approval %s %q %v", e.Approval.ID[strings.LastIndex(e.Approval.ID, "-")+1:], e.Approval.Title, e.Approval.Groups)
	case e.Delegation != nil:
		return fmt.Sprintf("delegation %s %s", e.Delegation.AgentURL, e.Delegation.RemoteState)
	}
	return e.Kind
}

// TestTimelineMapsRecordedTasks maps recorded histories of the demo agents
// to their timelines: the travel conversation's messages at their places,
// the expense's approval from its notice, the router's model calls and
// delegations.
func TestTimelineMapsRecordedTasks(t *testing.T) {
	tests := []struct {
		fixture string
		want    []string
	}{
		{"travel.history.json", []string{
			"message #1 ROLE_USER Book a flight",
			"status TASK_STATE_WORKING",
			"message #2 ROLE_AGENT Where to?",
			"status TASK_STATE_INPUT_REQUIRED",
			"message #3 ROLE_USER Lisbon",
			"status TASK_STATE_WORKING",
			"message #4 ROLE_AGENT On which date? (YYYY-MM-DD)",
			"status TASK_STATE_INPUT_REQUIRED",
			"message #5 ROLE_USER 2026-12-24",
			"status TASK_STATE_WORKING",
			"message #6 ROLE_AGENT How many travellers?",
			"status TASK_STATE_INPUT_REQUIRED",
			"message #7 ROLE_USER 2",
			"status TASK_STATE_WORKING",
			"message #8 ROLE_AGENT Booking 2 traveller(s) to Lisbon on 2026-12-24...",
			"message #9 ROLE_AGENT Booked: 2 traveller(s) to Lisbon on 2026-12-24, reference AF-LZ7JM7.",
			"artifact booking",
			"status TASK_STATE_COMPLETED",
		}},
		{"expenses.history.json", []string{
			"message #1 ROLE_USER 250 EUR conference ticket",
			"status TASK_STATE_WORKING",
			"message #2 ROLE_AGENT Waiting for approval: \"Expense of 250.00 EUR: conference ticket\" by finance.",
			"approval 1 \"Expense of 250.00 EUR: conference ticket\" [finance]",
			"status TASK_STATE_INPUT_REQUIRED",
			"status TASK_STATE_WORKING",
			"message #3 ROLE_AGENT Expense of 250.00 EUR for conference ticket approved by fiona.",
			"artifact receipt",
			"status TASK_STATE_COMPLETED",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			r := loadRecordedTimeline(t, tt.fixture, 1000)
			entries, next := r.page(t, MaxTimelinePageSize, "")
			var got []string
			for _, e := range entries {
				got = append(got, entryLine(e))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
			if next != "" {
				t.Errorf("next page token %q after the whole timeline", next)
			}
		})
	}
}

// TestTimelineModelCallsAndDelegations: the router's LLM calls (their
// tokens and turns) and its delegations to a remote agent.
func TestTimelineModelCallsAndDelegations(t *testing.T) {
	r := loadRecordedTimeline(t, "router-llm-usage.history.json", 1000)
	entries, _ := r.page(t, MaxTimelinePageSize, "")
	var models, delegations int
	for _, e := range entries {
		switch e.Kind {
		case EntryModelCall:
			models++
			if e.Model.InputTokens == 0 || e.Model.OutputTokens == 0 || e.Model.DurationMs < 0 {
				t.Errorf("model call without its usage: %+v", e.Model)
			}
		case EntryDelegation:
			delegations++
			if e.Delegation.AgentURL != "ext" || e.Delegation.RemoteTaskID == "" || e.Delegation.RemoteState == "" {
				t.Errorf("delegation %+v, want the remote agent ext, its task and its state", e.Delegation)
			}
		}
	}
	if models != 2 || delegations != 2 {
		t.Errorf("%d model calls and %d delegations, want 2 and 2:\n%v", models, delegations, entries)
	}
}

// TestTimelinePages: a timeline read in pages of any size, over Temporal
// pages of any size, is the timeline read whole: the same entries, in the
// same order, numbered without a gap, each once.
func TestTimelinePages(t *testing.T) {
	for _, fixture := range []string{"travel.history.json", "expenses.history.json", "router-llm-usage.history.json"} {
		whole, _ := loadRecordedTimeline(t, fixture, 1000).page(t, MaxTimelinePageSize, "")
		for _, chunk := range []int{1, 3, 7, 1000} {
			for _, size := range []int{1, 2, 3, 5} {
				r := loadRecordedTimeline(t, fixture, chunk)
				var got []TimelineEntry
				token := ""
				for pages := 0; ; pages++ {
					if pages > len(whole)+2 {
						t.Fatalf("%s in pages of %d: no end", fixture, size)
					}
					entries, next := r.page(t, size, token)
					if len(entries) > size {
						t.Fatalf("%s: a page of %d entries, more than %d", fixture, len(entries), size)
					}
					got = append(got, entries...)
					if next == "" {
						break
					}
					token = next
				}
				if diff := cmp.Diff(whole, got); diff != "" {
					t.Errorf("%s in pages of %d over Temporal pages of %d (-whole +pages):\n%s", fixture, size, chunk, diff)
				}
				for i, e := range got {
					if e.Seq != int64(i+1) {
						t.Fatalf("%s: entry %d has seq %d", fixture, i, e.Seq)
					}
				}
			}
		}
	}
}

// TestTimelineTokens: a page token is the timeline's own, of its task;
// anything else is refused as invalid params.
func TestTimelineTokens(t *testing.T) {
	c := &timelineCursor{Task: "task-1", Run: "run-1", Page: []byte{1, 2, 3}, PageFirst: 9, Event: 12, Sub: 1,
		timelineState: timelineState{Seq: 40, Msgs: 7, State: a2a.TaskStateWorking, Approvals: 2}}
	token := encodeTimelineToken(c)
	got, err := decodeTimelineToken(token, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, cmp.AllowUnexported(timelineCursor{})); diff != "" {
		t.Errorf("token round trip (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]string{
		"another task's": token,
		"not base64":     "%%%",
		"not JSON":       "bm90IGpzb24",
		"no run":         encodeTimelineToken(&timelineCursor{Task: "task-2", Event: 1}),
		"no event":       encodeTimelineToken(&timelineCursor{Task: "task-2", Run: "r"}),
		"too long":       strings.Repeat("a", maxTimelineTokenBytes+1),
	} {
		if _, err := decodeTimelineToken(bad, "task-2"); err == nil || !strings.Contains(err.Error(), "pageToken") {
			t.Errorf("%s token: %v, want refused", name, err)
		}
	}
}

// TestTimelineMessageJSON: a message entry is the message's A2A JSON with
// its position added.
func TestTimelineMessageJSON(t *testing.T) {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	m.ID = "m1"
	raw, err := json.Marshal(TimelineEntry{Kind: EntryMessage, Message: &TimelineMessage{Message: m, MessageIndex: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Message map[string]any `json:"message"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}, "messageIndex": float64(3)}
	if diff := cmp.Diff(want, got.Message); diff != "" {
		t.Errorf("message entry (-want +got):\n%s", diff)
	}
}

// TestTimelineToolResults: a tool's result is JSON as it is, text (a JSON
// string's too) as text, and cut at 4 KB.
func TestTimelineToolResults(t *testing.T) {
	long := strings.Repeat("x", maxToolResultBytes+10)
	tests := []struct {
		raw  string
		want any
	}{
		{`{"ok":true}`, json.RawMessage(`{"ok":true}`)},
		{`"paid"`, "paid"},
		{`"{\"ok\":true}"`, json.RawMessage(`{"ok":true}`)},
		{`plain text`, "plain text"},
		{`"` + long + `"`, long[:maxToolResultBytes] + "…"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, cutResult([]byte(tt.raw))); diff != "" {
			t.Errorf("cutResult(%.40q) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

// TestTimelineWaitingFor reads what a task waits for from its status.
func TestTimelineWaitingFor(t *testing.T) {
	data := func(d map[string]any) *a2a.Part { return a2a.NewDataPart(d) }
	msg := func(parts ...*a2a.Part) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleAgent, parts...) }
	tests := []struct {
		name       string
		status     a2a.TaskStatus
		delegating string
		want       *WaitingFor
	}{
		{"a question", a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg(a2a.NewTextPart("Where to?"))},
			"", &WaitingFor{Kind: "input", Text: "Where to?"}},
		{"an approval", a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg(a2a.NewTextPart("Waiting"), data(map[string]any{"approvalId": "t-approval-1"}))},
			"", &WaitingFor{Kind: "approval", Text: "Waiting", ApprovalID: "t-approval-1"}},
		{"a waitpoint", a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg(a2a.NewTextPart("Waiting"), data(map[string]any{"waitpointId": "t-waitpoint-2"}))},
			"", &WaitingFor{Kind: "waitpoint", Text: "Waiting", WaitpointID: "t-waitpoint-2"}},
		{"a credential", a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: msg(a2a.NewTextPart("Token?"))},
			"", &WaitingFor{Kind: "credential", Text: "Token?"}},
		{"a remote agent", a2a.TaskStatus{State: a2a.TaskStateWorking}, "ext", &WaitingFor{Kind: "delegation", Text: "waiting for ext"}},
		{"nothing", a2a.TaskStatus{State: a2a.TaskStateWorking}, "", nil},
		{"an ended task", a2a.TaskStatus{State: a2a.TaskStateCompleted}, "", nil},
	}
	for _, tt := range tests {
		got := waitingFor(&wire.TaskSnapshot{Task: &a2a.Task{Status: tt.status}}, tt.delegating)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestTimelineTurnFromSummary: a model call's turn is read from both forms
// of its activity's summary, the Temporal UI's and the one recorded before.
func TestTimelineTurnFromSummary(t *testing.T) {
	for summary, want := range map[string]int{
		"model call 4 (gpt-4o-mini), turn 3: tool result 42":        3,
		"model call 1 (the worker's model), turn 1: user: hi, turn": 1,
		"turn 2: user: What is 6*7?":                                2,
		"user: turn 5: no":                                          0,
	} {
		m := turnSummary.FindStringSubmatch(summary)
		got := 0
		if m != nil {
			got, _ = strconv.Atoi(m[1])
		}
		if got != want {
			t.Errorf("turn of %q: %d, want %d", summary, got, want)
		}
	}
}
