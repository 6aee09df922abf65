package llm_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// payablesPolicy is the rule as data: pay_invoice is allowed up to
// threshold, needs finance above it, and finance and the CFO above 50,000.
func payablesPolicy(threshold int) string {
	return fmt.Sprintf(`@id("pay") permit (principal, action == Action::"callTool", resource) when { context.tool == "pay_invoice" };
@id("finance") @groups("finance")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > %d };
@id("cfo") @groups("cfo")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 50000 };
`, threshold)
}

// policyStore is a real database of policies with the first version set.
func policyStore(t *testing.T, scope, text string) *models.Store {
	t.Helper()
	store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if text != "" {
		if _, err := policies.Compile(scope, text); err != nil {
			t.Fatal(err)
		}
		if _, err := store.AddPolicyVersion(context.Background(), scope, text, "root", "first"); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// policyAgent calls tools with the loop's options; pay_invoice has no gate
// of its own unless gate is set.
func policyAgent(p *payments, gate *llm.Gate, opts []llm.Option, extra ...llm.Tool) *workflows.Agent {
	var toolOpts []llm.ToolOption
	if gate != nil {
		toolOpts = append(toolOpts, llm.RequireApproval(*gate))
	}
	pay := llm.NewTool("pay_invoice", "Pays an invoice.", p.pay, toolOpts...)
	tools := append([]llm.Tool{pay}, extra...)
	acts := []any{}
	for _, tl := range tools {
		acts = append(acts, tl)
	}
	return &workflows.Agent{Name: "payables", Activities: acts, Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(tools...).Run(ctx, t.Thread(), opts...)
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
}

func newPolicyEnv(t *testing.T, store *models.Store, agent *workflows.Agent, provider llm.Provider) *workflowstest.Env {
	env := workflowstest.New(t, agent)
	env.RegisterActivity(&activities.LLM{Provider: provider})
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: workerenv.With(context.Background(),
		&workerenv.Env{DB: store.DB(), Policies: policies.NewEngine(store)})})
	return env
}

// approvalsOf returns every approval of the task.
func approvalsOf(t *testing.T, env *workflowstest.Env) []workflows.Approval {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryApprovals, wire.Caller{})
	if err != nil {
		t.Fatal(err)
	}
	var out []workflows.Approval
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPolicyGatedToolCalls: the policies in force judge each call: below
// the threshold it runs, above it finance decides, far above finance and
// then the CFO, each approval naming the version; a forbid refuses the
// call with its reason; the tool's own gate beats a policy's allow.
func TestPolicyGatedToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string // the server's policies besides payables'
		args string
		gate bool
		// keepPolicy keeps the payables policy with the gate (else the
		// agent's policies allow every call).
		keepPolicy bool
		decide     []workflowstest.Decision
		groups     [][]string // the approvals asked, in turn
		paid       bool
		answer     string
	}{
		{name: "allowed below the threshold", args: `{"invoice":"INV-1","amount":900}`, paid: true, answer: "paid INV-1: 900.00 EUR"},
		{name: "finance above it", args: `{"invoice":"INV-2","amount":2000}`, paid: true, answer: "paid INV-2: 2000.00 EUR",
			decide: []workflowstest.Decision{workflowstest.Approve("fiona", "finance")}, groups: [][]string{{"finance"}}},
		{name: "finance, then the CFO, far above", args: `{"invoice":"INV-3","amount":60000}`, paid: true, answer: "paid INV-3: 60000.00 EUR",
			decide: []workflowstest.Decision{workflowstest.Approve("fiona", "finance"), workflowstest.Approve("carl", "cfo")},
			groups: [][]string{{"finance"}, {"cfo"}}},
		{name: "the CFO rejects", args: `{"invoice":"INV-4","amount":60000}`,
			decide: []workflowstest.Decision{workflowstest.Approve("fiona", "finance"), workflowstest.Reject("carl", "too much", "cfo")},
			groups: [][]string{{"finance"}, {"cfo"}}, answer: "error: the call of pay_invoice was not approved"},
		{name: "a forbid wins", args: `{"invoice":"INV-5","amount":10}`,
			text:   `@reason("INV-5 is disputed") forbid (principal, action == Action::"callTool", resource) when { context.texts.hasTag("invoice") && context.texts.getTag("invoice") == "INV-5" };`,
			answer: "error: the call of pay_invoice is not allowed: INV-5 is disputed (approval policies, version 2)"},
		{name: "the tool's gate beats an allow", args: `{"invoice":"INV-6","amount":1500}`, gate: true, paid: true, answer: "paid INV-6: 1500.00 EUR",
			decide: []workflowstest.Decision{workflowstest.Approve("gina", "gatekeepers")}, groups: [][]string{{"gatekeepers"}}},
		{name: "the tool's gate after the policies' approvals", args: `{"invoice":"INV-7","amount":1500}`, gate: true, keepPolicy: true,
			paid: true, answer: "paid INV-7: 1500.00 EUR",
			decide: []workflowstest.Decision{workflowstest.Approve("fiona", "finance"), workflowstest.Approve("gina", "gatekeepers")},
			groups: [][]string{{"finance"}, {"gatekeepers"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := policyStore(t, "agent/payables", payablesPolicy(1000))
			if tc.text != "" {
				if _, err := store.AddPolicyVersion(context.Background(), "server", tc.text, "root", tc.name); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gate && !tc.keepPolicy {
				// The policies allow every call; the tool's own gate asks
				// for every call.
				if _, err := store.AddPolicyVersion(context.Background(), "agent/payables", `@id("pay") permit (principal, action, resource);`, "root", "lenient"); err != nil {
					t.Fatal(err)
				}
			}
			p := &payments{}
			var gate *llm.Gate
			if tc.gate {
				gate = &llm.Gate{Request: workflows.ApprovalRequest{Groups: []string{"gatekeepers"}}}
			}
			env := newPolicyEnv(t, store, policyAgent(p, gate, nil), payScript(tc.args))
			for i, d := range tc.decide {
				env.Decide(time.Duration(i+1)*time.Hour, workflowstest.ApprovalID(i+1), d)
			}
			task := env.RunText("payables", "Pay what is due.")
			if got := statusText(task); !strings.HasPrefix(got, "done: "+tc.answer) {
				t.Errorf("the model answered %q, want it to have read %q", got, tc.answer)
			}
			if (len(p.paid) == 1) != tc.paid {
				t.Errorf("paid %v, want paid: %v", p.paid, tc.paid)
			}
			list := approvalsOf(t, env)
			if len(list) != len(tc.groups) {
				t.Fatalf("%d approvals, want %d: %+v", len(list), len(tc.groups), list)
			}
			for i, a := range list {
				if fmt.Sprint(a.Request.Groups) != fmt.Sprint(tc.groups[i]) || a.Request.Policy == nil || a.Request.Policy.Version == 0 {
					t.Errorf("approval %d: groups %v, policy %+v; want %v under a named version", i+1, a.Request.Groups, a.Request.Policy, tc.groups[i])
				}
			}
		})
	}
}

// TestPolicyVersionChangesMidTask: a call waiting on an approval asked
// under version 1 keeps it when the threshold is raised to 5,000 (version
// 2); the task's next call is judged by version 2 and runs without asking.
func TestPolicyVersionChangesMidTask(t *testing.T) {
	store := policyStore(t, "agent/payables", payablesPolicy(1000))
	p := &payments{}
	env := newPolicyEnv(t, store, policyAgent(p, nil, nil), payScript(`{"invoice":"INV-1","amount":3000}`, `{"invoice":"INV-2","amount":3000}`))
	env.RegisterDelayedCallback(func() {
		if _, err := store.AddPolicyVersion(context.Background(), "agent/payables", payablesPolicy(5000), "root", "threshold 5000"); err != nil {
			t.Error(err)
		}
	}, 30*time.Minute)
	env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
	task := env.RunText("payables", "Pay what is due.")
	if got := statusText(task); !strings.HasPrefix(got, "done: paid INV-2: 3000.00 EUR") {
		t.Errorf("the model answered %q", got)
	}
	list := approvalsOf(t, env)
	if len(list) != 1 || list[0].Request.Policy == nil || list[0].Request.Policy.Version != 1 || !list[0].Approved() {
		t.Fatalf("approvals %+v, want one, approved, asked under version 1", list)
	}
	if len(p.paid) != 2 {
		t.Errorf("paid %v, want both", p.paid)
	}
	// The engine kept both requests it judged, for policies try, each with
	// its version (written in the background).
	var kept []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rs, err := store.PolicyRequests(context.Background(), time.Now().Add(-time.Hour), "", false, 0)
		if err != nil {
			t.Fatal(err)
		}
		kept = nil
		for _, r := range rs {
			kept = append(kept, fmt.Sprintf("%s %s@%d", r.Name, r.Effect, r.Version))
		}
		if len(kept) == 2 {
			break
		}
	}
	if strings.Join(kept, ", ") != "pay_invoice approve@1, pay_invoice allow@2" {
		t.Errorf("the requests kept: %v", kept)
	}
}

// TestSafeByDefault: with a safe-by-default loop, a read-only tool a
// policy allows runs; a call no policy allows waits for the loop's
// approvers; a store that does not answer makes every call wait, none
// run.
func TestSafeByDefault(t *testing.T) {
	lookup := llm.NewTool("list_invoices", "Lists invoices.", func(context.Context, struct{}) (string, error) { return "INV-1, INV-2", nil },
		llm.Annotate(llm.ToolAnnotations{ReadOnly: true}))
	readOnly := `@id("read-only") permit (principal, action == Action::"callTool", resource) when { context.annotations.readOnly };`
	script := func(tool, args string) *scripted {
		return &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
			if n == 1 {
				return llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{{ID: "c1", Name: tool, Arguments: args}}}, nil
			}
			return llm.Response{Text: "done: " + req.Messages[len(req.Messages)-1].Text, StopReason: llm.StopEnd}, nil
		}}
	}
	for _, tc := range []struct {
		name, tool, args string
		closeStore       bool
		// server is the handler's default (WithDefaultSafeByDefault), own
		// the loop's WithSafeByDefault; neither: ops, as the loop's.
		server, own []string
		groups      []string // the approval asked; nil: none
		answer      string
	}{
		{name: "a read-only tool passes", tool: "list_invoices", args: `{}`, answer: "INV-1, INV-2"},
		{name: "an unannotated tool waits", tool: "pay_invoice", args: `{"invoice":"INV-1","amount":5}`, groups: []string{"ops"}, answer: "paid INV-1"},
		{name: "no store: the read-only tool waits too", tool: "list_invoices", args: `{}`, closeStore: true, groups: []string{"ops"}, answer: "INV-1, INV-2"},
		{name: "the server's default: an unannotated tool waits", tool: "pay_invoice", args: `{"invoice":"INV-1","amount":5}`, server: []string{"ops"}, groups: []string{"ops"}, answer: "paid INV-1"},
		{name: "the server's default: a read-only tool passes", tool: "list_invoices", args: `{}`, server: []string{"ops"}, answer: "INV-1, INV-2"},
		{name: "the loop's own beats the server's", tool: "pay_invoice", args: `{"invoice":"INV-1","amount":5}`, server: []string{"auditors"}, own: []string{"ops"}, groups: []string{"ops"}, answer: "paid INV-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := policyStore(t, "server", readOnly)
			p := &payments{}
			var opts []llm.Option
			switch {
			case tc.own != nil:
				opts = append(opts, llm.WithSafeByDefault(tc.own...))
			case tc.server == nil:
				opts = append(opts, llm.WithSafeByDefault("ops"))
			}
			agent := policyAgent(p, nil, opts, lookup)
			if tc.server != nil {
				handle := agent.Handle
				agent.Handle = func(ctx workflow.Context, t *workflows.Task) error {
					return handle(llm.WithDefaultSafeByDefault(ctx, tc.server...), t)
				}
			}
			env := newPolicyEnv(t, store, agent, script(tc.tool, tc.args))
			if tc.closeStore {
				_ = store.Close()
			}
			env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("olga", "ops"))
			task := env.RunText("payables", "Go.")
			if got := statusText(task); !strings.HasPrefix(got, "done: "+tc.answer) {
				t.Errorf("the model answered %q, want it to have read %q", got, tc.answer)
			}
			list := approvalsOf(t, env)
			if tc.groups == nil {
				if len(list) != 0 {
					t.Errorf("approvals %+v, want none", list)
				}
				return
			}
			if len(list) != 1 || fmt.Sprint(list[0].Request.Groups) != fmt.Sprint(tc.groups) {
				t.Fatalf("approvals %+v, want one of %v", list, tc.groups)
			}
			if want := map[bool]string{true: "failed", false: "none"}[tc.closeStore]; list[0].Request.Policy == nil || list[0].Request.Policy.Effect != want {
				t.Errorf("the approval's policy record %+v, want effect %s", list[0].Request.Policy, want)
			}
		})
	}
}
