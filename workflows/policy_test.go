package workflows_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// stepPolicies judge the steps of the agent "steps": a coffee passes, a
// bribe is refused, a merger needs the board (two of them) and then the
// lawyers, a payment needs finance (the skill's own request otherwise).
const stepPolicies = `@id("coffee") permit (principal, action == Action::"approveStep", resource) when { context.step == "coffee" };
@id("bribe") @reason("we do not do that")
forbid (principal, action == Action::"approveStep", resource) when { context.title like "*bribe*" };
@id("board") @groups("board") @quorum("2") @title("Merge with Acme? (the board)")
permit (principal, action == Action::"approveStep", resource) when { context.step == "merger" };
@id("lawyers") @groups("lawyers") @deadline("24h")
permit (principal, action == Action::"approveStep", resource) when { context.step == "merger" };
`

// TestPolicyJudgedSteps: the approval policies judge a skill's Approve: a
// step they allow or forbid is settled at once on a record of its own, by
// "policy", naming the version; one they require approvals of asks each in
// turn in the policy's groups and quorum; one no policy speaks of asks as
// the skill asked; a store that does not answer asks as the skill asked,
// never allows.
func TestPolicyJudgedSteps(t *testing.T) {
	for _, tc := range []struct {
		name, step, title string
		closeStore        bool
		decide            []workflowstest.Decision
		want              []string // each record: "groups state approver"
		outcome           string
	}{
		{name: "allowed", step: "coffee", title: "A coffee?", want: []string{"[ops] approved policy"}, outcome: "approved"},
		{name: "forbidden", step: "coffee", title: "A coffee and a small bribe?", want: []string{"[ops] rejected policy"}, outcome: "rejected"},
		{name: "the board, then the lawyers", step: "merger", title: "Merge?",
			decide: []workflowstest.Decision{workflowstest.Approve("ann", "board"), workflowstest.Approve("bob", "board"), workflowstest.Approve("lea", "lawyers")},
			want:   []string{"[board] approved bob", "[lawyers] approved lea"}, outcome: "approved"},
		{name: "no policy speaks of it", step: "lunch", title: "Lunch?",
			decide: []workflowstest.Decision{workflowstest.Approve("olga", "ops")},
			want:   []string{"[ops] approved olga"}, outcome: "approved"},
		{name: "the store does not answer", step: "coffee", title: "A coffee?", closeStore: true,
			decide: []workflowstest.Decision{workflowstest.Reject("olga", "no", "ops")},
			want:   []string{"[ops] rejected olga"}, outcome: "rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			if _, err := policies.Compile("agent/steps", stepPolicies); err != nil {
				t.Fatal(err)
			}
			if _, err := store.AddPolicyVersion(context.Background(), "agent/steps", stepPolicies, "root", "steps"); err != nil {
				t.Fatal(err)
			}
			agent := &workflows.Agent{Name: "steps", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: tc.title, Step: tc.step, Groups: []string{"ops"}})
				if err != nil {
					return err
				}
				t.Reply(a.State)
				return nil
			}}
			env := workflowstest.New(t, agent)
			env.SetWorkerOptions(worker.Options{BackgroundActivityContext: workerenv.With(context.Background(),
				&workerenv.Env{DB: store.DB(), Policies: policies.NewEngine(store)})})
			if tc.closeStore {
				_ = store.Close()
			}
			approval := map[string]int{"ann": 1, "bob": 1, "lea": 2, "olga": 1}
			for i, d := range tc.decide {
				env.Decide(time.Duration(i+1)*time.Hour, workflowstest.ApprovalID(approval[d.Approver]), d)
			}
			task := env.RunText("steps", "go")
			if got := workflows.MessageText(task.Status.Message); got != tc.outcome {
				t.Errorf("the skill got %q, want %q", got, tc.outcome)
			}
			v, err := env.QueryWorkflow(wire.QueryApprovals, wire.Caller{})
			if err != nil {
				t.Fatal(err)
			}
			var list []workflows.Approval
			if err := v.Get(&list); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range list {
				last := a.Decisions[len(a.Decisions)-1]
				got = append(got, fmt.Sprintf("%v %s %s", a.Groups, a.State, last.Approver))
				rec := a.Request.Policy
				switch {
				case tc.closeStore && (rec == nil || rec.Effect != wire.PolicyFailed || !strings.Contains(rec.Reason, "did not answer")):
					t.Errorf("approval %s names the policies %+v, want a failure to decide", a.ID, rec)
				case !tc.closeStore && (rec == nil || rec.Version != 1):
					t.Errorf("approval %s names the policies %+v, want version 1", a.ID, rec)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("records %q, want %q", got, tc.want)
			}
			if tc.name == "the board, then the lawyers" && (list[0].Request.Required != 2 || list[1].Request.Timeout != 24*time.Hour) {
				t.Errorf("the board's quorum %d, the lawyers' deadline %v", list[0].Request.Required, list[1].Request.Timeout)
			}
		})
	}
}
