package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestReplayRecordedTravelHistory runs the travel flow on a real server,
// fetches the task's workflow history and replays it against the current
// workflow code, which must reproduce it exactly. With
// A2AFLOW_RECORD_HISTORY=1 it also writes the history to
// cmd/a2aflow/internal/demo/testdata/travel.history.json, the fixture the agents package replays
// so that a change breaking running tasks fails CI.
func TestReplayRecordedTravelHistory(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.TravelBooking(t, ctx, c)
	replayAndRecord(t, ctx, s, task.ID, "travel.history.json")
}

// TestReplayRecordedExpensesHistory does the same for an expense that waits
// for the finance group (its approval webhook notice included) and is
// approved through the REST API; the fixture is
// cmd/a2aflow/internal/demo/testdata/expenses.history.json.
func TestReplayRecordedExpensesHistory(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task, id := expense(t, ctx, c, "250 EUR conference ticket")
	decision := map[string]any{"approved": true, "comment": "worth it"}
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, decision, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", id, code)
	}
	checkReceipt(t, "REST", waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted), true, "fiona", "rest", "worth it")
	replayAndRecord(t, ctx, s, task.ID, "expenses.history.json")
}

// writesFixtures names the fixtures TestReplayRecordedWritesHistories
// records: "merged" were recorded with merged writes before lean writes
// (TaskInput.MergedWrites), "lean" since (TaskInput.LeanWrites), before
// the waiting memo, "waiting" since (wire.WaitingMemo).
const writesFixtures = "waiting"

// TestReplayRecordedWritesHistories records tasks as the API starts them
// today, with their writes merged (and lean): a travel booking (three
// answers, the booking activity), an expense approved through REST (the
// approvals' search attributes) and an @mention delegation that completes
// in its first turn. Each is replayed against the current workflow code;
// with A2AFLOW_RECORD_HISTORY=1 they are written to
// cmd/a2aflow/internal/demo/testdata/{travel,expenses,router-delegation}-<writesFixtures>.history.json.
func TestReplayRecordedWritesHistories(t *testing.T) {
	ext := &fakes.ExtAgent{}
	dir := t.TempDir()
	harness.AddAgent(t, dir, "ext", fakes.ServeExt(t, ext, false).URL)
	s := harness.StartServe(t, dir)
	ctx := harness.Context(t)

	travel, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.TravelBooking(t, ctx, travel)
	replayAndRecord(t, ctx, s, task.ID, "travel-"+writesFixtures+".history.json")

	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task, id := expense(t, ctx, expenses, "250 EUR conference ticket")
	decision := map[string]any{"approved": true, "comment": "worth it"}
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, decision, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", id, code)
	}
	checkReceipt(t, "REST", waitState(t, ctx, expenses, task.ID, a2a.TaskStateCompleted), true, "fiona", "rest", "worth it")
	replayAndRecord(t, ctx, s, task.ID, "expenses-"+writesFixtures+".history.json")

	router, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/router")
	task = routerSend(t, ctx, router, "", a2a.NewTextPart("@ext hello"))
	harness.WantState(t, task, a2a.TaskStateCompleted, "done: hello")
	replayAndRecord(t, ctx, s, task.ID, "router-delegation-"+writesFixtures+".history.json")
}

// continuedFixtures ends the names of the fixtures the continue-as-new
// replay tests record: "" for those recorded before the waiting memo,
// "-waiting" since (wire.WaitingMemo: the memo crosses into the next run,
// continuedTask.Waiting).
const continuedFixtures = "-waiting"

// suggestContinueAsNewAfter is the history length at which the servers of
// the continue-as-new replay tests have Temporal suggest continuing as new:
// low, so that a few turns make a task continue and the recorded runs stay
// small fixtures.
const suggestContinueAsNewAfter = 40

// startContinuingServe runs `a2aflow serve` with Temporal suggesting
// continue-as-new after suggestContinueAsNewAfter events.
func startContinuingServe(t *testing.T) *harness.Server {
	return harness.StartServe(t, t.TempDir(), "--temporal-dynamic-config",
		fmt.Sprintf("limit.historyCount.suggestContinueAsNew=%d", suggestContinueAsNewAfter))
}

// TestReplayRecordedTravelContinuedHistory books a flight through a
// conversation that outgrows its workflow run: invalid dates make the task
// continue as new twice while the date question waits. Each new run picks
// that question up without asking it again (the task's status message stays
// the one asked before, and the conversation holds one question per answer),
// and the last run takes the date and the travellers and books once. Every
// run is replayed against the current workflow code. With
// A2AFLOW_RECORD_HISTORY=1 it writes two fixtures to cmd/a2aflow/internal/demo/testdata/:
// travel-continued-ask.history.json, the first run, which asks the date and
// ends ContinuedAsNew while the question waits, and
// travel-continued-resume.history.json, the last run, which starts from the
// continued task, resumes that wait and books.
func TestReplayRecordedTravelContinuedHistory(t *testing.T) {
	s := startContinuingServe(t)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	tc := dialTemporal(t, s)

	const datePrompt = "On which date? (YYYY-MM-DD)"
	task := harness.Send(t, ctx, c, "", "Book a flight")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	id := task.ID
	task = harness.Send(t, ctx, c, id, "Lisbon")
	harness.WantState(t, task, a2a.TaskStateInputRequired, datePrompt)
	want := []string{"user: Book a flight", "agent: Where to?", "user: Lisbon", "agent: " + datePrompt}

	runID := currentRunID(t, ctx, tc, id)
	continued := 0
	for i := 1; continued < 2; i++ {
		if i > 40 {
			t.Fatalf("%d invalid dates and the task continued as new %d times, want 2", i-1, continued)
		}
		bad := fmt.Sprintf("day %d", i)
		question := fmt.Sprintf("%q is not a date like 2026-12-24. %s", bad, datePrompt)
		task = harness.Send(t, ctx, c, id, bad)
		harness.WantState(t, task, a2a.TaskStateInputRequired, question)
		want = append(want, "user: "+bad, "agent: "+question)
		if r := currentRunID(t, ctx, tc, id); r != runID {
			// The run ended while the question waited; the new run waits
			// for the answer to the same question, not a new one. (The
			// answer to the send may already come from the new run: the
			// question asked before is the one the old run handed over.)
			asked := continuedInput(t, runHistory(t, ctx, tc, id, runID)).Task.Status.Message
			runID = r
			continued++
			now, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			harness.WantState(t, now, a2a.TaskStateInputRequired, question)
			if asked == nil {
				t.Fatal("the run continued as new with no question in the task's status")
			}
			if now.Status.Message.ID != asked.ID {
				t.Errorf("after continuing as new the task's question is message %s, want %s (the one asked before)",
					now.Status.Message.ID, asked.ID)
			}
			t.Logf("continued as new after invalid date %d", i)
		}
	}
	task = harness.Send(t, ctx, c, id, "2026-12-24")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	task = harness.Send(t, ctx, c, id, "2")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	booking := harness.BookingOf(t, task)
	if booking["destination"] != "Lisbon" || booking["date"] != "2026-12-24" || booking["travellers"] != float64(2) {
		t.Errorf("booking = %v, want Lisbon, 2026-12-24, 2 travellers", booking)
	}
	want = append(want, "user: 2026-12-24", "agent: How many travellers?", "user: 2",
		"agent: Booking 2 traveller(s) to Lisbon on 2026-12-24...",
		fmt.Sprintf("agent: Booked: 2 traveller(s) to Lisbon on 2026-12-24, reference %s.", booking["reference"]))
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	// One question per answer: a question asked again by a new run would
	// show here twice in a row.
	if diff := cmp.Diff(want, conversation(full)); diff != "" {
		t.Errorf("task history (-want +got):\n%s", diff)
	}

	runs := taskRuns(t, ctx, tc, id, continued)
	dateWait := &parkedWait{Kind: "input", Slot: "date"}
	for i, r := range runs {
		if i < len(runs)-1 {
			next := continuedInput(t, r.history)
			if diff := cmp.Diff(dateWait, next.Skill.Wait); diff != "" {
				t.Errorf("run %d continued as new in another wait (-want +got):\n%s", i+1, diff)
			}
		}
		if i > 0 {
			in := startInput(t, r.history)
			if in.Continued == nil || in.Continued.Runs != i {
				t.Fatalf("run %d did not start from the task continued by run %d: %+v", i+1, i, in.Continued)
			}
		}
		if n := countActivities(r.history, "BookTrip"); n != 0 && i != len(runs)-1 {
			t.Errorf("run %d booked %d times, want the booking in the last run only", i+1, n)
		}
	}
	if n := countActivities(runs[len(runs)-1].history, "BookTrip"); n != 1 {
		t.Errorf("the last run booked %d times, want once", n)
	}
	replayRuns(t, runs, map[int]string{0: "travel-continued-ask" + continuedFixtures + ".history.json",
		len(runs) - 1: "travel-continued-resume" + continuedFixtures + ".history.json"})
}

// TestReplayRecordedExpensesContinuedHistory files an expense over the
// auto-approval limit; while it waits for finance, the user sends plain
// messages to the task (each queued, an update adding history) until the
// run continues as new with the approval pending. The new run waits for the
// same approval (same ID, same deadline, the finance webhook not notified
// again) and the inbox still lists it; decided through REST, the task
// completes with one receipt. Every run is replayed against the current
// workflow code. With A2AFLOW_RECORD_HISTORY=1 it writes
// cmd/a2aflow/internal/demo/testdata/expenses-continued-approval.history.json (the first run,
// ending ContinuedAsNew with the approval pending) and
// expenses-continued-resume.history.json (the last run: it starts from the
// continued task, is decided and completes).
func TestReplayRecordedExpensesContinuedHistory(t *testing.T) {
	s := startContinuingServe(t)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	tc := dialTemporal(t, s)

	task, approvalID := expense(t, ctx, c, "250 EUR conference ticket")
	id := task.ID
	waiting := task.Status.Message
	var asked approvalView
	if code := getJSON(t, s.APIURL+"/approvals/"+approvalID, &asked); code != 200 || asked.State != "pending" || asked.Deadline == nil {
		t.Fatalf("GET /approvals/%s: HTTP %d, %+v; want a pending approval with a deadline", approvalID, code, asked)
	}
	want := []string{"user: 250 EUR conference ticket", "agent: " + harness.StatusText(task)}

	runID := currentRunID(t, ctx, tc, id)
	for i := 1; ; i++ {
		if i > 40 {
			t.Fatalf("%d messages and the task did not continue as new", i-1)
		}
		text := fmt.Sprintf("any news? (%d)", i)
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		msg.TaskID = id
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatalf("SendMessage(%q): %v", text, err)
		}
		if got, ok := res.(*a2a.Task); !ok || got.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("SendMessage(%q) = %#v, want the task still waiting for approval", text, res)
		}
		want = append(want, "user: "+text)
		if currentRunID(t, ctx, tc, id) != runID {
			t.Logf("continued as new after message %d", i)
			break
		}
	}

	// The new run waits for the same approval: the same status message,
	// the same request, the same deadline, still listed for finance.
	now, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if now.Status.State != a2a.TaskStateInputRequired || now.Status.Message == nil || now.Status.Message.ID != waiting.ID {
		t.Errorf("after continuing as new the task is %s with status message %v, want input-required with message %s (the approval's)",
			now.Status.State, now.Status.Message, waiting.ID)
	}
	var resumed approvalView
	if code := getJSON(t, s.APIURL+"/approvals/"+approvalID, &resumed); code != 200 {
		t.Fatalf("GET /approvals/%s after continuing as new: HTTP %d", approvalID, code)
	}
	if diff := cmp.Diff(asked, resumed); diff != "" {
		t.Errorf("the approval changed when the task continued as new (-before +after):\n%s", diff)
	}
	waitFor(t, 20*time.Second, func() bool {
		var list struct {
			Approvals []approvalView `json:"approvals"`
		}
		getJSON(t, s.APIURL+"/approvals?group=finance", &list)
		return slices.ContainsFunc(list.Approvals, func(a approvalView) bool { return a.ID == approvalID })
	})
	// Visibility: the first run continued as new, the new one is the run
	// pending for finance (what the inbox and GET /approvals read).
	pendingQuery := fmt.Sprintf("WorkflowId = '%s' AND %s = 'finance'", id, wire.PendingApprovalsKey.GetName())
	waitFor(t, 20*time.Second, func() bool {
		visible, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: pendingQuery})
		if err != nil {
			t.Fatal(err)
		}
		var statuses []enums.WorkflowExecutionStatus
		for _, e := range visible.GetExecutions() {
			statuses = append(statuses, e.GetStatus())
		}
		slices.Sort(statuses)
		return slices.Equal(statuses, []enums.WorkflowExecutionStatus{
			enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW})
	})

	decision := map[string]any{"approved": true, "comment": "worth it"}
	if code := postJSON(t, s.APIURL+"/approvals/"+approvalID+"/decision", map[string]string{"X-Approver": "fiona"}, decision, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", approvalID, code)
	}
	done := waitState(t, ctx, c, id, a2a.TaskStateCompleted)
	checkReceipt(t, "REST after continue-as-new", done, true, "fiona", "rest", "worth it")
	if receipt := receiptOf(t, done); receipt["approvalId"] != approvalID || len(receipt["decisions"].([]any)) != 1 {
		t.Errorf("receipt = %v, want approval %s with one decision", receipt, approvalID)
	}
	want = append(want, "agent: "+harness.StatusText(done))
	if diff := cmp.Diff(want, conversation(done)); diff != "" {
		t.Errorf("task history (-want +got):\n%s", diff)
	}

	runs := taskRuns(t, ctx, tc, id, 1)
	first, last := runs[0], runs[len(runs)-1]
	next := continuedInput(t, first.history)
	if diff := cmp.Diff(&parkedWait{Kind: "approval", ApprovalID: approvalID}, next.Skill.Wait); diff != "" {
		t.Errorf("the run continued as new in another wait (-want +got):\n%s", diff)
	}
	if a := next.Approvals.List; len(a) != 1 || a[0].ID != approvalID || a[0].State != workflows.ApprovalPending ||
		a[0].Deadline == nil || !a[0].Deadline.Equal(*asked.Deadline) || len(next.Approvals.Notices) != 0 {
		t.Errorf("approvals handed to the next run = %+v, want %s pending with deadline %s and no notice under way",
			next.Approvals, approvalID, asked.Deadline)
	}
	// finance is notified once, by the run that asked; the next run's
	// timer ends at the deadline set then.
	if n := countActivities(first.history, wire.ActivityNotifyApprovalWebhook); n != 1 {
		t.Errorf("the first run notified %d times, want once (finance)", n)
	}
	for i, r := range runs[1:] {
		if n := countActivities(r.history, wire.ActivityNotifyApprovalWebhook); n != 0 {
			t.Errorf("run %d notified the approvers again (%d notices)", i+2, n)
		}
	}
	if ends := timerEnds(first.history); len(ends) != 1 || ends[0].Sub(*asked.Deadline).Abs() > time.Millisecond {
		t.Errorf("the first run's timers end at %v, want one at the deadline %s", ends, asked.Deadline)
	}
	if ends := timerEnds(last.history); len(ends) != 1 || ends[0].Sub(*asked.Deadline).Abs() > time.Millisecond {
		t.Errorf("the resumed run's timers end at %v, want one at the unchanged deadline %s", ends, asked.Deadline)
	}
	if in := startInput(t, last.history); in.Continued == nil || in.Continued.Skill == nil || in.Continued.Skill.Wait == nil {
		t.Errorf("the last run did not start from a task continued in a wait: %+v", in.Continued)
	}
	replayRuns(t, runs, map[int]string{0: "expenses-continued-approval" + continuedFixtures + ".history.json",
		len(runs) - 1: "expenses-continued-resume" + continuedFixtures + ".history.json"})
}

// approvalView is what GET /approvals/{id} says of an approval, as far as
// these tests read it.
type approvalView struct {
	ID       string     `json:"id"`
	State    string     `json:"state"`
	Groups   []string   `json:"groups"`
	Deadline *time.Time `json:"deadline"`
	Created  time.Time  `json:"created"`
}

// dialTemporal connects to the server's Temporal for the length of the test.
func dialTemporal(t *testing.T, s *harness.Server) client.Client {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return tc
}

// currentRunID returns the run ID of the task's latest workflow run.
func currentRunID(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID) string {
	t.Helper()
	desc, err := tc.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		t.Fatal(err)
	}
	return desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}

// conversation returns the task's history as "user: text" and
// "agent: text" lines.
func conversation(task *a2a.Task) []string {
	var lines []string
	for _, m := range task.History {
		role := "agent"
		if m.Role == a2a.MessageRoleUser {
			role = "user"
		}
		text := ""
		for _, p := range m.Parts {
			text += p.Text()
		}
		lines = append(lines, role+": "+text)
	}
	return lines
}

// taskRun is one workflow run of a task and its history.
type taskRun struct {
	info    *workflowpb.WorkflowExecutionInfo
	history *history.History
}

// taskRuns waits until Temporal visibility lists the finished task's
// continued+1 runs, every one but the last continued as new and the last
// completed, and returns them, oldest first, with their histories. It
// checks that they form one chain and that their histories hold their
// payloads in place (no reference into the payload store), as the replay
// fixtures must.
func taskRuns(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID, continued int) []taskRun {
	t.Helper()
	var infos []*workflowpb.WorkflowExecutionInfo
	waitFor(t, 20*time.Second, func() bool {
		res, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s'", id), PageSize: 100,
		})
		if err != nil {
			t.Fatal(err)
		}
		infos = res.GetExecutions()
		closed, completed := 0, 0
		for _, e := range infos {
			switch e.GetStatus() {
			case enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
				closed++
			case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
				completed++
			}
		}
		return len(infos) == continued+1 && closed == continued && completed == 1
	})
	slices.SortFunc(infos, func(a, b *workflowpb.WorkflowExecutionInfo) int {
		return a.GetStartTime().AsTime().Compare(b.GetStartTime().AsTime())
	})
	runs := make([]taskRun, len(infos))
	for i, info := range infos {
		h := runHistory(t, ctx, tc, id, info.GetExecution().GetRunId())
		runs[i] = taskRun{info: info, history: h}
		checkSelfContained(t, fmt.Sprintf("run %d (%s)", i+1, info.GetExecution().GetRunId()), h)
	}
	for i := 0; i < len(runs)-1; i++ {
		end := runs[i].history.Events[len(runs[i].history.Events)-1].GetWorkflowExecutionContinuedAsNewEventAttributes()
		if next := runs[i+1].info.GetExecution().GetRunId(); end.GetNewExecutionRunId() != next {
			t.Fatalf("run %d continued as new into %q, want the next run listed, %s", i+1, end.GetNewExecutionRunId(), next)
		}
	}
	if last := runs[len(runs)-1].history.Events; last[len(last)-1].GetEventType() != enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		t.Fatalf("the task's last run ended with %s, want completed", last[len(last)-1].GetEventType())
	}
	return runs
}

// runHistory fetches the history of one run of the task.
func runHistory(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID, runID string) *history.History {
	t.Helper()
	h := &history.History{}
	iter := tc.GetWorkflowHistory(ctx, string(id), runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

// checkSelfContained fails unless h replays without the payload store:
// no payload was kept outside history (the SDK's external storage writes a
// reference naming blobstore.DriverName instead) and no history page was
// written. A fixture that needs the store would need its blobs too, and
// WorkflowReplayerOptions{ExternalStorage: blobstore.ExternalStorage(store)}.
func checkSelfContained(t *testing.T, name string, h *history.History) {
	t.Helper()
	for _, e := range h.GetEvents() {
		raw, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("ExternalStorageReference")) || bytes.Contains(raw, []byte(blobstore.DriverName)) {
			t.Errorf("%s: event %d (%s) holds a payload store reference", name, e.GetEventId(), e.GetEventType())
		}
		if len(raw) >= blobstore.PayloadSizeThreshold {
			t.Errorf("%s: event %d (%s) holds %d bytes", name, e.GetEventId(), e.GetEventType(), len(raw))
		}
	}
	if n := countActivities(h, wire.ActivityStoreHistoryPage); n > 0 {
		t.Errorf("%s: %d history pages written to the payload store", name, n)
	}
}

// replayRuns replays every run against the current workflow code and, with
// A2AFLOW_RECORD_HISTORY=1, writes the runs named in fixtures (by index) to
// cmd/a2aflow/internal/demo/testdata/.
func replayRuns(t *testing.T, runs []taskRun, fixtures map[int]string) {
	t.Helper()
	for i, r := range runs {
		if err := replayHistory(r.history, r.info.GetExecution().GetRunId()); err != nil {
			t.Errorf("replay of run %d of %d (%s, %d events): %v", i+1, len(runs), r.info.GetStatus(), len(r.history.Events), err)
		}
	}
	for i, fixture := range fixtures {
		recordFixture(t, runs[i].history, fixture)
	}
}

// replayHistory replays the history of one run against the current
// workflow code, as `a2aflow replay FILE` of the binary under test does (its
// agents are the a2aflow command's own). The replay runs under the recorded
// workflow ID, from which approval IDs derive.
func replayHistory(h *history.History, runID string) error {
	_ = runID // the replayer reads the run from the history's start event
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "a2aflow-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "run.history.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		return err
	}
	out, err := harness.Command("replay", "--data-dir", dir, "--log-level", "warn", file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("a2aflow replay: %v\n%s", err, out)
	}
	return nil
}

// recordFixture writes h to cmd/a2aflow/internal/demo/testdata/fixture when
// A2AFLOW_RECORD_HISTORY=1.
func recordFixture(t *testing.T, h *history.History, fixture string) {
	t.Helper()
	if os.Getenv("A2AFLOW_RECORD_HISTORY") != "1" {
		return
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "cmd", "a2aflow", "internal", "demo", "testdata", fixture)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d events (%d bytes) to %s", len(h.Events), len(raw), path)
}

// startInput decodes the input a run started with.
func startInput(t *testing.T, h *history.History) runInput {
	t.Helper()
	var in runInput
	decodePayloads(t, h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput(), &in)
	return in
}

// continuedInput decodes the task a run handed to the next when it
// continued as new.
func continuedInput(t *testing.T, h *history.History) *continuedTask {
	t.Helper()
	end := h.Events[len(h.Events)-1]
	attrs := end.GetWorkflowExecutionContinuedAsNewEventAttributes()
	if attrs == nil {
		t.Fatalf("the run ended with %s, want continued as new", end.GetEventType())
	}
	var in runInput
	decodePayloads(t, attrs.GetInput(), &in)
	if in.Continued == nil || in.Continued.Skill == nil {
		t.Fatalf("the run continued as new without the task's and the skill's state: %+v", in)
	}
	return in.Continued
}

func decodePayloads(t *testing.T, p *commonpb.Payloads, v any) {
	t.Helper()
	if err := converter.GetDefaultDataConverter().FromPayloads(p, v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
}

// countActivities counts the activities of type name scheduled in h.
func countActivities(h *history.History, name string) int {
	n := 0
	for _, e := range h.GetEvents() {
		if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == name {
			n++
		}
	}
	return n
}

// timerEnds returns when each timer started in h was due to fire, on the
// workflow's clock: workflow.Now is the time of the workflow task that
// started the timer.
func timerEnds(h *history.History) []time.Time {
	var ends []time.Time
	var now time.Time
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_STARTED {
			now = e.GetEventTime().AsTime()
		}
		// A local activity (a policy judged before an approval) moves
		// the workflow's clock to the time its marker records.
		if m := e.GetMarkerRecordedEventAttributes(); m != nil {
			var data struct{ ReplayTime time.Time }
			if p := m.GetDetails()["data"].GetPayloads(); len(p) == 1 &&
				json.Unmarshal(p[0].GetData(), &data) == nil && data.ReplayTime.After(now) {
				now = data.ReplayTime
			}
		}
		if a := e.GetTimerStartedEventAttributes(); a != nil {
			ends = append(ends, now.Add(a.GetStartToFireTimeout().AsDuration()))
		}
	}
	return ends
}

// replayAndRecord fetches the history of the completed task id, replays it
// against the current workflow code and, with A2AFLOW_RECORD_HISTORY=1,
// writes it to cmd/a2aflow/internal/demo/testdata/fixture.
func replayAndRecord(t *testing.T, ctx context.Context, s *harness.Server, id a2a.TaskID, fixture string) {
	t.Helper()
	tc := dialTemporal(t, s)
	h := &history.History{}
	// The workflow completes a moment after the task does (it lets its
	// handlers answer first): wait for the last event.
	waitFor(t, 20*time.Second, func() bool {
		h.Events = nil
		iter := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, e)
		}
		return len(h.Events) > 0 && h.Events[len(h.Events)-1].GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	})
	if err := replayHistory(h, ""); err != nil {
		t.Fatalf("replay of a fresh %s: %v", fixture, err)
	}
	recordFixture(t, h, fixture)
}

// TestReplayRunningTasks is the check before a deploy: `a2aflow replay
// --running` fetches the current run of every running task from the cluster
// and replays it against the binary's agents. Two parked travel tasks (one
// mid-conversation, one just started) replay; --save keeps them as fixtures
// that replay again from the files, with the server gone.
func TestReplayRunningTasks(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	first := harness.Send(t, ctx, c, "", "Book a flight")
	harness.Send(t, ctx, c, first.ID, "Lisbon")
	second := harness.Send(t, ctx, c, "", "Book a flight")
	done := harness.TravelBooking(t, ctx, c) // completed: not running, not replayed

	saved := t.TempDir()
	out, err := harness.Command("replay", "--running", "--save", saved,
		"--temporal-addr", s.TemporalAddr, "--data-dir", s.DataDir, "--log-level", "warn").CombinedOutput()
	if err != nil {
		t.Fatalf("replay --running: %v\n%s", err, out)
	}
	for _, id := range []a2a.TaskID{first.ID, second.ID} {
		if !bytes.Contains(out, []byte("ok    task "+string(id)+"\n")) {
			t.Errorf("replay --running printed:\n%s\nwant task %s ok", out, id)
		}
	}
	if bytes.Contains(out, []byte(string(done.ID))) || !bytes.Contains(out, []byte("replayed 2, 0 did not replay")) {
		t.Errorf("replay --running printed:\n%s\nwant the two running tasks only", out)
	}

	s.Proc().Stop()
	files, _ := filepath.Glob(filepath.Join(saved, "*.history.json"))
	if len(files) != 2 {
		t.Fatalf("--save wrote %v, want two histories", files)
	}
	out, err = harness.Command(append([]string{"replay", "--data-dir", s.DataDir}, files...)...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("replayed 2, 0 did not replay")) {
		t.Fatalf("replay of the saved histories: %v\n%s", err, out)
	}
}

// runInput is what these tests read of the task workflow's input: the
// TaskInput the API starts a task with and, for a run that continues an
// earlier one, the state it handed over (one JSON object).
type runInput struct {
	wire.TaskInput
	Continued *continuedTask `json:",omitempty"`
}

// continuedTask is what these tests read of the state a run hands to the
// next when the task continues as new.
type continuedTask struct {
	Task  *a2a.Task `json:"task"`
	Skill *struct {
		Wait *parkedWait `json:"wait,omitempty"`
	} `json:"skill,omitempty"`
	Approvals struct {
		List    []*workflows.Approval `json:"list,omitempty"`
		Notices []json.RawMessage     `json:"notices,omitempty"`
	} `json:"approvals"`
	Runs int `json:"runs"`
}

// parkedWait names the wait a skill was in when its task continued as new.
type parkedWait struct {
	Kind       string `json:"kind"`
	Slot       string `json:"slot,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
}

// TestReplayRecordedForkHistory forks a travel task at its fourth message
// (the date question: the destination comes from the original's records)
// and completes the fork with another date; the fork's history (its input
// holding the original's recorded activities and inputs, its ForkSettled
// update, no activity of the replayed part) replays against the current
// workflow code. With A2AFLOW_RECORD_HISTORY=1 it writes
// cmd/a2aflow/internal/demo/testdata/travel-fork.history.json.
func TestReplayRecordedForkHistory(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	orig := harness.TravelBooking(t, ctx, c)
	fork := harness.ForkREST(t, s.APIURL, orig.ID, 4)
	harness.WantState(t, fork, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
	task := harness.Send(t, ctx, c, fork.ID, "2027-01-15")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	task = harness.Send(t, ctx, c, fork.ID, "1")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	if b := harness.BookingOf(t, task); b["destination"] != "Lisbon" || b["date"] != "2027-01-15" {
		t.Errorf("the fork booked %v, want Lisbon (recorded) on 2027-01-15", b)
	}
	replayAndRecord(t, ctx, s, fork.ID, "travel-fork.history.json")
}

// TestReplayRecordedPolicyHistories records expenses judged by approval
// policies (docs/guides/policies.md, set over REST): one a policy allows,
// settled by "policy" under version 1 without a person, and one a policy
// hands to managers, approved through REST; the fixtures are
// expenses-policy-allowed.history.json and
// expenses-policy-approved.history.json (their DecidePolicy markers and
// the GetVersion approval-policies marker).
func TestReplayRecordedPolicyHistories(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	text := `@id("conferences")
permit (principal, action == Action::"approveStep", resource) when { context.title like "*conference*" };
@id("offsites") @groups("managers")
permit (principal, action == Action::"approveStep", resource) when { context.title like "*offsite*" };
`
	body, _ := json.Marshal(map[string]string{"text": text, "reason": "conferences pass, offsites go to managers"})
	req, _ := http.NewRequest(http.MethodPut, s.APIURL+"/policies/agent/expenses", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Approver", "root")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT /policies/agent/expenses: HTTP %d", resp.StatusCode)
	}
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")

	allowed := harness.Send(t, ctx, c, "", "250 EUR conference ticket")
	if allowed.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the conference ticket: %s %q, want completed by the policy", allowed.Status.State, harness.StatusText(allowed))
	}
	approved, approver, via, comment := lastDecision(t, receiptOf(t, allowed))
	if !approved || approver != workflows.PolicyApprover || via != workflows.PolicyApprover || !strings.Contains(comment, "agent/expenses#conferences") {
		t.Errorf("the conference ticket's decision: %v %s %s %q", approved, approver, via, comment)
	}
	replayAndRecord(t, ctx, s, allowed.ID, "expenses-policy-allowed.history.json")

	task, id := expense(t, ctx, c, "640 EUR team offsite")
	decision := map[string]any{"approved": true, "comment": "team time"}
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "mo"}, decision, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", id, code)
	}
	checkReceipt(t, "REST", waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted), true, "mo", "rest", "team time")
	replayAndRecord(t, ctx, s, task.ID, "expenses-policy-approved.history.json")
}
