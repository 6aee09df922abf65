package tests

import (
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

// budgetLLM is an OpenAI endpoint that answers each conversation with three
// calculator calls, one a turn, then a text; it counts the calls per
// conversation (by its first user message).
type budgetLLM struct {
	mu    sync.Mutex
	calls map[string]int
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
	f.mu.Unlock()
	msg := fakes.TextMessage(fmt.Sprintf("added %d times", tools))
	if tools < 3 {
		msg = fakes.ToolCallMessage(fmt.Sprintf("call-%d", tools+1), "calculator", fmt.Sprintf(`{"expression":"%d + 1"}`, tools))
	}
	fakes.WriteChat(w, req.Stream, "chatcmpl-budget", "budget-model", msg, 1000, 0)
}

// TestBudgetsPauseAndAsk: a task that spent its budget waits on an
// ordinary approval ("spent 2.00 of 2.00 USD; allow 2.00 more?") listed in
// the approvals inbox; serve is killed with SIGKILL while it waits and
// started again; approved over REST, the task goes on and completes, and
// the provider got each call exactly once. An agent whose budget says fail
// fails at once; a tenant's daily budget, spent by the tasks before, makes
// a third task ask the tenant budget's own approvers.
func TestBudgetsPauseAndAsk(t *testing.T) {
	fake := &budgetLLM{calls: map[string]int{}}
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
	pending("finance", approval, "spent 2.00 of 2.00 USD; allow 2.00 more?")
	if n := fake.count("spender 1"); n != 2 {
		t.Errorf("before the approval the provider got %d calls, want 2", n)
	}
	if !strings.Contains(harness.Text(task.Status.Message), "spent 2.00 of 2.00 USD") {
		t.Errorf("the waiting task says %q", harness.Text(task.Status.Message))
	}
	s.Proc().Kill()
	s.Restart()
	pending("finance", approval, "spent 2.00 of 2.00 USD; allow 2.00 more?")
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
	pending("ops", approval, "tenant (anonymous) spent 7.00 of 7.00 USD this day; allow 5.00 more?")
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
	fake := &budgetLLM{calls: map[string]int{}}
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
