package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/chromedp/chromedp"
	"go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// uiView is what the Temporal UI shows of a task's workflow: its static
// summary and details (DescribeWorkflow) and its current details (the
// __temporal_workflow_metadata query), and all of Describe's answer and
// the query's, raw, for the secrets check.
type uiView struct {
	summary, details, current string
	raw                       string
}

// describeTask reads task id's workflow as the Temporal UI does.
func describeTask(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID) uiView {
	t.Helper()
	d, err := tc.DescribeWorkflow(ctx, string(id), "")
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	var v uiView
	v.summary, _ = d.GetStaticSummary()
	v.details, _ = d.GetStaticDetails()
	raw, err := tc.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		t.Fatal(err)
	}
	val, err := tc.QueryWorkflow(ctx, string(id), "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatalf("metadata query of %s: %v", id, err)
	}
	var md sdkpb.WorkflowMetadata
	if err := val.Get(&md); err != nil {
		t.Fatal(err)
	}
	v.current = md.GetCurrentDetails()
	v.raw = protojson.Format(raw) + protojson.Format(&md)
	return v
}

// wantView checks that the summary is want.summary and that the details
// and current details hold each of want's lines.
func wantView(t *testing.T, name string, got uiView, summary string, details, current []string) {
	t.Helper()
	if got.summary != summary {
		t.Errorf("%s: static summary %q, want %q", name, got.summary, summary)
	}
	for _, w := range details {
		if !strings.Contains(got.details, w) {
			t.Errorf("%s: the static details lack %q:\n%s", name, w, got.details)
		}
	}
	for _, w := range current {
		if !strings.Contains(got.current, w) {
			t.Errorf("%s: the current details lack %q:\n%s", name, w, got.current)
		}
	}
}

// summaries returns the user metadata summaries of task id's history
// events, by event type.
func summaries(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID) map[enums.EventType][]string {
	t.Helper()
	out := map[enums.EventType][]string{}
	iter := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			var s string
			_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
			out[ev.GetEventType()] = append(out[ev.GetEventType()], s)
		}
	}
	return out
}

// TestTemporalUIShowsTasks: each task's workflow, read as the Temporal UI
// reads it, has a summary (agent and first line) and static details
// saying where it came from (a message, a fork, a schedule, another
// server's delegation), and current details that name what it waits for:
// a question (travel), an approval (expenses), a waitpoint (changes), a
// remote agent's task (the router's delegation), a credential (issues),
// and the model call under way (the assistant, the fake model holding its
// answer). The token the user gave the issues agent is nowhere in what the
// UI reads. The deadline timer and the model call have their summaries.
func TestTemporalUIShowsTasks(t *testing.T) {
	const refused = "ghp_UIMetaRefusedToken0123456789"
	b := harness.StartServe(t, t.TempDir()) // the server the router delegates to
	github := newFakeGitHub(t, "ghp_UIMetaGoodToken0123456789")
	model := fakes.NewHeldModel(t, "6*7 is 42.")
	fakes.UseOpenAI(t, model.URL, fakes.OpenAIKey, "")
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "peer", b.APIURL+"/agents/travel")
	s := harness.StartServeEnv(t, dataDir, []string{"A2AFLOW_GITHUB_API_URL=" + github.URL})
	ctx := harness.Context(t)
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	agent := func(name string) *a2aclient.Client {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+name)
		return c
	}

	travel := harness.Send(t, ctx, agent("travel"), "", "Book a flight\nfor two, please")
	harness.WantState(t, travel, a2a.TaskStateInputRequired, "Where to?")
	wantView(t, "travel", describeTask(t, ctx, tc, travel.ID), "travel · Book a flight",
		[]string{"**Agent:** `travel`", "**Owner:** none (no authentication)", "**Context:** `" + travel.ContextID + "`",
			"**Came from:** a message sent to the agent", "**First message:** Book a flight"},
		[]string{"**travel · Book a flight**", "**State:** input-required", "- the user's answer to: Where to?"})

	expenseTask, approvalID := expense(t, ctx, agent("expenses"), "250 EUR training course")
	wantView(t, "expenses", describeTask(t, ctx, tc, expenseTask.ID), "expenses · 250 EUR training course", nil,
		[]string{"- approval `" + approvalID + "` \"Expense of 250.00 EUR: training course\" by `finance`, 0 of 1 approval(s), deadline "})
	if got := summaries(t, ctx, tc, expenseTask.ID)[enums.EVENT_TYPE_TIMER_STARTED]; len(got) != 1 || !strings.HasPrefix(got[0], "deadline of approval "+approvalID+" (") {
		t.Errorf("the approval's timer summaries %q, want its deadline's", got)
	}

	change := requestChange(t, ctx, agent("changes"), "Restart the payments database", nil)
	wantView(t, "changes", describeTask(t, ctx, tc, change.ID), "changes · Restart the payments database", nil,
		[]string{"- waitpoint `" + waitpointOf(t, change) + "` ("})

	routed := routerSend(t, ctx, agent("router"), "", a2a.NewTextPart("@peer Book a flight"))
	harness.WantState(t, routed, a2a.TaskStateInputRequired, "Where to?")
	dels, _ := routed.Metadata["a2aflow.delegations"].([]any)
	if len(dels) != 1 {
		t.Fatalf("the router's delegations: %v", routed.Metadata["a2aflow.delegations"])
	}
	remoteID, _ := dels[0].(map[string]any)["taskId"].(string)
	wantView(t, "router", describeTask(t, ctx, tc, routed.ID), "router · @peer Book a flight", nil,
		[]string{"- the user's answer to: Where to?", "- remote agent `peer`, its task `" + remoteID + "` (input-required)"})
	tcB, err := client.Dial(client.Options{HostPort: b.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tcB.Close()
	wantView(t, "the delegated task", describeTask(t, ctx, tcB, a2a.TaskID(remoteID)), "travel · Book a flight",
		[]string{"**Came from:** a delegation from task `" + string(routed.ID) + "` of agent `router`"},
		[]string{"- the user's answer to: Where to?"})

	t.Run("a model call in progress", func(t *testing.T) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What is 6*7?"))
		res, err := agent("assistant").SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		var v uiView
		eventually(t, 20*time.Second, func() error {
			if model.Received() == 0 {
				return fmt.Errorf("the model got no request yet")
			}
			if v = describeTask(t, ctx, tc, task.ID); !strings.Contains(v.current, "**Doing:**") {
				return fmt.Errorf("the current details show no call under way:\n%s", v.current)
			}
			return nil
		})
		wantView(t, "assistant", v, "assistant · What is 6*7?", nil,
			[]string{"**State:** working", "- model call 1 (the worker's model), turn 1: user: What is 6\\*7? (since "})
		model.Release()
		waitState(t, ctx, agent("assistant"), task.ID, a2a.TaskStateCompleted)
		v = describeTask(t, ctx, tc, task.ID)
		wantView(t, "assistant, done", v, "assistant · What is 6*7?", nil, []string{"**State:** completed", "**Cost so far:** 1 model call(s), 10 input and 5 output tokens"})
		if strings.Contains(v.current, "Doing") {
			t.Errorf("the completed task's details show a call under way:\n%s", v.current)
		}
		if got := summaries(t, ctx, tc, task.ID)[enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]; !strings.Contains(strings.Join(got, "\n"), "model call 1 (the worker's model), turn 1: user: What is 6*7?") {
			t.Errorf("the model call's activity summaries: %q", got)
		}
	})

	t.Run("a credential request shows no secret", func(t *testing.T) {
		c := agent("issues")
		task := harness.Send(t, ctx, c, "", "List the open issues of octo/widgets")
		harness.WantState(t, task, a2a.TaskStateAuthRequired, "")
		task = harness.Send(t, ctx, c, task.ID, refused)
		harness.WantState(t, task, a2a.TaskStateAuthRequired, "")
		v := describeTask(t, ctx, tc, task.ID)
		wantView(t, "issues", v, "issues · List the open issues of octo/widgets", nil,
			[]string{"**State:** auth-required", "- a credential for `github` (bearer)"})
		all := v.raw + strings.Join(summaries(t, ctx, tc, task.ID)[enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED], "\n")
		list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: "WorkflowId = '" + string(task.ID) + "'"})
		if err != nil {
			t.Fatal(err)
		}
		all += protojson.Format(list)
		if strings.Contains(all, refused) || strings.Contains(all, "UIMetaGoodToken") {
			t.Errorf("what the Temporal UI reads of the task holds the token:\n%s", all)
		}
	})

	t.Run("the Temporal UI's User Metadata tab", func(t *testing.T) {
		screenshotUserMetadata(t, ctx, tc, s.UIURL, expenseTask.ID)
	})

	t.Run("a fork and a schedule's run say where they came from", func(t *testing.T) {
		fork := harness.ForkREST(t, s.APIURL+"/agents/travel", travel.ID, 1)
		wantView(t, "fork", describeTask(t, ctx, tc, fork.ID), "travel · Book a flight",
			[]string{"**Came from:** a fork of task `" + string(travel.ID) + "` at its message 1"}, nil)
		var sched resources.ScheduleView
		req := resources.ScheduleRequest{Agent: "expenses", Name: "monthly-ticket", Message: resources.ScheduleMessage{Text: "250 EUR monthly conference ticket"},
			Cron: "0 9 1 * *", Paused: true}
		if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", "", req, &sched); code != 201 {
			t.Fatalf("create the schedule: %d %s", code, body)
		}
		if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":trigger", "", nil, nil); code != 200 {
			t.Fatalf("trigger: %d %s", code, body)
		}
		var runID string
		eventually(t, 20*time.Second, func() error {
			var v resources.ScheduleView
			scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, "", nil, &v)
			if len(v.RecentRuns) == 0 {
				return fmt.Errorf("no run yet")
			}
			runID = v.RecentRuns[0].TaskID
			return nil
		})
		waitState(t, ctx, agent("expenses"), a2a.TaskID(runID), a2a.TaskStateInputRequired)
		wantView(t, "schedule's run", describeTask(t, ctx, tc, a2a.TaskID(runID)), "expenses · 250 EUR monthly conference ticket",
			[]string{"**Came from:** a run of schedule `" + sched.ID + "` (monthly-ticket)"}, []string{"- approval `"})
	})
}

// screenshotUserMetadata opens the Temporal UI's User Metadata tab of
// task id's run in headless Chromium, when the machine has it, and saves
// a screenshot of its summary, details and current details: in a
// temporary folder or, with A2AFLOW_UPDATE_SCREENSHOTS=1, as the guide's
// docs/temporal-ui-user-metadata.png. The tab renders the markdown in a
// frame of its own, which the page's text does not hold: the test reads
// the same fields through the SDK (describeTask); here it waits for the
// tab's headings.
func screenshotUserMetadata(t *testing.T, ctx context.Context, tc client.Client, uiURL string, id a2a.TaskID) {
	t.Helper()
	exe := chromiumPath()
	if exe == "" {
		t.Log("no Chromium on PATH: no screenshot of the Temporal UI")
		return
	}
	d, err := tc.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/namespaces/default/workflows/%s/%s/user-metadata", uiURL, id, d.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 980))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate(url)); err != nil { // starts the browser
		t.Fatalf("open %s: %v", url, err)
	}
	// The UI is a single-page app that loads as it goes: its text is read
	// until the tab shows its three parts.
	var text string
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(text, "Current Details") || !strings.Contains(text, "Summary"); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the Temporal UI's User Metadata tab of %s never showed; the page shows:\n%s", id, text)
		}
		text, _ = chromedp.Run(browser, chromedp.Evaluate[string](`document.body.innerText`))
	}
	time.Sleep(2 * time.Second) // the markdown's frames
	png, err := chromedp.Run(browser, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if os.Getenv("A2AFLOW_UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join(repoRoot(t), "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, "temporal-ui-user-metadata.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Temporal UI's User Metadata tab of %s: %s", id, filepath.Join(dir, "temporal-ui-user-metadata.png"))
}
