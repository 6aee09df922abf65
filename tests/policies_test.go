package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// policiesConfig: payables pays with the MCP server's pay_invoice and has
// no gate of its own (the policies decide); clerk is safe by default, with
// the server's read-only and destructive tools.
const policiesConfig = `
[[mcp-servers]]
name = "payments"
url = %q

[[agents]]
name = "payables"
system-prompt = "You pay the invoices the user names."
provider = "openai"
mcp-servers = ["payments"]
mcp-tools = ["pay_invoice"]

[[agents]]
name = "clerk"
system-prompt = "You keep the books."
provider = "openai"
mcp-servers = ["payments"]
mcp-tools = ["list_invoices", "void_invoice"]
safe-by-default = ["ops"]
`

// payablesCedar is the rule: pay_invoice allowed up to threshold,
// finance above, finance and the CFO above 50,000.
func payablesCedar(threshold int) string {
	return fmt.Sprintf(`@id("pay")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" };

@id("finance")
@groups("finance")
@title("Pay an invoice over %d?")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > %d };

@id("cfo")
@groups("cfo")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 50000 };
`, threshold, threshold)
}

// fakePolicyLLM is an OpenAI-compatible model that makes the calls a user
// message names, one per turn: "pay INV-2 2000 and INV-3 3000", "list",
// "void INV-1"; then it answers "done: " and the last tool result.
func fakePolicyLLM(t *testing.T) *httptest.Server {
	pay := regexp.MustCompile(`(INV-\d+) (\d+)`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(raw, &req)
		user, done, last := "", 0, ""
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				user, done = fmt.Sprint(m.Content), 0
			case "tool":
				done, last = done+1, fmt.Sprint(m.Content)
			}
		}
		var calls []map[string]any
		switch {
		case strings.HasPrefix(user, "pay "):
			for _, m := range pay.FindAllStringSubmatch(user, -1) {
				var amount float64
				fmt.Sscan(m[2], &amount)
				calls = append(calls, map[string]any{"name": "pay_invoice", "args": map[string]any{"invoice": m[1], "amount": amount, "currency": "EUR"}})
			}
		case user == "list":
			calls = append(calls, map[string]any{"name": "list_invoices", "args": map[string]any{}})
		case strings.HasPrefix(user, "void "):
			calls = append(calls, map[string]any{"name": "void_invoice", "args": map[string]any{"invoice": strings.TrimPrefix(user, "void ")}})
		}
		msg := map[string]any{"role": "assistant", "content": "done: " + last, "refusal": nil}
		finish := "stop"
		if done < len(calls) {
			args, _ := json.Marshal(calls[done]["args"])
			msg["content"] = "Doing it."
			msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", done), "type": "function",
				"function": map[string]any{"name": calls[done]["name"], "arguments": string(args)}}}
			finish = "tool_calls"
		}
		body, _ := json.Marshal(msg)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-policies","object":"chat.completion","created":1700000000,"model":%q,
			"choices":[{"index":0,"finish_reason":%q,"logprobs":null,"message":%s}],
			"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, req.Model, finish, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// policyDecisions returns the decisions the task's policy gates recorded
// (the DecidePolicy markers of its history), in order.
func policyDecisions(t *testing.T, s *harness.Server, id a2a.TaskID) []wire.PolicyDecision {
	t.Helper()
	tc := dialTemporal(t, s)
	iter := tc.GetWorkflowHistory(context.Background(), string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []wire.PolicyDecision
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetDetails()["data"] == nil || m.GetDetails()["result"] == nil {
			continue
		}
		var data struct{ ActivityType string }
		if err := json.Unmarshal(m.GetDetails()["data"].GetPayloads()[0].GetData(), &data); err != nil || data.ActivityType != wire.ActivityDecidePolicy {
			continue
		}
		var d wire.PolicyDecision
		if err := json.Unmarshal(m.GetDetails()["result"].GetPayloads()[0].GetData(), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestPolicies is issue 46's test on a real serve: pay_invoice allowed
// below 1,000, finance above, finance and then the CFO above 50,000, set
// with the CLI; the threshold raised to 5,000 with the CLI while a task
// waits mid-turn, a kill -9 between the change and the call: the pending
// approval keeps version 1, the task's next call obeys version 2, both
// named in the records; the history replays against the binary. Then a
// safe-by-default agent: a read-only MCP tool a server policy allows
// passes, a destructive one waits for ops, and with a policy that no
// longer compiles in the store, every call waits: none passes.
func TestPolicies(t *testing.T) {
	model := fakePolicyLLM(t)
	payments := &mcptest.Payments{}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	dir := t.TempDir()
	config := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(policiesConfig, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance;carl:cfo;olga:ops")
	ctx := harness.Context(t)
	cli := func(wantExit int, args ...string) string {
		t.Helper()
		out, err := harness.Command(append(args, "--api", s.APIURL, "--as", "root")...).CombinedOutput()
		if code := exitCode(err); code != wantExit {
			t.Fatalf("a2aflow %s: exit %d (%v), want %d:\n%s", strings.Join(args, " "), code, err, wantExit, out)
		}
		return string(out)
	}
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	decide := func(id, approver string) {
		t.Helper()
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": approver}, map[string]any{"approved": true}, nil); code != 200 {
			t.Fatalf("%s's decision on %s: HTTP %d", approver, id, code)
		}
	}
	type approvalView struct {
		Groups  []string `json:"groups"`
		State   string   `json:"state"`
		Request struct {
			Title  string                  `json:"title"`
			Policy *workflows.PolicyRecord `json:"policy"`
		} `json:"request"`
	}
	approval := func(id string) approvalView {
		t.Helper()
		var v approvalView
		if code := getJSONWith(t, s.APIURL+"/approvals/"+id, map[string]string{"X-Approver": "fiona"}, &v); code != 200 {
			t.Fatalf("approval %s: HTTP %d", id, code)
		}
		return v
	}
	payables, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")

	t.Logf("phase: the policies, set and checked with the CLI")
	// A policy that does not validate: the line it starts on; one that
	// does not parse: the line and column of the fault.
	typo := "@id(\"ok\") permit (principal, action, resource);\n\npermit (principal, action == Action::\"callTool\", resource)\nwhen { context.tool == 1 };"
	if out := cli(1, "policies", "validate", "agent/payables", file("typo.cedar", typo)); !strings.Contains(out, "typo.cedar:line 3: the types Long and String are not compatible") {
		t.Errorf("validate:\n%s", out)
	}
	if out := cli(1, "policies", "set", "agent/payables", file("broken.cedar", "permit (principal, action, resource)\nwhen { context.tool == };")); !strings.Contains(out, "line 2:") {
		t.Errorf("set refused without the line:\n%s", out)
	}
	if out := cli(0, "policies", "set", "agent/payables", file("v1.cedar", payablesCedar(1000)), "--reason", "finance approves payments over 1,000"); !strings.Contains(out, "agent/payables: version 1") {
		t.Fatalf("set: %s", out)
	}

	t.Logf("phase: below the threshold, no one is asked")
	small := harness.Send(t, ctx, payables, "", "pay INV-1 900")
	if got := harness.StatusText(small); small.Status.State != a2a.TaskStateCompleted || !strings.HasPrefix(got, "done: paid invoice INV-1: 900.00 EUR") {
		t.Fatalf("a small payment: %s %q", small.Status.State, got)
	}

	t.Logf("phase: above it, finance is asked under version 1")
	two := harness.Send(t, ctx, payables, "", "pay INV-2 2000 and INV-3 3000")
	first := pendingApproval(t, two)
	if v := approval(first); v.Request.Policy == nil || v.Request.Policy.Version != 1 || strings.Join(v.Groups, ",") != "finance" ||
		v.Request.Title != "Pay an invoice over 1000?" {
		t.Fatalf("the approval of INV-2: %+v (policy %+v)", v, v.Request.Policy)
	}

	t.Logf("phase: the threshold raised to 5,000 with the CLI, then kill -9")
	if out := cli(0, "policies", "set", "agent/payables", file("v2.cedar", payablesCedar(5000)), "--reason", "finance approves payments over 5,000"); !strings.Contains(out, "version 2") {
		t.Fatalf("set: %s", out)
	}
	s.Proc().Kill()
	s.Restart()
	decide(first, "fiona")
	done := waitState(t, ctx, payables, two.ID, a2a.TaskStateCompleted)
	if got := harness.StatusText(done); !strings.HasPrefix(got, "done: paid invoice INV-3: 3000.00 EUR") {
		t.Fatalf("after the change: %q", got)
	}
	if v := approval(first); v.State != workflows.ApprovalApproved || v.Request.Policy.Version != 1 {
		t.Errorf("the first approval after the change: %+v, want approved under version 1", v)
	}
	if code := getJSONWith(t, s.APIURL+"/approvals/"+string(two.ID)+"-approval-2", map[string]string{"X-Approver": "fiona"}, nil); code != 404 {
		t.Errorf("a second approval of the task: HTTP %d, want none (404)", code)
	}
	// The task's timeline names the version on its approval too.
	var page struct {
		Entries []struct {
			Kind     string `json:"kind"`
			Approval *struct {
				ID            string   `json:"id"`
				PolicyVersion int64    `json:"policyVersion"`
				Policies      []string `json:"policies"`
			} `json:"approval"`
		} `json:"entries"`
	}
	if code := getJSONWith(t, s.APIURL+"/agents/payables/tasks/"+string(two.ID)+"/timeline", nil, &page); code != 200 {
		t.Fatalf("the timeline: HTTP %d", code)
	}
	var named []string
	for _, e := range page.Entries {
		if e.Kind == "approval" && e.Approval != nil {
			named = append(named, fmt.Sprintf("%s v%d %v", e.Approval.ID, e.Approval.PolicyVersion, e.Approval.Policies))
		}
	}
	if want := first + " v1 [agent/payables#pay agent/payables#finance]"; len(named) == 0 || named[len(named)-1] != want {
		t.Errorf("the timeline's approvals %q, want the last %q", named, want)
	}
	var versions []string
	for _, d := range policyDecisions(t, s, two.ID) {
		versions = append(versions, fmt.Sprintf("%s@%d", d.Effect, d.Version))
	}
	if got := strings.Join(versions, " "); got != "approve@1 allow@2" {
		t.Errorf("the task's policy decisions %q, want INV-2 under version 1 (approve), INV-3 under version 2 (allow)", got)
	}

	t.Logf("phase: far above, finance and then the CFO")
	big := harness.Send(t, ctx, payables, "", "pay INV-4 60000")
	id := pendingApproval(t, big)
	if v := approval(id); strings.Join(v.Groups, ",") != "finance" || v.Request.Policy.Version != 2 {
		t.Fatalf("the first approval of INV-4: %+v", v)
	}
	decide(id, "fiona")
	cfo := pendingApproval(t, waitState(t, ctx, payables, big.ID, a2a.TaskStateInputRequired))
	if cfo == id || strings.Join(approval(cfo).Groups, ",") != "cfo" {
		t.Fatalf("the second approval of INV-4: %s %+v", cfo, approval(cfo))
	}
	decide(cfo, "carl")
	if got := harness.StatusText(waitState(t, ctx, payables, big.ID, a2a.TaskStateCompleted)); !strings.HasPrefix(got, "done: paid invoice INV-4") {
		t.Errorf("INV-4: %q", got)
	}

	t.Logf("phase: history and diff with the CLI; the histories replay")
	hist := cli(0, "policies", "history", "agent/payables")
	if !strings.Contains(hist, "over 5,000") || !strings.Contains(hist, "over 1,000") || strings.Index(hist, "over 5,000") > strings.Index(hist, "over 1,000") {
		t.Errorf("history, the latest first:\n%s", hist)
	}
	if diff := cli(0, "policies", "diff", "2"); !strings.Contains(diff, "-when { context.tool == \"pay_invoice\" && context.numbers.hasTag(\"amount\") && context.numbers.getTag(\"amount\") > 1000 };") ||
		!strings.Contains(diff, "+when { context.tool == \"pay_invoice\" && context.numbers.hasTag(\"amount\") && context.numbers.getTag(\"amount\") > 5000 };") {
		t.Errorf("diff 2:\n%s", diff)
	}
	out, err := harness.Command("replay", "--task", string(two.ID), "--task", string(big.ID), "--config", config,
		"--temporal-addr", s.TemporalAddr, "--data-dir", s.DataDir, "--log-level", "warn").CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if paid := len(payments.Paid()); paid != 4 {
		t.Errorf("%d payments, want 4: %+v", paid, payments.Paid())
	}

	t.Logf("phase: policies try, the threshold lowered to 500 over the calls so far")
	var tried policies.TryResult
	if err := json.Unmarshal([]byte(cli(0, "policies", "try", "agent/payables", file("v3.cedar", payablesCedar(500)), "--since", "1h", "--json")), &tried); err != nil {
		t.Fatal(err)
	}
	var stopped []string
	for _, g := range tried.Groups {
		for _, e := range g.Examples {
			stopped = append(stopped, fmt.Sprintf("%s %s->%s v%d", e.TaskID, g.From, g.To, e.Version))
		}
	}
	want := []string{fmt.Sprintf("%s allow->approve(finance) v1", small.ID), fmt.Sprintf("%s allow->approve(finance) v2", two.ID)}
	if tried.Requests != 4 || tried.StoppedNow != 2 || tried.AllowedNow != 0 || strings.Join(stopped, "; ") != strings.Join(want, "; ") {
		t.Errorf("try: %d requests, %d stopped, %d allowed now: %v; want 4, exactly %v", tried.Requests, tried.StoppedNow, tried.AllowedNow, stopped, want)
	}
	if out := cli(0, "policies", "try", "agent/payables", file("v3.cedar", payablesCedar(500)), "--since", "1h"); !strings.Contains(out, "4 requests since") ||
		!strings.Contains(out, "2 would change (0 allowed now, 2 stopped now)") {
		t.Errorf("try, as a table:\n%s", out)
	}

	t.Logf("phase: safe by default")
	clerk, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/clerk")
	cli(0, "policies", "set", "server", file("server.cedar", `@id("read-only")
permit (principal, action == Action::"callTool", resource) when { context.annotations.readOnly };
`), "--reason", "read-only tools need no one")
	if got := harness.StatusText(harness.Send(t, ctx, clerk, "", "list")); !strings.HasPrefix(got, "done: paid: [INV-1") {
		t.Errorf("a read-only tool under safe by default: %q", got)
	}
	void := harness.Send(t, ctx, clerk, "", "void INV-1")
	if v := approval(pendingApproval(t, void)); strings.Join(v.Groups, ",") != "ops" || v.Request.Policy.Effect != wire.PolicyNone {
		t.Errorf("a destructive tool under safe by default: %+v", v)
	}

	t.Logf("phase: a policy that no longer compiles: every call waits")
	store, err := models.Open(filepath.Join(s.DataDir, "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.AddPolicyVersion(ctx, "server", "permit (", "intruder", "behind the API's back"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ agent, text string }{{"clerk", "list"}, {"payables", "pay INV-9 5"}} {
		client, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+c.agent)
		task := harness.Send(t, ctx, client, "", c.text)
		v := approval(pendingApproval(t, task))
		if v.Request.Policy == nil || v.Request.Policy.Effect != wire.PolicyFailed {
			t.Errorf("%s %q with a broken store: %+v, want it waiting for a person", c.agent, c.text, v)
		}
	}
	if paid := len(payments.Paid()); paid != 4 {
		t.Errorf("%d payments after the store broke, want still 4", paid)
	}
}

// exitCode is a command's exit status from its error (0 for nil, -1 when
// it did not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
