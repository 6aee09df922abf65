package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// dollarPerCall prices the scripted provider's calls (100 input tokens
// each) at 1.00 USD.
var dollarPerCall = activities.Prices{{Provider: "scripted", Model: "scripted-1", Input: 10000}}

// addScript calls add n times (one turn each), then answers.
func addScript(n int) *scripted {
	return &scripted{answer: func(i int, req llm.Request) (llm.Response, error) {
		if i <= n {
			return llm.Response{StopReason: llm.StopToolUse,
				ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call-%d", i), Name: "add", Arguments: fmt.Sprintf(`{"a":%d,"b":1}`, i)}}}, nil
		}
		return text("done after " + req.Messages[len(req.Messages)-1].Text), nil
	}}
}

// budgetAgent runs the add loop with budget b.
func budgetAgent(b llm.Budget) *workflows.Agent {
	return &workflows.Agent{Name: "spender", Activities: []any{addTool}, Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(addTool).Run(ctx, t.Thread(), llm.WithUsage(t), llm.WithBudget(b))
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
}

// budgetAction reads a budget approval's action.
func budgetAction(t *testing.T, a workflows.Approval) llm.BudgetAction {
	t.Helper()
	var action llm.BudgetAction
	raw, _ := json.Marshal(a.Request.Action)
	if err := json.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	return action
}

// TestTaskBudget: a task whose spend reached its budget waits on an
// ordinary approval before its next LLM call, titled with what it spent
// and what approving allows; approved, the budget becomes the spend plus
// the increment and the loop goes on (and asks again when that is spent
// too); rejected, the task fails with a
// clear message and no further call; a budget that says fail fails at
// once, without an approval.
func TestTaskBudget(t *testing.T) {
	groups := []string{"finance"}
	for _, tc := range []struct {
		name      string
		budget    llm.Budget
		decide    func(env *workflowstest.Env)
		calls     int
		state     a2a.TaskState
		status    string
		approvals []string // the approvals' titles
	}{
		{name: "approved twice", budget: llm.Budget{USD: 2, Increment: 1, Request: workflows.ApprovalRequest{Groups: groups}},
			decide: func(env *workflowstest.Env) {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
				env.Decide(2*time.Hour, workflowstest.ApprovalID(2), workflowstest.Approve("fiona", "finance"))
			},
			calls: 4, state: a2a.TaskStateCompleted, status: "done after 4",
			approvals: []string{"spent 2.00 of 2.00 USD; allow up to 3.00?", "spent 3.00 of 3.00 USD; allow up to 4.00?"}},
		{name: "rejected", budget: llm.Budget{USD: 2, Request: workflows.ApprovalRequest{Groups: groups}},
			decide: func(env *workflowstest.Env) {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Reject("fiona", "enough", "finance"))
			},
			calls: 2, state: a2a.TaskStateFailed,
			status:    "the task's LLM budget is spent (spent 2.00 of 2.00 USD) and no more was allowed: approval task-1-approval-1 rejected by fiona: enough",
			approvals: []string{"spent 2.00 of 2.00 USD; allow up to 4.00?"}},
		{name: "fail", budget: llm.Budget{USD: 2, Fail: true},
			calls: 2, state: a2a.TaskStateFailed, status: "the task's LLM budget is spent: spent 2.00 of 2.00 USD"},
		{name: "not reached", budget: llm.Budget{USD: 10, Fail: true},
			calls: 4, state: a2a.TaskStateCompleted, status: "done after 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			provider := addScript(3)
			env := workflowstest.New(t, budgetAgent(tc.budget))
			env.RegisterActivity(&activities.LLM{Provider: provider, Prices: dollarPerCall})
			if tc.decide != nil {
				tc.decide(env)
			}
			var titles []string
			look := func(list []workflows.Approval) {
				for _, a := range list {
					if a.State != workflows.ApprovalPending {
						continue
					}
					titles = append(titles, a.Request.Title)
					if action := budgetAction(t, a); action.Budget != "task" || action.SpentUSD != action.BudgetUSD {
						t.Errorf("approval %s shows %+v, want the task's budget and its spend", a.ID, action)
					}
					if a.Request.Groups[0] != "finance" {
						t.Errorf("approval %s asks %v", a.ID, a.Request.Groups)
					}
				}
			}
			env.LookApprovals(30*time.Minute, look)
			env.LookApprovals(90*time.Minute, look)
			task := env.RunText("spender", "Add.")
			if got := len(provider.requests()); got != tc.calls {
				t.Errorf("the provider got %d calls, want %d", got, tc.calls)
			}
			if task.Status.State != tc.state || !strings.Contains(statusText(task), tc.status) {
				t.Errorf("the task is %s: %q, want %s: %q", task.Status.State, statusText(task), tc.state, tc.status)
			}
			if strings.Join(titles, "|") != strings.Join(tc.approvals, "|") {
				t.Errorf("approvals %q, want %q", titles, tc.approvals)
			}
		})
	}
}

// usageBook is the usage table of the tests: it records calls and sums a
// tenant's, as models.Store does.
type usageBook struct {
	mu   sync.Mutex
	rows []models.LLMUsage
}

func (b *usageBook) RecordLLMUsage(_ context.Context, u models.LLMUsage) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rows = append(b.rows, u)
	return nil
}

func (b *usageBook) UsageTotals(_ context.Context, q models.UsageQuery) ([]models.UsageTotal, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var total models.UsageTotal
	for _, r := range b.rows {
		if !q.OwnerSet || r.Owner == q.Owner {
			total.Calls++
			total.CostUSD += r.CostUSD
		}
	}
	return []models.UsageTotal{total}, nil
}

// TestTenantBudget: the CompleteChat activity refuses a call once the
// tenant's spend in the period reached its budget (earlier tasks count:
// the usage table is the tenant's); the task waits on an approval by the
// file's approvers, and once approved the activity lets this task spend
// the increment more. A tenant budget that says fail fails the task.
func TestTenantBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		budget    activities.TenantBudget
		calls     int
		state     a2a.TaskState
		status    string
		approvals []string
	}{
		{name: "approved", budget: activities.TenantBudget{Tenant: "*", Period: "day", USD: 3, Increment: 2, Approvers: []string{"ops"}},
			calls: 4, state: a2a.TaskStateCompleted, status: "done after 4",
			approvals: []string{"tenant (anonymous) spent 3.00 of 3.00 USD this day; allow up to 5.00?"}},
		{name: "fail", budget: activities.TenantBudget{Tenant: "*", Period: "month", USD: 3, Fail: true},
			calls: 2, state: a2a.TaskStateFailed, status: `the monthly LLM budget of tenant "" is spent: spent 3.00 of 3.00 USD`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// An earlier task of the tenant spent 1.00 today.
			book := &usageBook{rows: []models.LLMUsage{{TaskID: "task-0", CostUSD: 1}}}
			provider := addScript(3)
			env := workflowstest.New(t, budgetAgent(llm.Budget{}))
			env.RegisterActivity(&activities.LLM{Provider: provider, Prices: dollarPerCall, Usage: book, Spend: book,
				Budgets: activities.TenantBudgets{tc.budget}})
			if len(tc.approvals) > 0 {
				env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("olga", "ops"))
			}
			var titles []string
			env.LookApprovals(30*time.Minute, func(list []workflows.Approval) {
				for _, a := range list {
					titles = append(titles, a.Request.Title)
					if action := budgetAction(t, a); action.Budget != "tenant" || action.Period != tc.budget.Period || action.SpentUSD != 3 {
						t.Errorf("approval %s shows %+v, want the tenant's budget and its spend", a.ID, action)
					}
				}
			})
			task := env.RunText("spender", "Add.")
			if got := len(provider.requests()); got != tc.calls {
				t.Errorf("the provider got %d calls, want %d", got, tc.calls)
			}
			if task.Status.State != tc.state || !strings.Contains(statusText(task), tc.status) {
				t.Errorf("the task is %s: %q, want %s: %q", task.Status.State, statusText(task), tc.state, tc.status)
			}
			if strings.Join(titles, "|") != strings.Join(tc.approvals, "|") {
				t.Errorf("approvals %q, want %q", titles, tc.approvals)
			}
		})
	}
}

// perCall prices the scripted provider's calls (100 input tokens each) at
// usd each.
func perCall(usd float64) activities.Prices {
	return activities.Prices{{Provider: "scripted", Model: "scripted-1", Input: usd * 10000}}
}

// TestBudgetApprovalAllowsTheNextCall: what approving a spent budget
// allows. The new budget is the spend so far plus the increment, so the
// next call runs however much the last one cost (issue 47: one 10.00 USD
// call against a 1.00 USD budget asked ten times, each approval adding
// 1.00, before the loop moved); the title and the approval's action say
// it. The table decides exactly the approvals it expects: an approval
// more leaves the task waiting, and the test fails.
func TestBudgetApprovalAllowsTheNextCall(t *testing.T) {
	finance := []string{"finance"}
	type asked struct {
		title                       string
		spent, budget, inc, allowed float64
	}
	for _, tc := range []struct {
		name    string
		budget  llm.Budget
		tenant  *activities.TenantBudget
		before  float64 // the tenant's spend by earlier tasks
		cost    float64 // of each call
		tools   int     // the loop's tool calls, one a turn: tools+1 calls
		calls   int     // the provider's calls
		asked   []asked
		costUSD float64 // the task's spend at its end
	}{
		{name: "spend below the budget", budget: llm.Budget{USD: 5, Request: workflows.ApprovalRequest{Groups: finance}},
			cost: 1, tools: 2, calls: 3, costUSD: 3},
		{name: "spend at the budget", budget: llm.Budget{USD: 2, Increment: 1, Request: workflows.ApprovalRequest{Groups: finance}},
			cost: 1, tools: 3, calls: 4, costUSD: 4, asked: []asked{
				{"spent 2.00 of 2.00 USD; allow up to 3.00?", 2, 2, 1, 3},
				{"spent 3.00 of 3.00 USD; allow up to 4.00?", 3, 3, 1, 4}}},
		{name: "one call far above the budget", budget: llm.Budget{USD: 1, Request: workflows.ApprovalRequest{Groups: finance}},
			cost: 10, tools: 1, calls: 2, costUSD: 20, asked: []asked{
				{"spent 10.00 of 1.00 USD; allow up to 11.00?", 10, 1, 1, 11}}},
		{name: "an increment above the calls", budget: llm.Budget{USD: 1, Increment: 25, Request: workflows.ApprovalRequest{Groups: finance}},
			cost: 10, tools: 2, calls: 3, costUSD: 30, asked: []asked{
				{"spent 10.00 of 1.00 USD; allow up to 35.00?", 10, 1, 25, 35}}},
		{name: "an increment below the calls", budget: llm.Budget{USD: 1, Increment: 5, Request: workflows.ApprovalRequest{Groups: finance}},
			cost: 10, tools: 2, calls: 3, costUSD: 30, asked: []asked{
				{"spent 10.00 of 1.00 USD; allow up to 15.00?", 10, 1, 5, 15},
				{"spent 20.00 of 15.00 USD; allow up to 25.00?", 20, 15, 5, 25}}},
		{name: "tenant: one call far above the month's budget",
			tenant: &activities.TenantBudget{Tenant: "*", Period: "month", USD: 1, Approvers: finance},
			cost:   10, tools: 1, calls: 2, costUSD: 20, asked: []asked{
				{"tenant (anonymous) spent 10.00 of 1.00 USD this month; allow up to 11.00?", 10, 1, 1, 11}}},
		{name: "tenant: asked twice, the default increment the budget's own",
			tenant: &activities.TenantBudget{Tenant: "*", Period: "month", USD: 1, Approvers: finance},
			cost:   10, tools: 2, calls: 3, costUSD: 30, asked: []asked{
				{"tenant (anonymous) spent 10.00 of 1.00 USD this month; allow up to 11.00?", 10, 1, 1, 11},
				{"tenant (anonymous) spent 20.00 of 11.00 USD this month; allow up to 21.00?", 20, 11, 1, 21}}},
		{name: "tenant: earlier tasks far above the month's budget",
			tenant: &activities.TenantBudget{Tenant: "*", Period: "month", USD: 1, Increment: 12, Approvers: finance},
			before: 15, cost: 10, tools: 1, calls: 2, costUSD: 20, asked: []asked{
				{"tenant (anonymous) spent 15.00 of 1.00 USD this month; allow up to 27.00?", 15, 1, 12, 27}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			book := &usageBook{}
			if tc.before > 0 {
				book.rows = append(book.rows, models.LLMUsage{TaskID: "task-0", CostUSD: tc.before})
			}
			provider := addScript(tc.tools)
			env := workflowstest.New(t, budgetAgent(tc.budget))
			a := &activities.LLM{Provider: provider, Prices: perCall(tc.cost), Usage: book, Spend: book}
			if tc.tenant != nil {
				a.Budgets = activities.TenantBudgets{*tc.tenant}
			}
			env.RegisterActivity(a)
			var got []asked
			for i := range tc.asked {
				at := time.Duration(i+1) * time.Hour
				env.LookApprovals(at-time.Minute, func(list []workflows.Approval) {
					for _, ap := range list {
						if ap.ID == workflowstest.ApprovalID(i+1) {
							b := budgetAction(t, ap)
							got = append(got, asked{ap.Request.Title, b.SpentUSD, b.BudgetUSD, b.IncrementUSD, b.NewBudgetUSD})
						}
					}
				})
				env.Decide(at, workflowstest.ApprovalID(i+1), workflowstest.Approve("fiona", "finance"))
			}
			task := env.RunText("spender", "Add.")
			if diff := cmp.Diff(tc.asked, got, cmp.AllowUnexported(asked{})); diff != "" {
				t.Errorf("approvals (-want +got):\n%s", diff)
			}
			if got := len(provider.requests()); got != tc.calls {
				t.Errorf("the provider got %d calls, want %d", got, tc.calls)
			}
			if task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("the task is %s: %q, want completed", task.Status.State, statusText(task))
			}
			var u workflows.TokenUsage
			raw, _ := json.Marshal(usageOf(task))
			if err := json.Unmarshal(raw, &u); err != nil || u.Calls != int64(tc.calls) || u.CostUSD != tc.costUSD {
				t.Errorf("the task's usage is %s, want %d calls costing %.2f USD", raw, tc.calls, tc.costUSD)
			}
		})
	}
}

func TestPeriodStart(t *testing.T) {
	now := time.Date(2026, 11, 27, 13, 5, 0, 0, time.UTC) // a Friday
	for period, want := range map[string]time.Time{
		"day":   time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
		"week":  time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		"month": time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got := activities.PeriodStart(period, now); !got.Equal(want) {
			t.Errorf("%s starts %s, want %s", period, got, want)
		}
	}
	if got := activities.PeriodStart("week", time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a Sunday's week starts %s", got)
	}
}
