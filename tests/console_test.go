package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/chromedp/chromedp"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// payablesConfig is the payments MCP server and an LLM agent whose
// pay_invoice is gated above 1,000 (tools_test.go's, alone): the console
// and the MCP faults test use it.
const payablesConfig = `
[[mcp-servers]]
name = "payments"
url = %q

[[agents]]
name = "payables"
system-prompt = "You pay the invoices the user names."
provider = "openai"
mcp-servers = ["payments"]
mcp-tools = ["pay_invoice"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]
`

// consoleShots keeps the screenshots of the console test: in
// docs/images when A2AFLOW_UPDATE_SCREENSHOTS=1, else in a temporary
// folder, so a run does not rewrite the docs' pictures.
type consoleShots struct {
	t   *testing.T
	dir string
}

func newConsoleShots(t *testing.T) *consoleShots {
	dir := filepath.Join(os.TempDir(), "a2aflow-console")
	if os.Getenv("A2AFLOW_UPDATE_SCREENSHOTS") == "1" {
		dir = harness.Repo("docs/images")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { t.Logf("console screenshots in %s", dir) })
	return &consoleShots{t: t, dir: dir}
}

// take saves the page as console-NAME.png (the whole page, or the
// viewport when viewport is set).
func (s *consoleShots) take(page context.Context, name string, viewport bool) {
	s.t.Helper()
	action := chromedp.FullScreenshot(100)
	if viewport {
		action = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(page, action)
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "console-"+name+".png"), png, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// openConsole opens url in headless Chromium (exe) and returns the page,
// which allows four minutes for what the test does on it.
func openConsole(t *testing.T, exe, url string) (context.Context, func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	// The first call starts the browser; it must not carry the timeout.
	if err := chromedp.Do(browser, chromedp.Navigate(url)); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("browser: %v", err)
	}
	page, cancelPage := context.WithTimeout(browser, 4*time.Minute)
	return page, func() { cancelPage(); cancelBrowser(); cancelAlloc() }
}

// do runs actions on the page within 30 seconds, or fails the test with
// the page's content.
func do(t *testing.T, page context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(page, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		html, _ := chromedp.Run(page, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\nthe page's main:\n%s", what, err, truncateForLog([]byte(html)))
	}
}

// waitJS waits until the JavaScript expression is true in the page. An
// expression that throws (an element not there yet) counts as false: a
// throw would leave chromedp's poll waiting forever.
func waitJS(t *testing.T, page context.Context, what, expr string) {
	t.Helper()
	safe := "(() => { try { return !!(" + expr + "); } catch (e) { return false; } })()"
	if _, err := chromedp.Run(page, chromedp.Poll[bool](safe, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		html, _ := chromedp.Run(page, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\nthe page's main:\n%s", what, err, truncateForLog([]byte(html)))
	}
}

// goTo opens a route of the console already open in page.
func goTo(t *testing.T, page context.Context, hash string) {
	t.Helper()
	if _, err := chromedp.Run(page, chromedp.Evaluate[string]("location.hash = "+js(hash))); err != nil {
		t.Fatalf("open %s: %v", hash, err)
	}
}

// unlabelledJS lists the page's visible form controls and buttons that
// have no accessible name: no label, no aria-label or aria-labelledby, no
// text.
const unlabelledJS = `[...document.querySelectorAll("input, select, textarea, button")]
	.filter(e => e.offsetParent !== null && e.type !== "hidden")
	.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.getAttribute("aria-labelledby") &&
		!(e.tagName === "BUTTON" && e.textContent.trim()))
	.map(e => e.outerHTML.slice(0, 120))`

// checkLabels fails the test for every control of the page without an
// accessible name.
func checkLabels(t *testing.T, page context.Context, where string) {
	t.Helper()
	bad, err := chromedp.Run(page, chromedp.Evaluate[[]string](unlabelledJS))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: a control without a label: %s", where, b)
	}
}

// js quotes s for a JavaScript expression.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// timelineHas is the expression true when the task page's timeline holds
// text.
func timelineHas(text string) string {
	return `(document.querySelector("#timeline")?.textContent || "").includes(` + js(text) + `)`
}

// TestConsoleInBrowser drives the web console in headless Chromium against
// a real serve: the list shows the tasks of three agents with their
// summaries; a travel task is answered from its page and completes (a
// file sent with an answer downloads from the timeline as it was sent); a
// gated tool call is approved with edited arguments from the task's
// timeline and runs once, with those arguments; a task is forked at its
// second message with the button on that message; a changes task's
// waitpoint is completed with a JSON payload, another's by a reply holding
// data; a task started from the
// list's form shows the assistant's answer while the model writes it; a
// failed task is retried with its page's button. Then, with API keys on,
// another owner's task is not listed and reads as not found, while its
// owner, signed in on the same page, sees it. Screenshots go to
// docs/images/console-*.png with A2AFLOW_UPDATE_SCREENSHOTS=1.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromium(t)
	began := time.Now()
	shots := newConsoleShots(t)
	model := newConsoleModel(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	mcpSrv := httptest.NewServer((&mcptest.Payments{Ledger: ledger}).Handler())
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(payablesConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := harness.StartServeEnv(t, t.TempDir(), []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test",
		"A2AFLOW_LLM_PROVIDER=", "A2AFLOW_LLM_MODEL=fake-model", "ANTHROPIC_API_KEY="},
		"--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	travel, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
	echo, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	payables, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
	trip := harness.Send(t, ctx, travel, "", "Book a flight")
	hello := harness.Send(t, ctx, echo, "", "hello console")
	pay := harness.Send(t, ctx, payables, "", "pay INV-9 1800")
	approvalID := pendingApproval(t, pay)
	t.Logf("serve and three tasks: %s", time.Since(began).Round(time.Millisecond))

	page, closeBrowser := openConsole(t, exe, s.APIURL+"/console")
	defer closeBrowser()

	// The list: three agents' tasks with their summaries.
	step := time.Now()
	rowSummary := func(id a2a.TaskID, summary string) string {
		return `(document.querySelector('tr[data-task="` + string(id) + `"] td.summary a')?.textContent || "") === ` + js(summary)
	}
	waitJS(t, page, "the list shows the three tasks with their summaries",
		rowSummary(trip.ID, "travel · Book a flight")+" && "+rowSummary(hello.ID, "echo · hello console")+" && "+
			rowSummary(pay.ID, "payables · pay INV-9 1800"))
	waitJS(t, page, "the rows say what the tasks wait for",
		`document.querySelector('tr[data-task="`+string(trip.ID)+`"] td.waiting').textContent === "input: Where to?" && `+
			`document.querySelector('tr[data-task="`+string(pay.ID)+`"] td.waiting').textContent.startsWith("approval: ")`)
	shots.take(page, "tasks", true)
	checkLabels(t, page, "the list")
	if err := chromedp.Do(page, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a frame at the new width
	shots.take(page, "phone", true)
	if err := chromedp.Do(page, chromedp.EmulateViewport(1100, 900)); err != nil {
		t.Fatal(err)
	}
	// One request a refresh: the list reads GET /task-list, no task's
	// timeline, whatever its rows.
	waitJS(t, page, "the list reads /task-list and no timeline", `(() => { const r = performance.getEntriesByType("resource").map(e => e.name); `+
		`return r.some(n => n.includes("/task-list")) && !r.some(n => n.includes("/timeline")) && !r.some(n => /\/agents\/[^/]+\/tasks\?/.test(n)); })()`)
	// The text filter, typed and sent by keyboard: the server matches the
	// words of the first message.
	do(t, page, "filter by text", chromedp.SendKeys(chromedp.CSS("#f-q"), "flight"), chromedp.KeyEvent("\r"))
	waitJS(t, page, "the text filter keeps the travel task only", `location.hash === "#/tasks?q=flight" && `+
		`[...document.querySelectorAll("#task-rows tr[data-task]")].map(tr => tr.dataset.task).join() === `+js(string(trip.ID)))
	goTo(t, page, "#/tasks?agent=echo&state=TASK_STATE_COMPLETED")
	waitJS(t, page, "agent and state filters keep the echo task only", `document.querySelector("#f-agent").value === "echo" && `+
		`[...document.querySelectorAll("#task-rows tr[data-task]")].map(tr => tr.dataset.task).join() === `+js(string(hello.ID)))
	goTo(t, page, "#/tasks")
	t.Logf("the list: %s", time.Since(step).Round(time.Millisecond))

	// The approvals: what /inbox shows, each linked to its task's
	// timeline, opened by keyboard.
	step = time.Now()
	goTo(t, page, "#/approvals")
	pending := `#approval-list li[data-approval="` + approvalID + `"]`
	waitJS(t, page, "the approvals view lists the pending approval", `document.querySelector(`+js(pending+` a.task-link`)+`)?.getAttribute("href") === `+
		js("#/task/payables/"+string(pay.ID))+` && document.querySelector('header nav a[data-nav="approvals"]').getAttribute("aria-current") === "page"`)
	shots.take(page, "approvals-list", true)
	checkLabels(t, page, "the approvals")
	do(t, page, "open the approval's task by keyboard", chromedp.Focus(chromedp.CSS(pending+" a.task-link")), chromedp.KeyEvent("\r"))
	waitJS(t, page, "the approval's task opens with the approval on its timeline", `location.hash === `+js("#/task/payables/"+string(pay.ID))+
		` && document.querySelector('li.approval[data-approval="`+approvalID+`"]') !== null`)
	if code := getJSON(t, s.APIURL+"/inbox", nil); code != http.StatusOK {
		t.Errorf("GET /inbox: %d, want the inbox still served", code)
	}
	goTo(t, page, "#/tasks")
	t.Logf("the approvals: %s", time.Since(step).Round(time.Millisecond))

	// A travel task answered from its page; the first answer carries a
	// file, which its message in the timeline offers for download.
	step = time.Now()
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`tr[data-task="`+string(trip.ID)+`"] td.summary a`))); err != nil {
		t.Fatal(err)
	}
	itinerary := filepath.Join(t.TempDir(), "itinerary.txt")
	if err := os.WriteFile(itinerary, []byte("Lisbon, 24 December, two of us"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, qa := range [][2]string{{"Where to?", "Lisbon"}, {"On which date? (YYYY-MM-DD)", "2026-12-24"}, {"How many travellers?", "2"}} {
		waitJS(t, page, "the travel task asks "+qa[0], timelineHas(qa[0])+` && document.querySelector("#timeline").dataset.state === "TASK_STATE_INPUT_REQUIRED" && !document.querySelector("#reply-panel").hidden`)
		if i == 0 {
			do(t, page, "attach a file", chromedp.Click(chromedp.CSS("#reply-form details > summary")),
				chromedp.SetUploadFiles(chromedp.CSS("#reply-file"), []string{itinerary}))
		}
		send := chromedp.Click(chromedp.CSS("#reply-send"))
		if i == 2 { // by keyboard: Ctrl+Enter sends
			send = chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl))
		}
		do(t, page, "answer "+qa[1], chromedp.SendKeys(chromedp.CSS("#reply-text"), qa[1]), send)
		waitJS(t, page, "the answer "+qa[1]+" is in the timeline", `[...document.querySelectorAll("#timeline li.message.user")].some(li => li.textContent.includes(`+js(qa[1])+`))`)
	}
	file, err := chromedp.Run(page, chromedp.Evaluate[string](`fetch(document.querySelector('#timeline li.message.user a.file[download="itinerary.txt"]').href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil || file != "Lisbon, 24 December, two of us" {
		t.Errorf("the file sent with the answer, downloaded from the timeline: %q %v", file, err)
	}
	waitJS(t, page, "the travel task completes", `document.querySelector("#timeline").dataset.state === "TASK_STATE_COMPLETED" && document.querySelector("#timeline li.artifact") !== null`)
	shots.take(page, "task", false)
	booked := waitState(t, ctx, travel, trip.ID, a2a.TaskStateCompleted)
	if b := harness.BookingOf(t, booked); b["destination"] != "Lisbon" || fmt.Sprint(b["travellers"]) != "2" {
		t.Errorf("the booking made from the console: %v", b)
	}
	t.Logf("travel answered: %s", time.Since(step).Round(time.Millisecond))

	// The gated tool call, approved with edited arguments from the task's
	// timeline, as fiona (authentication is off: the name typed in the page).
	step = time.Now()
	card := `li.approval[data-approval="` + approvalID + `"]`
	goTo(t, page, "#/task/payables/"+string(pay.ID))
	err = chromedp.Do(page,
		chromedp.SendKeys(chromedp.CSS("#approver"), "fiona"),
		chromedp.Click(chromedp.CSS(`#credentials button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(card+" textarea.arguments")),
		chromedp.SetValue(chromedp.CSS(card+" textarea.arguments"), `{"invoice": "INV-9", "amount": 900, "currency": "EUR"}`),
		chromedp.SendKeys(chromedp.CSS(card+" textarea.comment"), "half now, half in January"),
	)
	if err != nil {
		t.Fatalf("the approval's form on the task's page: %v", err)
	}
	// A refresh (every 3 s) keeps the form as it is: the comment being
	// typed, and the focus in it.
	time.Sleep(3500 * time.Millisecond)
	waitJS(t, page, "the comment and its focus survive a refresh", `document.activeElement === document.querySelector(`+js(card+" textarea.comment")+`) && `+
		`document.activeElement.value === "half now, half in January"`)
	shots.take(page, "approval", false)
	checkLabels(t, page, "a task waiting for an approval")
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(card+" button.approve"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, page, "the gated call runs with the edited arguments and the task completes",
		`document.querySelector("#timeline").dataset.state === "TASK_STATE_COMPLETED" && `+timelineHas("done: paid invoice INV-9: 900.00 EUR")+
			` && document.querySelector("#timeline li.tool_call .diff ins") !== null`)
	shots.take(page, "tools", false)
	if got := workflows.MessageText(waitState(t, ctx, payables, pay.ID, a2a.TaskStateCompleted).Status.Message); !strings.HasPrefix(got, "done: paid invoice INV-9: 900.00 EUR") {
		t.Errorf("approved with edited arguments in the console: the model answered %q", got)
	}
	if raw, err := os.ReadFile(ledger); err != nil || strings.Count(string(raw), `"INV-9"`) != 1 || !strings.Contains(string(raw), `"amount":900`) {
		t.Errorf("the MCP server's ledger: %q (%v), want INV-9 paid once, 900", raw, err)
	}
	var view struct {
		Decisions []struct {
			Approver  string          `json:"approver"`
			Via       string          `json:"via"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"decisions"`
	}
	if code := getJSONWith(t, s.APIURL+"/approvals/"+approvalID, map[string]string{"X-Approver": "fiona"}, &view); code != 200 ||
		len(view.Decisions) != 1 || view.Decisions[0].Approver != "fiona" || view.Decisions[0].Via != "console" || !strings.Contains(string(view.Decisions[0].Arguments), `"amount":900`) {
		t.Errorf("the decision made in the console: %d %+v, want fiona's, via console, with the edited arguments", code, view.Decisions)
	}
	if _, tl, raw := getTimeline(t, s.APIURL, "/agents/payables", string(pay.ID), nil, nil); !hasDecisionBy(tl.Entries, approvalID, "fiona", "half now, half in January") {
		t.Errorf("the timeline does not show fiona's decision with her comment: %s", raw)
	}
	t.Logf("gated call approved: %s", time.Since(step).Round(time.Millisecond))

	// Forked at the travel task's second message, from the button on it.
	step = time.Now()
	goTo(t, page, "#/task/travel/"+string(trip.ID))
	err = chromedp.Do(page, // by keyboard: the button focused, Enter
		chromedp.WaitVisible(chromedp.CSS(`#timeline button.fork[data-at="2"]`)),
		chromedp.Focus(chromedp.CSS(`#timeline button.fork[data-at="2"]`)),
		chromedp.KeyEvent("\r"),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, page, "the fork's page opens", `location.hash.startsWith("#/task/travel/") && !location.hash.includes(`+js(string(trip.ID))+`)`)
	hash, err := chromedp.Run(page, chromedp.Evaluate[string](`location.hash`))
	if err != nil {
		t.Fatal(err)
	}
	forkID := a2a.TaskID(strings.TrimPrefix(hash, "#/task/travel/"))
	waitJS(t, page, "the fork asks where to again", `document.querySelector("#timeline").dataset.state === "TASK_STATE_INPUT_REQUIRED" && `+timelineHas("Where to?"))
	fork := waitState(t, ctx, travel, forkID, a2a.TaskStateInputRequired)
	if harness.StatusText(fork) != "Where to?" || len(fork.History) != 2 {
		t.Errorf("the fork at message 2: %q with %d messages, want Where to? after 2", harness.StatusText(fork), len(fork.History))
	}
	if o, _ := fork.Metadata["a2aflow.fork"].(map[string]any); o == nil || o["from"] != string(trip.ID) {
		t.Errorf("the fork's origin: %v, want %s", fork.Metadata["a2aflow.fork"], trip.ID)
	}
	goTo(t, page, "#/task/travel/"+string(trip.ID))
	waitJS(t, page, "the original's page lists its fork", `document.querySelector('#task-forks li[data-task="`+string(forkID)+`"] a')?.getAttribute("href") === `+
		js("#/task/travel/"+string(forkID)))
	t.Logf("forked: %s", time.Since(step).Round(time.Millisecond))

	consoleWaitpoint(t, page, s)
	consoleLiveAnswer(t, page, shots)
	consoleRetry(t, page, s, model)
	consoleOwners(t, exe)
	t.Logf("TestConsoleInBrowser took %s", time.Since(began).Round(time.Millisecond))
}

// hasDecisionBy reports whether the timeline's approval id holds a
// decision by who with comment.
func hasDecisionBy(entries []timelineEntry, id, who, comment string) bool {
	for _, e := range entries {
		if e.Approval == nil || e.Approval.ID != id {
			continue
		}
		for _, d := range e.Approval.Decisions {
			if d.By == who && d.Comment == comment {
				return true
			}
		}
	}
	return false
}

// consoleOwners: with API keys on, bob, signed in on the console, does not
// see alice's task in the list and reads it as not found; alice, signed in
// on the same page, sees it. fiona of finance, who may not read alice's
// expense, finds its approval in the approvals view and approves it there.
func consoleOwners(t *testing.T, exe string) {
	step := time.Now()
	s := harness.StartServeEnv(t, t.TempDir(), []string{"A2AFLOW_API_KEYS=alice=alice-console-key,bob=bob-console-key,fiona=fiona-console-key"},
		"--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	aliceCtx := withHeader(ctx, "X-API-Key", "alice-console-key")
	task := harness.Send(t, aliceCtx, c, "", "alice's secret plans")
	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	offsite, approvalID := expense(t, aliceCtx, expenses, "640 EUR team offsite")
	page, closeBrowser := openConsole(t, exe, s.APIURL+"/console")
	defer closeBrowser()
	signIn := func(key string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.SendKeys(chromedp.CSS("#credential"), key),
			chromedp.Click(chromedp.CSS(`#credentials button[type="submit"]`)),
		)
	}
	if err := chromedp.Do(page, signIn("bob-console-key")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, page, "bob's list is read, and empty", `(document.querySelector("#task-rows")?.textContent || "").includes("No tasks yet.") && `+
		`document.querySelector("#updated").textContent !== "" && document.querySelector("#list-message").textContent === ""`)
	goTo(t, page, "#/task/echo/"+string(task.ID))
	waitJS(t, page, "alice's task reads as not found to bob", `(document.querySelector("#task-message")?.textContent || "").includes("Task not found")`)
	text, err := chromedp.Run(page, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "secret plans") {
		t.Errorf("bob's page shows alice's message: %q", text)
	}
	if err := chromedp.Do(page, signIn("alice-console-key")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, page, "alice, signed in, reads her task", `document.querySelector("#task-title")?.textContent === "echo · alice's secret plans"`)

	if err := chromedp.Do(page, signIn("fiona-console-key")); err != nil {
		t.Fatal(err)
	}
	goTo(t, page, "#/approvals")
	form := `#approval-list li[data-approval="` + approvalID + `"] .decide`
	do(t, page, "fiona approves alice's expense in the approvals view",
		chromedp.WaitVisible(chromedp.CSS(form+" textarea.comment")),
		chromedp.SendKeys(chromedp.CSS(form+" textarea.comment"), "ok for the offsite"),
		chromedp.Click(chromedp.CSS(form+" button.approve")))
	waitJS(t, page, "the approval leaves the view", `document.querySelector(`+js(`#approval-list li[data-approval="`+approvalID+`"]`)+`) === null`)
	done := waitState(t, aliceCtx, expenses, offsite.ID, a2a.TaskStateCompleted)
	if ok, who, via, comment := lastDecision(t, receiptOf(t, done)); !ok || who != "fiona" || via != "console" || comment != "ok for the offsite" {
		t.Errorf("the decision made in the approvals view: %v by %s via %s (%q)", ok, who, via, comment)
	}
	t.Logf("owners: %s", time.Since(step).Round(time.Millisecond))
}

// consoleModel is the console test's model: the payables agent's calls go
// to the tool-calling fake, the others (the assistant's) to a LiveModel,
// which writes its answer a word at a time. While
// refusing is set, a call about INV-RETRY is refused with 400, which fails
// its task at once.
type consoleModel struct {
	*httptest.Server
	refusing atomic.Bool
}

func newConsoleModel(t *testing.T) *consoleModel {
	live := fakes.NewLiveModel(t, 1500*time.Millisecond, 150*time.Millisecond)
	tools := newFakeToolLLM(t)
	m := &consoleModel{}
	proxy := func(target string) *httputil.ReverseProxy {
		u, _ := url.Parse(target)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1 // the live answer's events as they come
		return p
	}
	toLive, toTools := proxy(live.URL), proxy(tools.URL)
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		switch {
		case m.refusing.Load() && bytes.Contains(raw, []byte("INV-RETRY")):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"the model is misconfigured","type":"invalid_request_error"}}`)
		case bytes.Contains(raw, []byte("You pay the invoices")): // the payables agent's system prompt
			toTools.ServeHTTP(w, r)
		default:
			toLive.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// consoleWaitpoint: a changes task waits for its ticket (a waitpoint),
// completed from the task's page with a JSON payload.
func consoleWaitpoint(t *testing.T, page context.Context, s *harness.Server) {
	step := time.Now()
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/changes")
	task := harness.Send(t, ctx, c, "", "Restart the payments database")
	goTo(t, page, "#/task/changes/"+string(task.ID))
	form := `li.waitpoint form`
	err := chromedp.Do(page,
		chromedp.WaitVisible(chromedp.CSS(form+" textarea.payload")),
		chromedp.SendKeys(chromedp.CSS(form+" textarea.payload"), `{"ticket_id": "CHG-7", "approved": true}`),
		chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)),
	)
	if err != nil {
		t.Fatalf("the waitpoint's form: %v", err)
	}
	waitJS(t, page, "the change is approved under the ticket", `document.querySelector("#timeline").dataset.state === "TASK_STATE_COMPLETED" && `+
		timelineHas("Change approved under ticket CHG-7"))
	if got := harness.StatusText(waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)); !strings.Contains(got, "CHG-7") {
		t.Errorf("the changes task after the console completed its waitpoint: %q", got)
	}
	// Another one, answered by a reply holding data: the waitpoint's
	// payload in a data part (the owner's way, without the token).
	other := harness.Send(t, ctx, c, "", "Drop the audit table")
	var waitpoint string
	for _, p := range other.Status.Message.Parts {
		if d, ok := p.Data().(map[string]any); ok && d["waitpointId"] != nil {
			waitpoint, _ = d["waitpointId"].(string)
		}
	}
	goTo(t, page, "#/task/changes/"+string(other.ID))
	waitJS(t, page, "the reply form is there", `document.querySelector("#timeline")?.dataset.state === "TASK_STATE_INPUT_REQUIRED" && !document.querySelector("#reply-panel").hidden`)
	data := fmt.Sprintf(`{"waitpointId": %q, "payload": {"ticket_id": "CHG-8", "approved": false, "comment": "not on a Friday"}}`, waitpoint)
	do(t, page, "reply with data", chromedp.Click(chromedp.CSS("#reply-form details > summary")),
		chromedp.SendKeys(chromedp.CSS("#reply-data"), data), chromedp.Click(chromedp.CSS("#reply-send")))
	waitJS(t, page, "the change is refused under the ticket", `document.querySelector("#timeline").dataset.state === "TASK_STATE_REJECTED" && `+timelineHas("Ticket CHG-8 refused the change"))
	t.Logf("waitpoint completed: %s", time.Since(step).Round(time.Millisecond))
}

// consoleLiveAnswer: a task started from the list's form opens its page,
// which shows the assistant's answer while the model writes it, then the
// answer as the task's message.
func consoleLiveAnswer(t *testing.T, page context.Context, shots *consoleShots) {
	step := time.Now()
	goTo(t, page, "#/tasks")
	do(t, page, "open the form", chromedp.Click(chromedp.CSS(`details.panel > summary`)))
	waitJS(t, page, "the form lists the agents", `document.querySelector('#new-agent option[value="assistant"]') !== null`)
	do(t, page, "fill the form", chromedp.SetValue(chromedp.CSS("#new-agent"), "assistant"),
		chromedp.SendKeys(chromedp.CSS("#new-text"), "Tell me about streaming"))
	do(t, page, "start the task", chromedp.Click(chromedp.CSS(`form[aria-label="Start a task"] button[type="submit"]`)))
	full := js(fakes.LiveAnswerText)
	waitJS(t, page, "the live answer shows while it is written",
		`location.hash.startsWith("#/task/assistant/") && !document.querySelector("#live-answer")?.hidden && `+
			`document.querySelector("#live-answer .text").textContent.startsWith("Streaming works") && `+
			`document.querySelector("#live-answer .text").textContent.length < `+full+`.length`)
	shots.take(page, "live", true)
	waitJS(t, page, "the answer becomes the task's message", `document.querySelector("#timeline").dataset.state === "TASK_STATE_COMPLETED" && `+
		`[...document.querySelectorAll("#timeline li.message.agent")].some(li => li.textContent.includes(`+full+`))`)
	t.Logf("live answer: %s", time.Since(step).Round(time.Millisecond))
}

// consoleRetry: a task whose model call was refused fails; once the model
// answers again, Retry on its page runs the failed step in a new task,
// which completes.
func consoleRetry(t *testing.T, page context.Context, s *harness.Server, model *consoleModel) {
	step := time.Now()
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
	model.refusing.Store(true)
	task := harness.Send(t, ctx, c, "", "pay INV-RETRY 50")
	if task.Status.State != a2a.TaskStateFailed {
		task = waitState(t, ctx, c, task.ID, a2a.TaskStateFailed)
	}
	model.refusing.Store(false)
	goTo(t, page, "#/task/payables/"+string(task.ID))
	if err := chromedp.Do(page, chromedp.WaitVisible(chromedp.CSS("#action-retry")), chromedp.Click(chromedp.CSS("#action-retry"))); err != nil {
		t.Fatalf("retry from the page: %v", err)
	}
	waitJS(t, page, "the retry's page opens and it completes", `location.hash.startsWith("#/task/payables/") && !location.hash.includes(`+js(string(task.ID))+`) && `+
		`document.querySelector("#timeline")?.dataset.state === "TASK_STATE_COMPLETED" && `+timelineHas("done: paid invoice INV-RETRY: 50.00 EUR"))
	if got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Errorf("the original after the retry: %v %v, want it failed still", got, err)
	}
	t.Logf("retried: %s", time.Since(step).Round(time.Millisecond))
}
