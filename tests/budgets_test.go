package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// budgetsConfig: every LLM call costs 1.00 USD (1,000 prompt tokens at
// 1,000 USD per million); "spender" may spend 2.00 a task and asks
// finance for 2.00 more, "strict" fails instead, "chat" has no budget of
// its own; the tenant (anonymous here) may spend 7.00 a day and asks ops
// for 5.00 more.
const budgetsConfig = `
[[agents]]
name = "spender"
system-prompt = "You add numbers with the calculator."
model = "budget-model"
tools = ["calculator"]
budget-usd = 2
budget-approvers = ["finance"]

[[agents]]
name = "strict"
system-prompt = "You add numbers with the calculator."
model = "budget-model"
tools = ["calculator"]
budget-usd = 2
budget-fail = true

[[agents]]
name = "chat"
system-prompt = "You add numbers with the calculator."
model = "budget-model"
tools = ["calculator"]

[[llm-prices]]
provider = "openai"
model = "budget-model"
input = 1000
output = 0

[[llm-budgets]]
tenant = "*"
period = "day"
usd = 7
increment = 5
approvers = ["ops"]
`

// budgetLLM is an OpenAI endpoint that answers each conversation with
// tools calculator calls, one a turn, then a text, each call reporting
// promptTokens; it counts the calls per conversation (by its first user
// message). Armed with holdNext, it answers the next call never: it holds
// it until its client goes away (a worker killed mid-call).
type budgetLLM struct {
	tools        int
	promptTokens int64
	held         chan string // the conversation of each held call

	mu    sync.Mutex
	calls map[string]int
	hold  bool
}

// newBudgetLLM returns a budgetLLM of tools calculator calls a
// conversation, each call reporting promptTokens.
func newBudgetLLM(tools int, promptTokens int64) *budgetLLM {
	return &budgetLLM{tools: tools, promptTokens: promptTokens, calls: map[string]int{}, held: make(chan string, 16)}
}

// holdNext arms (or disarms) the hold of the next call.
func (f *budgetLLM) holdNext(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = on
}

func (f *budgetLLM) count(first string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[first]
}

func (f *budgetLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &req)
	first, tools := "", 0
	for _, m := range req.Messages {
		if m.Role == "user" && first == "" {
			if text, ok := m.Content.(string); ok {
				first = text
			} else {
				b, _ := json.Marshal(m.Content)
				first = string(b)
			}
		}
		if m.Role == "tool" {
			tools++
		}
	}
	f.mu.Lock()
	f.calls[first]++
	hold := f.hold
	f.hold = false
	f.mu.Unlock()
	if hold {
		f.held <- first
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Minute):
		}
		return
	}
	msg := fakes.TextMessage(fmt.Sprintf("added %d times", tools))
	if tools < f.tools {
		msg = fakes.ToolCallMessage(fmt.Sprintf("call-%d", tools+1), "calculator", fmt.Sprintf(`{"expression":"%d + 1"}`, tools))
	}
	fakes.WriteChat(w, req.Stream, "chatcmpl-budget", "budget-model", msg, f.promptTokens, 0)
}

// TestBudgetsPauseAndAsk: a task that spent its budget waits on an
// ordinary approval ("spent 2.00 of 2.00 USD; allow up to 4.00?") listed in
// the approvals inbox; serve is killed with SIGKILL while it waits and
// started again; approved over REST, the task goes on and completes, and
// the provider got each call exactly once. An agent whose budget says fail
// fails at once; a tenant's daily budget, spent by the tasks before, makes
// a third task ask the tenant budget's own approvers.
func TestBudgetsPauseAndAsk(t *testing.T) {
	fake := newBudgetLLM(3, 1000)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fakes.UseOpenAI(t, srv.URL, "sk-budget-test", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(path, []byte(budgetsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := harness.StartServe(t, filepath.Join(dir, "data"), "--config", path, "--approver-groups", "fiona:finance;olga:ops")
	ctx := harness.Context(t)

	start := func(agent, text string) a2a.TaskID {
		t.Helper()
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
			Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatalf("SendMessage to %s: %v", agent, err)
		}
		return res.(*a2a.Task).ID
	}
	wait := func(agent string, id a2a.TaskID, state a2a.TaskState) *a2a.Task {
		t.Helper()
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
		return waitState(t, ctx, c, id, state)
	}
	pending := func(group, id, title string) {
		t.Helper()
		waitFor(t, 30*time.Second, func() bool {
			var body struct {
				Approvals []map[string]any `json:"approvals"`
			}
			getJSON(t, s.APIURL+"/approvals?group="+group, &body)
			for _, a := range body.Approvals {
				raw, _ := json.Marshal(a)
				if a["id"] == id && a["state"] == "pending" && strings.Contains(string(raw), title) {
					return true
				}
			}
			return false
		})
	}

	// 1. Over budget: ask, kill -9 while waiting, restart, approve.
	spender := start("spender", "spender 1")
	task := wait("spender", spender, a2a.TaskStateInputRequired)
	approval := string(spender) + "-approval-1"
	pending("finance", approval, "spent 2.00 of 2.00 USD; allow up to 4.00?")
	if n := fake.count("spender 1"); n != 2 {
		t.Errorf("before the approval the provider got %d calls, want 2", n)
	}
	if !strings.Contains(harness.Text(task.Status.Message), "spent 2.00 of 2.00 USD") {
		t.Errorf("the waiting task says %q", harness.Text(task.Status.Message))
	}
	s.Proc().Kill()
	s.Restart()
	pending("finance", approval, "spent 2.00 of 2.00 USD; allow up to 4.00?")
	if code := postJSON(t, s.APIURL+"/approvals/"+approval+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true, "comment": "go on"}, nil); code != http.StatusOK {
		t.Fatalf("approve %s: HTTP %d", approval, code)
	}
	task = wait("spender", spender, a2a.TaskStateCompleted)
	if got := harness.Text(task.Status.Message); got != "added 3 times" {
		t.Errorf("the task answered %q", got)
	}
	if n := fake.count("spender 1"); n != 4 {
		t.Errorf("across the kill the provider got %d calls, want 4: none lost, none doubled", n)
	}
	t.Logf("LLM calls at the fake across the kill: %d", fake.count("spender 1"))

	// 2. An agent that says fail.
	strict := start("strict", "strict 1")
	task = wait("strict", strict, a2a.TaskStateFailed)
	if got := harness.Text(task.Status.Message); !strings.Contains(got, "the task's LLM budget is spent: spent 2.00 of 2.00 USD") {
		t.Errorf("the strict task failed with %q", got)
	}
	if n := fake.count("strict 1"); n != 2 {
		t.Errorf("the strict task made %d calls, want 2", n)
	}

	// 3. The tenant's daily budget: 6.00 spent so far, 7.00 allowed.
	chat := start("chat", "chat 1")
	wait("chat", chat, a2a.TaskStateInputRequired)
	approval = string(chat) + "-approval-1"
	pending("ops", approval, "tenant (anonymous) spent 7.00 of 7.00 USD this day; allow up to 12.00?")
	if n := fake.count("chat 1"); n != 1 {
		t.Errorf("before the tenant's approval the chat task made %d calls, want 1", n)
	}
	if code := postJSON(t, s.APIURL+"/approvals/"+approval+"/decision", map[string]string{"X-Approver": "olga"},
		map[string]any{"approved": true}, nil); code != http.StatusOK {
		t.Fatalf("approve %s: HTTP %d", approval, code)
	}
	wait("chat", chat, a2a.TaskStateCompleted)
	if n := fake.count("chat 1"); n != 4 {
		t.Errorf("the chat task made %d calls, want 4", n)
	}
}

// budgetFixture is the recorded history of a task that spent its LLM
// budget, waited on the budget's approval and, approved, completed
// (TestReplayRecordedBudgetHistory records it; budgetsConfig defines its
// agent, spender).
const budgetFixture = "testdata/budget-approval.history.json"

// TestReplayRecordedBudgetHistory runs the spender task of budgetsConfig
// until its budget asks finance, approves it over REST, and replays the
// completed task's history against the current workflow code with the
// same config (`a2aflow replay --config`); the recorded fixture,
// tests/testdata/budget-approval.history.json, replays too. With
// A2AFLOW_RECORD_HISTORY=1 it writes the fixture.
func TestReplayRecordedBudgetHistory(t *testing.T) {
	fake := newBudgetLLM(3, 1000)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fakes.UseOpenAI(t, srv.URL, "sk-budget-test", "")
	dir := t.TempDir()
	config := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(config, []byte(budgetsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	replay := func(file string) {
		t.Helper()
		out, err := harness.Command("replay", "--config", config, "--data-dir", t.TempDir(), "--log-level", "warn", file).CombinedOutput()
		if err != nil {
			t.Errorf("a2aflow replay %s: %v\n%s", file, err, out)
		}
	}
	if _, err := os.Stat(budgetFixture); err == nil && os.Getenv("A2AFLOW_RECORD_HISTORY") != "1" {
		replay(budgetFixture)
	}

	s := harness.StartServe(t, filepath.Join(dir, "data"), "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/spender")
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("spender 1")),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	waitState(t, ctx, c, id, a2a.TaskStateInputRequired)
	approval := string(id) + "-approval-1"
	if code := postJSON(t, s.APIURL+"/approvals/"+approval+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true, "comment": "go on"}, nil); code != http.StatusOK {
		t.Fatalf("approve %s: HTTP %d", approval, code)
	}
	if task := waitState(t, ctx, c, id, a2a.TaskStateCompleted); harness.Text(task.Status.Message) != "added 3 times" {
		t.Errorf("the task answered %q", harness.Text(task.Status.Message))
	}
	tc := dialTemporal(t, s)
	h := &history.History{}
	waitFor(t, 20*time.Second, func() bool {
		h = runHistory(t, ctx, tc, id, "")
		return len(h.Events) > 0 && h.Events[len(h.Events)-1].GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	})
	checkSelfContained(t, "the budget task", h)
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "budget.history.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	replay(file)
	if os.Getenv("A2AFLOW_RECORD_HISTORY") == "1" {
		if err := os.WriteFile(budgetFixture, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d events to %s", len(h.Events), budgetFixture)
	}
}

// pastIncrementPrices price every model's prompt tokens at 1,000,000 USD
// per million: issue 47's calls of 10 prompt tokens cost 10.00 USD each.
const pastIncrementPrices = `
[[llm-prices]]
provider = "openai"
model = "*"
input = 1000000
output = 0
`

// pastIncrement is a configuration of issue 47: one model call costs ten
// times the budget and its increment.
type pastIncrement struct {
	name   string
	config string
	// approver decides the budget's approvals (fiona: finance, olga: ops).
	approver string
	// title is the first approval's title.
	title string
	// before is the history recorded before an approval raised the budget
	// to the spend plus the increment (llm's budgetFromSpendChange): by
	// runPastIncrement on main at ec1faf0 (with A2AFLOW_RECORD_HISTORY=1,
	// writing here), which approved ten times for the task's budget and
	// four for the tenant's (1, 2, 4 and 8.00 USD more); after is the
	// history recorded since, one approval.
	before, after string
}

// pastIncrements are issue 47's configuration, a task's budget of 1.00 USD
// and its tenant's month's budget of 1.00 USD.
var pastIncrements = []pastIncrement{
	{name: "task", approver: "fiona", title: "spent 10.00 of 1.00 USD; allow up to 11.00?",
		before: "testdata/budget-task-past-increment.history.json", after: "testdata/budget-task-past-increment-from-spend.history.json",
		config: pastIncrementPrices + `
[[agents]]
name = "spender"
system-prompt = "You compute what the user asks with the calculator."
tools = ["calculator"]
budget-usd = 1
budget-approvers = ["finance"]
`},
	{name: "tenant", approver: "olga", title: "tenant (anonymous) spent 10.00 of 1.00 USD this month; allow up to 11.00?",
		before: "testdata/budget-tenant-past-increment.history.json", after: "testdata/budget-tenant-past-increment-from-spend.history.json",
		config: pastIncrementPrices + `
[[agents]]
name = "spender"
system-prompt = "You compute what the user asks with the calculator."
tools = ["calculator"]

[[llm-budgets]]
tenant = "*"
period = "month"
usd = 1
approvers = ["ops"]
`},
}

// budgetApproval is a budget's approval as GET /approvals/ID shows it.
type budgetApproval struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Request struct {
		Title   string `json:"title"`
		Details string `json:"details"`
		Action  struct {
			Budget, Period                                  string
			SpentUSD, BudgetUSD, IncrementUSD, NewBudgetUSD float64
		} `json:"action"`
	} `json:"request"`
}

// pastIncrementRun is what runPastIncrement saw.
type pastIncrementRun struct {
	task      *a2a.Task
	approvals []budgetApproval // each as decided
	calls     int              // at the provider
	usage     struct {         // GET /usage?by=task, the task's row
		Calls   int64
		CostUSD float64
	}
}

// runPastIncrement runs sc's spender task on serve against an OpenAI fake
// whose first answer asks for the calculator and whose second answers the
// user, each call 10 prompt tokens (10.00 USD). It approves each budget
// approval the task asks for until the task completes (at most 15),
// killing serve (kill -9) while the first waits and again right after its
// decision: once the next call reached the provider, which holds it
// unanswered (Temporal makes it again once its heartbeats stop for 20 s), or
// once the task asked again. It replays the completed task's history with
// `a2aflow replay --config`, and with A2AFLOW_RECORD_HISTORY=1 writes it
// to sc.after.
func runPastIncrement(t *testing.T, sc pastIncrement) pastIncrementRun {
	t.Helper()
	fake := newBudgetLLM(1, 10)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=sk-budget-test", "A2AFLOW_LLM_PROVIDER=", "A2AFLOW_LLM_MODEL=", "ANTHROPIC_API_KEY="}
	dir := t.TempDir()
	config := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(config, []byte(sc.config), 0o600); err != nil {
		t.Fatal(err)
	}
	s := harness.StartServeEnv(t, filepath.Join(dir, "data"), env, "--config", config, "--approver-groups", "fiona:finance;olga:ops")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/spender")
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("spender 1")),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	approver := map[string]string{"X-Approver": sc.approver}
	approval := func(n int) (budgetApproval, bool) {
		var a budgetApproval
		code := getJSONWith(t, fmt.Sprintf("%s/approvals/%s-approval-%d", s.APIURL, id, n), approver, &a)
		return a, code == http.StatusOK
	}
	// pendingOrDone waits until approval n is pending or the task ended,
	// or, with held, until the provider holds a call; within. It returns
	// whether approval n is pending.
	pendingOrDone := func(n int, within time.Duration, held <-chan string) bool {
		t.Helper()
		var state a2a.TaskState
		for deadline := time.Now().Add(within); time.Now().Before(deadline); {
			if a, ok := approval(n); ok && a.State == "pending" {
				return true
			}
			if task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err == nil {
				if state = task.Status.State; state.Terminal() {
					return false
				}
			}
			select {
			case <-held:
				return false
			case <-time.After(100 * time.Millisecond):
			}
		}
		a, _ := approval(n)
		t.Fatalf("approval %d is not pending (%+v) and the task is %s after %s", n, a, state, within)
		return false
	}
	restart := func() {
		s.Proc().Kill()
		s.Restart()
		c, _ = harness.NewClient(t, ctx, s.APIURL+"/agents/spender")
	}
	n := 1
	// A call lost with the killed worker is made again once its heartbeat
	// timeout (20 s, llm.DefaultActivityOptions) is up; 90 s fails a
	// regression to the attempt's two minutes.
	for ; pendingOrDone(n, 90*time.Second, nil); n++ {
		if n > 15 {
			t.Fatalf("the task asked %d times and still waits", n)
		}
		if n == 1 {
			restart() // while it waits
			if !pendingOrDone(n, time.Minute, nil) {
				t.Fatalf("after kill -9 approval %d is no longer pending", n)
			}
			fake.holdNext(true)
		}
		if code := postJSON(t, fmt.Sprintf("%s/approvals/%s-approval-%d/decision", s.APIURL, id, n), approver,
			map[string]any{"approved": true}, nil); code != http.StatusOK {
			t.Fatalf("approve %s-approval-%d: HTTP %d", id, n, code)
		}
		if n == 1 {
			pendingOrDone(n+1, time.Minute, fake.held)
			restart() // right after the decision
			fake.holdNext(false)
		}
	}
	var run pastIncrementRun
	for i := 1; i < n; i++ {
		a, _ := approval(i)
		run.approvals = append(run.approvals, a)
	}
	run.task = waitState(t, ctx, c, id, a2a.TaskStateCompleted)
	run.calls = fake.count("spender 1")
	var usage struct {
		Totals []struct {
			Key     string
			Calls   int64
			CostUSD float64
		}
	}
	getJSON(t, s.APIURL+"/usage?by=task", &usage)
	for _, row := range usage.Totals {
		if row.Key == string(id) {
			run.usage.Calls, run.usage.CostUSD = row.Calls, row.CostUSD
		}
	}
	t.Logf("%s budget: %d approvals, %d calls at the provider, /usage %+v", sc.name, len(run.approvals), run.calls, run.usage)

	tc := dialTemporal(t, s)
	h := &history.History{}
	waitFor(t, 20*time.Second, func() bool {
		h = runHistory(t, ctx, tc, id, "")
		return len(h.Events) > 0 && h.Events[len(h.Events)-1].GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	})
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "budget.history.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	replayWithConfig(t, sc.config, file)
	if os.Getenv("A2AFLOW_RECORD_HISTORY") == "1" {
		if err := os.WriteFile(sc.after, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d events to %s", len(h.Events), sc.after)
	}
	return run
}

// replayWithConfig replays the history in file with `a2aflow replay
// --config` of a file holding config.
func replayWithConfig(t *testing.T, config, file string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := harness.Command("replay", "--config", path, "--data-dir", t.TempDir(), "--log-level", "warn", file).CombinedOutput()
	if err != nil {
		t.Errorf("a2aflow replay %s: %v\n%s", file, err, out)
	}
}

// TestBudgetsPastIncrement is issue 47: a call that costs ten times the
// budget and its increment. With a task's budget of 1.00 USD, and with
// its tenant's month's budget of 1.00 USD, the task asks once, "spent
// 10.00 of 1.00 USD; allow up to 11.00?"; approved, its next call runs and
// it completes. serve killed with kill -9 while the approval waits and
// again right after the decision, with that call at the provider, changes
// nothing: one approval, and GET /usage counts each call once (the
// attempt lost with the killed worker is not a call the task made).
func TestBudgetsPastIncrement(t *testing.T) {
	for _, sc := range pastIncrements {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel() // each waits 20 s for the call lost with the killed worker
			run := runPastIncrement(t, sc)
			if len(run.approvals) != 1 {
				t.Fatalf("the task asked %d times, want once: %+v", len(run.approvals), run.approvals)
			}
			a := run.approvals[0]
			if a.State != "approved" || a.Request.Title != sc.title {
				t.Errorf("the approval is %s, %q; want approved, %q", a.State, a.Request.Title, sc.title)
			}
			if b := a.Request.Action; b.Budget != sc.name || b.SpentUSD != 10 || b.BudgetUSD != 1 || b.IncrementUSD != 1 || b.NewBudgetUSD != 11 {
				t.Errorf("the approval's action is %+v, want the %s budget: spent 10, budget 1, increment 1, new budget 11", b, sc.name)
			}
			if !strings.Contains(a.Request.Details, "raises it to 11.00 USD") {
				t.Errorf("the approval's details say %q", a.Request.Details)
			}
			if got := harness.Text(run.task.Status.Message); got != "added 1 times" {
				t.Errorf("the task answered %q", got)
			}
			if run.calls != 3 {
				t.Errorf("the provider got %d calls, want 3: the first, the second lost with the killed worker, and that one again", run.calls)
			}
			if run.usage.Calls != 2 || run.usage.CostUSD != 20 {
				t.Errorf("GET /usage counts the task's %+v, want 2 calls costing 20.00 USD", run.usage)
			}
		})
	}
}

// TestReplayBudgetPastIncrementHistories replays issue 47's histories with
// the configuration that recorded them: those recorded before an approval
// raised the budget to the spend plus the increment (ten approvals, each
// adding 1.00, then the call), which the tasks then running must go on
// deciding as they did, and those recorded since (TestBudgetsPastIncrement
// with A2AFLOW_RECORD_HISTORY=1).
func TestReplayBudgetPastIncrementHistories(t *testing.T) {
	for _, sc := range pastIncrements {
		for _, file := range []string{sc.before, sc.after} {
			t.Run(filepath.Base(file), func(t *testing.T) {
				replayWithConfig(t, sc.config, file)
			})
		}
	}
}
