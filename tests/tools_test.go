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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/chromedp/chromedp"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// fakeToolLLM is a model speaking both OpenAI's chat completions and
// Anthropic's messages: told "pay INVOICE AMOUNT", it calls pay_invoice
// with those arguments and a reason; shown the tool's result (or its
// error), it answers "done: " and the result.
type fakeToolLLM struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

var payRequest = regexp.MustCompile(`^pay (\S+) (\d+)$`)

func newFakeToolLLM(t *testing.T) *fakeToolLLM {
	f := &fakeToolLLM{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			f.openAI(w, raw)
		case "/v1/messages":
			f.anthropic(w, raw)
		default:
			http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// decide is the model's next step after the conversation's last message:
// the user's request (a call) or a tool's result (the answer).
func decide(lastUser, toolResult string, isTool bool) (text string, call map[string]any) {
	if isTool {
		return "done: " + toolResult, nil
	}
	m := payRequest.FindStringSubmatch(strings.TrimSpace(lastUser))
	if m == nil {
		return "I only pay invoices.", nil
	}
	var amount float64
	fmt.Sscan(m[2], &amount)
	return "Paying " + m[1] + " as asked.", map[string]any{"invoice": m[1], "amount": amount, "currency": "EUR"}
}

func (f *fakeToolLLM) openAI(w http.ResponseWriter, raw []byte) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &req)
	last := req.Messages[len(req.Messages)-1]
	text, call := decide(fmt.Sprint(last.Content), fmt.Sprint(last.Content), last.Role == "tool")
	msg := map[string]any{"role": "assistant", "content": text, "refusal": nil}
	finish := "stop"
	if call != nil {
		args, _ := json.Marshal(call)
		msg["tool_calls"] = []any{map[string]any{"id": "call_pay", "type": "function", "function": map[string]any{"name": "pay_invoice", "arguments": string(args)}}}
		finish = "tool_calls"
	}
	body, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"id":"chatcmpl-tools","object":"chat.completion","created":1700000000,"model":%q,
		"choices":[{"index":0,"finish_reason":%q,"logprobs":null,"message":%s}],
		"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, req.Model, finish, body)
}

func (f *fakeToolLLM) anthropic(w http.ResponseWriter, raw []byte) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type    string          `json:"type"`
				Text    string          `json:"text"`
				Content json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &req)
	last := req.Messages[len(req.Messages)-1]
	var userText, result string
	isTool := false
	for _, c := range last.Content {
		switch c.Type {
		case "text":
			userText += c.Text
		case "tool_result":
			isTool = true
			var s string
			if json.Unmarshal(c.Content, &s) == nil {
				result += s
			} else {
				var blocks []struct{ Text string }
				_ = json.Unmarshal(c.Content, &blocks)
				for _, b := range blocks {
					result += b.Text
				}
			}
		}
	}
	text, call := decide(userText, result, isTool)
	content := []any{map[string]any{"type": "text", "text": text}}
	stop := "end_turn"
	if call != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_pay", "name": "pay_invoice", "input": call})
		stop = "tool_use"
	}
	body, _ := json.Marshal(map[string]any{"id": "msg_tools", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 20}})
	w.Write(body)
}

// gatedToolsConfig is the config file: the payments MCP server, and three
// LLM agents whose pay_invoice is gated above 1,000: one on OpenAI's wire,
// one on Anthropic's, and a hasty one whose approvers have four seconds.
const gatedToolsConfig = `
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
grantable = true

[[agents]]
name = "payables-anthropic"
system-prompt = "You pay the invoices the user names."
provider = "anthropic"
mcp-servers = ["payments"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]

[[agents]]
name = "payables-hasty"
system-prompt = "You pay the invoices the user names."
provider = "openai"
mcp-servers = ["payments"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]
timeout = "4s"
`

// TestGatedToolCalls runs config-file LLM agents whose pay_invoice, a tool
// of a real MCP server (the Go SDK's, over streamable HTTP), is gated above
// 1,000 EUR, on both providers' wire formats: a small payment runs at once;
// a large one waits on an approval that shows the tool, its arguments and
// the model's reason, and is approved over REST (a2aflow killed with -9
// while it waits, and again right after the decision), approved while the
// call runs (killed mid-call: the retry carries the same idempotency key),
// rejected with the CLI (the model answers with the reason), approved with
// edited arguments in the inbox in Chromium, approved by an A2A decision
// part, and left to expire. The MCP server's ledger holds each approved
// payment exactly once, nothing else.
func TestGatedToolCalls(t *testing.T) {
	model := newFakeToolLLM(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	payments := &mcptest.Payments{Ledger: ledger}
	mcpSrv := httptest.NewServer(payments.Handler())
	// Closed after a2aflow stops (cleanups run last first): a2aflow's MCP
	// sessions hold connections open until then.
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(gatedToolsConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-ant-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	client := func(agent string) *a2aclient.Client {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
		return c
	}
	payables := client("payables")
	approve := func(id string, body map[string]any) {
		t.Helper()
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, body, nil); code != 200 {
			t.Fatalf("decision on %s: HTTP %d", id, code)
		}
	}
	answerOf := func(c *a2aclient.Client, id a2a.TaskID) string {
		t.Helper()
		return workflows.MessageText(waitState(t, ctx, c, id, a2a.TaskStateCompleted).Status.Message)
	}

	t.Logf("phase: below the threshold")
	// Below the threshold: no approval.
	small := harness.Send(t, ctx, payables, "", "pay INV-1 99")
	if got := workflows.MessageText(small.Status.Message); small.Status.State != a2a.TaskStateCompleted || !strings.HasPrefix(got, "done: paid invoice INV-1: 99.00 EUR") {
		t.Fatalf("a small payment: %s %q", small.Status.State, got)
	}

	t.Logf("phase: REST with kills")
	// Approved over REST, a2aflow killed while it waits and right after the
	// decision.
	big := harness.Send(t, ctx, payables, "", "pay INV-2 1500")
	id := pendingApproval(t, big)
	var view struct {
		Request struct {
			Title      string          `json:"title"`
			Details    string          `json:"details"`
			Action     json.RawMessage `json:"action"`
			EditSchema json.RawMessage `json:"editSchema"`
			GrantKey   string          `json:"grantKey"`
		} `json:"request"`
	}
	if code := getJSONWith(t, s.APIURL+"/approvals/"+id, map[string]string{"X-Approver": "fiona"}, &view); code != 200 ||
		!strings.Contains(string(view.Request.Action), `"tool":"pay_invoice"`) || !strings.Contains(string(view.Request.Action), `"amount":1500`) ||
		view.Request.Details != "Paying INV-2 as asked." || len(view.Request.EditSchema) == 0 || view.Request.GrantKey != "tool:pay_invoice" {
		t.Fatalf("the approval as finance reads it: %d %+v", code, view.Request)
	}
	s.Proc().Kill()
	s.Restart()
	approve(id, map[string]any{"approved": true, "comment": "due today"})
	s.Proc().Kill()
	s.Restart()
	if got := answerOf(payables, big.ID); !strings.HasPrefix(got, "done: paid invoice INV-2: 1500.00 EUR") {
		t.Errorf("approved over REST: the model answered %q", got)
	}

	t.Logf("phase: killed mid-call")
	// Approved, then a2aflow killed while the call runs in the MCP server:
	// the retried call carries the same key, and the server pays once.
	payments.SetHold(true)
	held := harness.Send(t, ctx, payables, "", "pay INV-3 2000")
	approve(pendingApproval(t, held), map[string]any{"approved": true})
	select {
	case <-payments.Started():
	case <-time.After(time.Minute):
		t.Fatal("the approved call did not reach the MCP server")
	}
	s.Proc().Kill()
	s.Restart()
	payments.SetHold(false)
	payments.Release()
	if got := answerOf(payables, held.ID); !strings.HasPrefix(got, "done: paid invoice INV-3: 2000.00 EUR") {
		t.Errorf("killed mid-call: the model answered %q", got)
	}

	t.Logf("phase: CLI reject")
	// Rejected with the CLI: the model reads why.
	rejected := harness.Send(t, ctx, payables, "", "pay INV-4 5000")
	out, err := harness.Command("reject", pendingApproval(t, rejected), "--as", "fiona", "--comment", "not before the audit", "--api", s.APIURL).CombinedOutput()
	if err != nil {
		t.Fatalf("a2aflow reject: %v\n%s", err, out)
	}
	if got := answerOf(payables, rejected.ID); !strings.Contains(got, "not approved") || !strings.Contains(got, "not before the audit") {
		t.Errorf("rejected: the model answered %q, want the reason", got)
	}

	t.Logf("phase: inbox edit")
	// Approved with edited arguments in the inbox.
	edited := harness.Send(t, ctx, payables, "", "pay INV-5 1800")
	inboxApproveEdited(t, s, pendingApproval(t, edited), `{"invoice": "INV-5", "amount": 900, "currency": "EUR"}`)
	if got := answerOf(payables, edited.ID); !strings.HasPrefix(got, "done: paid invoice INV-5: 900.00 EUR") {
		t.Errorf("approved with edited arguments: the model answered %q", got)
	}

	t.Logf("phase: decision part")
	// Anthropic's wire; approved by an A2A decision part.
	anth := client("payables-anthropic")
	byPart := harness.Send(t, ctx, anth, "", "pay INV-6 1200")
	decision := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": pendingApproval(t, byPart), "approved": true}))
	decision.TaskID = byPart.ID
	if _, err := anth.SendMessage(withHeader(ctx, "X-Approver", "fiona"), &a2a.SendMessageRequest{Message: decision}); err != nil {
		t.Fatalf("decision part: %v", err)
	}
	if got := answerOf(anth, byPart.ID); !strings.HasPrefix(got, "done: paid invoice INV-6: 1200.00 EUR") {
		t.Errorf("approved by a decision part (Anthropic): the model answered %q", got)
	}

	t.Logf("phase: expiry")
	// Nobody decides in time.
	hasty := client("payables-hasty")
	late := harness.Send(t, ctx, hasty, "", "pay INV-7 3000")
	pendingApproval(t, late)
	if got := answerOf(hasty, late.ID); !strings.Contains(got, "not approved") || !strings.Contains(got, "deadline") {
		t.Errorf("expired: the model answered %q", got)
	}

	t.Logf("phase: ledger")
	// The MCP server's ledger: each approved payment once, nothing else.
	raw, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	paid := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var p mcptest.Payment
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		paid[p.Invoice] = append(paid[p.Invoice], fmt.Sprintf("%.0f", p.Amount))
	}
	want := map[string][]string{"INV-1": {"99"}, "INV-2": {"1500"}, "INV-3": {"2000"}, "INV-5": {"900"}, "INV-6": {"1200"}}
	if fmt.Sprint(paid) != fmt.Sprint(want) {
		t.Errorf("the MCP server paid %v, want %v (each approved call once)", paid, want)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if !strings.Contains(strings.Join(model.paths, " "), "/v1/messages") || !strings.Contains(strings.Join(model.paths, " "), "/v1/chat/completions") {
		t.Errorf("the model was called at %v, want both wire formats", model.paths)
	}
}

// pendingApproval returns the approval the input-required task waits on.
func pendingApproval(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("task %s is %s, want waiting for an approval", task.ID, task.Status.State)
	}
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Data().(map[string]any); ok {
			if id, _ := d["approvalId"].(string); id != "" {
				return id
			}
		}
	}
	t.Fatalf("task %s waits on no approval: %+v", task.ID, task.Status.Message)
	return ""
}

// inboxApproveEdited approves id in the inbox in headless Chromium as
// fiona, with the arguments edited to args.
func inboxApproveEdited(t *testing.T, s *harness.Server, id, args string) {
	t.Helper()
	exe := chromium(t)
	page, closeBrowser := openInbox(t, context.Background(), exe, s.APIURL)
	defer closeBrowser()
	card := chromedp.CSS(`div.approval[data-id="` + id + `"]`)
	if err := chromedp.Do(page, chromedp.WaitVisible(card), chromedp.SetValue(chromedp.CSS("#approver"), "fiona")); err != nil {
		t.Fatalf("the pending approval is not in the inbox: %v", err)
	}
	action, err := chromedp.Run(page, chromedp.Text(card+" pre.action"))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(page,
		chromedp.SetValue(card+" textarea.arguments", args),
		chromedp.Click(card+" button.approve"),
		chromedp.WaitNotPresent("#pending "+card),
	)
	if err != nil {
		t.Fatalf("approve with edited arguments in the inbox: %v", err)
	}
	if !strings.Contains(action, `"tool": "pay_invoice"`) || !strings.Contains(action, `"reason"`) {
		t.Errorf("the inbox shows the call as %q, want the tool, its arguments and the reason", action)
	}
}
