package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// payables is the rule: pay_invoice is allowed up to 1,000, needs
// finance above, and finance and the CFO above 50,000.
const payables = `@id("small")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" };

@id("finance")
@groups("finance")
@deadline("48h")
@title("Pay an invoice over 1,000?")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 1000 };

@id("cfo")
@groups("cfo")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 50000 };
`

func mustCompile(t *testing.T, scope, text string) *Document {
	t.Helper()
	d, err := Compile(scope, text)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func payCall(amount string) wire.PolicyInput {
	return wire.PolicyInput{Action: wire.PolicyCallTool, Caller: "alice", Tenant: "alice", Agent: "payables",
		TaskID: "t1", ContextID: "c1", Tool: "pay_invoice", Source: "mcp:payments",
		Arguments: []byte(`{"invoice": "INV-1", "amount": ` + amount + `}`)}
}

// TestDecidePayables: the threshold rule of the issue, a fraction rounded
// up, and a tool no policy names left to its gate.
func TestDecidePayables(t *testing.T) {
	docs := []*Document{mustCompile(t, "agent/payables", payables)}
	type got struct {
		Effect   string
		Policies []string
		Groups   [][]string
	}
	for _, tc := range []struct {
		name string
		in   wire.PolicyInput
		want got
	}{
		{"below", payCall("900"), got{wire.PolicyAllow, []string{"agent/payables#small"}, nil}},
		{"at the threshold", payCall("1000"), got{wire.PolicyAllow, []string{"agent/payables#small"}, nil}},
		{"a fraction above", payCall("1000.01"), got{wire.PolicyApprove, []string{"agent/payables#small", "agent/payables#finance"}, [][]string{{"finance"}}}},
		{"above", payCall("2000"), got{wire.PolicyApprove, []string{"agent/payables#small", "agent/payables#finance"}, [][]string{{"finance"}}}},
		{"far above", payCall("60000"), got{wire.PolicyApprove,
			[]string{"agent/payables#small", "agent/payables#finance", "agent/payables#cfo"}, [][]string{{"finance"}, {"cfo"}}}},
		{"another tool", func() wire.PolicyInput { in := payCall("5"); in.Tool = "list_invoices"; return in }(), got{wire.PolicyNone, nil, nil}},
		{"another agent", func() wire.PolicyInput { in := payCall("60000"); in.Agent = "other"; return in }(), got{wire.PolicyNone, nil, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(docs, 3, tc.in)
			g := got{Effect: d.Effect, Policies: d.Policies}
			for _, a := range d.Approvals {
				g.Groups = append(g.Groups, a.Groups)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if d.Version != 3 {
				t.Errorf("version %d, want 3", d.Version)
			}
		})
	}
	d := Decide(docs, 3, payCall("2000"))
	want := wire.PolicyApproval{Policy: "agent/payables#finance", Groups: []string{"finance"}, Deadline: 48 * time.Hour, Title: "Pay an invoice over 1,000?"}
	if diff := cmp.Diff([]wire.PolicyApproval{want}, d.Approvals); diff != "" {
		t.Errorf("the approval (-want +got):\n%s", diff)
	}
}

// TestDecideLayers: any forbid wins, whatever layer allows; a
// require-approval beats an allow; layers reach only their own requests;
// the server's approvals come first.
func TestDecideLayers(t *testing.T) {
	docs := []*Document{
		mustCompile(t, "server", `@id("no-destructive-at-night") @reason("destructive tools are off")
forbid (principal, action == Action::"callTool", resource) when { context.annotations.destructive };
@id("audit") @groups("audit")
permit (principal, action == Action::"callTool", resource) when { context.source like "mcp:*" && context.flags.hasTag("urgent") && context.flags.getTag("urgent") };`),
		mustCompile(t, "tenant/acme", `@id("acme-ro") permit (principal, action == Action::"callTool", resource) when { context.annotations.readOnly };`),
		mustCompile(t, "agent/payables", payables),
		mustCompile(t, "tool/drop_table", `@id("ok") permit (principal, action, resource);`),
		mustCompile(t, "agent/steps", `@id("big") @groups("board") @quorum("2")
permit (principal, action == Action::"approveStep", resource) when { context.step == "merger" };
@id("pass") permit (principal, action == Action::"approveStep", resource) when { context.step == "coffee" };
@id("never") @reason("not this one") forbid (principal, action == Action::"approveStep", resource) when { context.title like "*bribe*" };`),
	}
	in := func(mod func(*wire.PolicyInput)) wire.PolicyInput {
		i := payCall("10")
		mod(&i)
		return i
	}
	for _, tc := range []struct {
		name                   string
		in                     wire.PolicyInput
		effect, reason, policy string
	}{
		{"a forbid beats a tool layer's permit", in(func(i *wire.PolicyInput) {
			i.Tool, i.Annotations.Destructive = "drop_table", true
		}), wire.PolicyDeny, "destructive tools are off", "server#no-destructive-at-night"},
		{"the tool layer allows its tool", in(func(i *wire.PolicyInput) { i.Tool = "drop_table" }), wire.PolicyAllow, "", "tool/drop_table#ok"},
		{"a tenant's permit is the tenant's", in(func(i *wire.PolicyInput) {
			i.Tool, i.Annotations.ReadOnly = "search", true
		}), wire.PolicyNone, "", ""},
		{"its own tenant", in(func(i *wire.PolicyInput) {
			i.Tool, i.Annotations.ReadOnly, i.Tenant = "search", true, "acme"
		}), wire.PolicyAllow, "", "tenant/acme#acme-ro"},
		{"approval beats allow, server first", in(func(i *wire.PolicyInput) {
			i.Arguments = []byte(`{"amount": 2000, "urgent": true}`)
		}), wire.PolicyApprove, "", "server#audit"},
		{"a step needs the board", wire.PolicyInput{Action: wire.PolicyApproveStep, Agent: "steps", Step: "merger", Title: "Merge?"},
			wire.PolicyApprove, "", "agent/steps#big"},
		{"a step passes", wire.PolicyInput{Action: wire.PolicyApproveStep, Agent: "steps", Step: "coffee"}, wire.PolicyAllow, "", "agent/steps#pass"},
		{"a step is refused", wire.PolicyInput{Action: wire.PolicyApproveStep, Agent: "steps", Step: "coffee", Title: "a small bribe"},
			wire.PolicyDeny, "not this one", "agent/steps#never"},
		{"the tool layer never sees a step", wire.PolicyInput{Action: wire.PolicyApproveStep, Agent: "x", Step: "drop_table"}, wire.PolicyNone, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(docs, 9, tc.in)
			first := ""
			if len(d.Policies) > 0 {
				first = d.Policies[0]
			}
			if d.Effect != tc.effect || d.Reason != tc.reason || first != tc.policy {
				t.Errorf("got %s %q by %v, want %s %q by %s", d.Effect, d.Reason, d.Policies, tc.effect, tc.reason, tc.policy)
			}
		})
	}
	d := Decide(docs, 9, wire.PolicyInput{Action: wire.PolicyApproveStep, Agent: "steps", Step: "merger"})
	if len(d.Approvals) != 1 || d.Approvals[0].Quorum != 2 {
		t.Errorf("the board's quorum: %+v", d.Approvals)
	}
}

// TestCompileRefuses: a text that does not parse or validate is refused
// with the line and reason of each problem.
func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, scope, text string
		want              []Problem
	}{
		{"syntax", "server", "permit (principal, action, resource)\nwhen { 1 + };", []Problem{{Line: 2, Column: 13}}},
		{"unknown attribute", "server", "permit (principal, action == Action::\"callTool\", resource)\nwhen { context.annotations.destructiv };",
			[]Problem{{Line: 1, Message: "attribute `destructiv` in context for Action::\"callTool\" not found"}}},
		{"unguarded tag", "agent/a", "\n\npermit (principal, action == Action::\"callTool\", resource) when { context.numbers.getTag(\"amount\") > 5 };",
			[]Problem{{Line: 3, Message: "unable to guarantee safety of access to tag `\"amount\"` on entity type `Numbers`"}}},
		{"unknown action", "server", "permit (principal, action == Action::\"pay\", resource);",
			[]Problem{{Line: 1}, {Line: 1, Message: "unable to find an applicable action given the policy scope constraints"}}},
		{"groups on a forbid", "server", "@groups(\"x\") forbid (principal, action, resource);",
			[]Problem{{Line: 1, Message: "@groups on a forbid: a forbid denies; a permit with @groups requires an approval"}}},
		{"bad annotations", "server", "@groups(\"\") @quorum(\"many\") @deadline(\"soon\") @colour(\"red\")\npermit (principal, action, resource);",
			[]Problem{{Line: 1}, {Line: 1}, {Line: 1}, {Line: 1}}},
		{"escalation without groups", "server", "@groups(\"a\") @deadline(\"1h\") @on_deadline(\"escalate\") permit (principal, action, resource);",
			[]Problem{{Line: 1, Message: "@on_deadline(\"escalate\") needs @escalate_to"}}},
		{"duplicate id", "server", "@id(\"a\") permit (principal, action, resource);\n@id(\"a\") permit (principal, action, resource);",
			[]Problem{{Line: 2, Message: "the @id of the policy of line 1 is taken"}}},
		{"bad scope", "team/x", "", []Problem{{Message: "scope \"team/x\": want server, tenant/NAME, agent/NAME or tool/NAME"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.scope, tc.text)
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %v, want an *InvalidError", err)
			}
			got := inv.Problems
			// Messages the test leaves empty are the parser's or the
			// validator's own words: only where they point is checked.
			for i := range got {
				if i < len(tc.want) && tc.want[i].Message == "" {
					got[i].Message = ""
				}
				if i < len(tc.want) && tc.want[i].Column == 0 {
					got[i].Column = 0
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n(error: %v)", diff, err)
			}
		})
	}
	if d, err := Compile("tool/pay_invoice", ""); err != nil || len(d.Policies) != 0 {
		t.Errorf("an empty text: %v, %v", d, err)
	}
}

// TestEngine: the engine follows the store's latest version, tells "none
// in force" from a decision, and fails toward the person when the store
// does not answer.
func TestEngine(t *testing.T) {
	store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := NewEngine(store)
	if d := e.DecidePolicy(ctx, payCall("2000")); d.Effect != wire.PolicyNone || d.Version != 0 {
		t.Fatalf("no policies: %+v", d)
	}
	if _, err := store.AddPolicyVersion(ctx, "agent/payables", payables, "root", "first"); err != nil {
		t.Fatal(err)
	}
	if d := e.DecidePolicy(ctx, payCall("2000")); d.Effect != wire.PolicyApprove || d.Version != 1 {
		t.Fatalf("version 1, 2000: %+v", d)
	}
	raised := `@id("finance") @groups("finance")
permit (principal, action == Action::"callTool", resource)
when { context.tool == "pay_invoice" && context.numbers.hasTag("amount") && context.numbers.getTag("amount") > 5000 };
@id("small") permit (principal, action == Action::"callTool", resource) when { context.tool == "pay_invoice" };`
	if _, err := store.AddPolicyVersion(ctx, "agent/payables", raised, "root", "threshold 5000"); err != nil {
		t.Fatal(err)
	}
	if d := e.DecidePolicy(ctx, payCall("2000")); d.Effect != wire.PolicyAllow || d.Version != 2 {
		t.Fatalf("version 2, 2000: %+v", d)
	}
	// A stored text that no longer compiles (written behind the API's
	// back) fails toward the person, naming the version.
	if _, err := store.AddPolicyVersion(ctx, "server", "permit (", "root", "broken"); err != nil {
		t.Fatal(err)
	}
	if d := e.DecidePolicy(ctx, payCall("5")); d.Effect != wire.PolicyFailed || d.Version != 3 {
		t.Fatalf("a broken version: %+v", d)
	}
	_ = store.Close()
	if d := e.DecidePolicy(ctx, payCall("5")); d.Effect != wire.PolicyFailed {
		t.Fatalf("a closed store: %+v", d)
	}
}

// TestTry: a month of judged requests (built here, as the gates record
// them), tried against a threshold lowered to 500 for agent/payables:
// exactly the calls between 500 and 1,000 would be stopped now, each
// under the version it was judged by; trying the text in force changes
// nothing; a request of another tenant's agent is not touched.
func TestTry(t *testing.T) {
	store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	if _, err := store.AddPolicyVersion(ctx, "agent/payables", payables, "root", "first"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var recorded []models.PolicyRequest
	for i, amount := range []string{"100", "600", "900", "2000", "60000", "750"} {
		in := payCall(amount)
		in.TaskID = fmt.Sprintf("task-%d", i)
		raw, _ := json.Marshal(in)
		recorded = append(recorded, models.PolicyRequest{RunID: "run-" + in.TaskID, ActivityID: "1", TaskID: in.TaskID, Tenant: in.Tenant,
			Agent: in.Agent, Action: in.Action, Name: in.Tool, Input: string(raw), Effect: Decide([]*Document{mustCompile(t, "agent/payables", payables)}, 1, in).Effect,
			Version: 1, CreatedAt: now.Add(-time.Duration(30-i*5) * 24 * time.Hour).Add(time.Hour)})
	}
	old := payCall("600")
	old.TaskID = "task-old"
	raw, _ := json.Marshal(old)
	recorded = append(recorded, models.PolicyRequest{RunID: "run-old", ActivityID: "1", TaskID: "task-old", Agent: "payables", Action: wire.PolicyCallTool,
		Name: "pay_invoice", Input: string(raw), Version: 1, CreatedAt: now.Add(-40 * 24 * time.Hour)})
	if err := store.RecordPolicyRequests(ctx, recorded); err != nil {
		t.Fatal(err)
	}
	since, err := ParseSince("30d", now)
	if err != nil {
		t.Fatal(err)
	}
	month, err := store.PolicyRequests(ctx, since, "", false, 0)
	if err != nil || len(month) != 6 {
		t.Fatalf("the month's requests: %d, %v", len(month), err)
	}
	lowered := strings.Replace(payables, "> 1000", "> 500", 1)
	res, err := Try(ctx, store, "agent/payables", lowered, since, month)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 6 || res.Changed != 3 || res.StoppedNow != 3 || res.AllowedNow != 0 || len(res.Groups) != 1 {
		t.Fatalf("tried: %+v", res)
	}
	g := res.Groups[0]
	var tasks []string
	for _, e := range g.Examples {
		tasks = append(tasks, e.TaskID)
	}
	if g.From != "allow" || g.To != "approve(finance)" || g.Count != 3 || strings.Join(tasks, " ") != "task-1 task-2 task-5" {
		t.Errorf("the group: %+v (tasks %v)", g, tasks)
	}
	same, err := Try(ctx, store, "agent/payables", payables, since, month)
	if err != nil || same.Changed != 0 {
		t.Errorf("the text in force: %+v, %v", same, err)
	}
	if _, err := Try(ctx, store, "agent/payables", "permit (", since, month); err == nil {
		t.Error("a candidate that does not parse was tried")
	}
	for _, s := range []string{"soon", "0d", "-5h"} {
		if _, err := ParseSince(s, now); err == nil {
			t.Errorf("since %q was taken", s)
		}
	}
}
