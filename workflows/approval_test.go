package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// t0 is the workflow clock when every approval test starts, so that
// deadlines, decision times and refusal messages are exact values.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// at is the workflow time d after the start.
func at(d time.Duration) time.Time { return t0.Add(d) }

// testApprovalID is the ID of the test task's first approval.
const testApprovalID = testTaskID + "-approval-1"

// newApprovalEnv is newTaskEnv with the clock starting at t0, and the
// approval webhook activity as the worker without webhooks runs it: a no-op.
func newApprovalEnv(t *testing.T, agents ...*workflows.Agent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newTaskEnv(t, agents...)
	env.SetStartTime(t0)
	env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
	return env
}

// upserts records the search attributes the workflow upserts.
type upserts struct {
	states  []string   // A2ATaskState values
	pending [][]string // A2APendingApprovals values; nil when emptied or unset
}

func recordUpserts(env *testsuite.TestWorkflowEnvironment) *upserts {
	u := &upserts{}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if v, ok := sa.GetKeyword(wire.TaskStateKey); ok {
			u.states = append(u.states, v)
		}
		if sa.ContainsKey(wire.PendingApprovalsKey) {
			v, _ := sa.GetKeywordList(wire.PendingApprovalsKey)
			u.pending = append(u.pending, v)
		}
	})
	return u
}

// decisionUpdate records what happened to one DecideApproval update.
type decisionUpdate struct {
	accepted bool
	rejected error
	done     bool
	approval workflows.Approval
	err      error
	at       time.Time // workflow clock when the update completed
}

// decide sends the DecideApproval update; call it from a delayed callback.
func decide(env *testsuite.TestWorkflowEnvironment, in wire.DecideApprovalInput) *decisionUpdate {
	u := &decisionUpdate{}
	env.UpdateWorkflow(wire.UpdateDecideApproval, "", &testsuite.TestUpdateCallback{
		OnAccept: func() { u.accepted = true },
		OnReject: func(err error) { u.rejected = err },
		OnComplete: func(v any, err error) {
			u.done, u.err, u.at = true, err, env.Now()
			if a, ok := v.(workflows.Approval); ok {
				u.approval = a
			}
		},
	}, in)
	return u
}

// scripted is a decision sent at a point of the workflow clock.
type scripted struct {
	at time.Duration
	in wire.DecideApprovalInput
	// refused is the validator's message when the decision must not count;
	// "" when it counts.
	refused string
	// refusedType is the refusal's error type; default ErrTypeApprovalRefused.
	refusedType string
	// state is the approval's state right after a decision that counts.
	state string
}

// scheduleDecisions sends each decision at its time; decisions with the same
// time (consecutive in ds) go in one callback, so they race in one workflow task.
func scheduleDecisions(env *testsuite.TestWorkflowEnvironment, ds []scripted) []*decisionUpdate {
	sent := make([]*decisionUpdate, len(ds))
	for i := 0; i < len(ds); {
		j := i
		for j < len(ds) && ds[j].at == ds[i].at {
			j++
		}
		first, last := i, j
		env.RegisterDelayedCallback(func() {
			for k := first; k < last; k++ {
				sent[k] = decide(env, ds[k].in)
			}
		}, ds[i].at)
		i = j
	}
	return sent
}

// checkDecision checks that a counted decision was accepted and recorded as
// sent, or that a refused one was rejected by the validator (so it never
// reached history) with the expected error.
func checkDecision(t *testing.T, name string, u *decisionUpdate, d scripted) {
	t.Helper()
	if u == nil {
		t.Fatalf("%s: never sent", name)
	}
	if d.refused != "" {
		if u.accepted || u.done {
			t.Errorf("%s: accepted=%v completed=%v (err %v), want refused by the validator", name, u.accepted, u.done, u.err)
		}
		wantType := d.refusedType
		if wantType == "" {
			wantType = wire.ErrTypeApprovalRefused
		}
		// The refusal says why, then who decided what.
		var appErr *temporal.ApplicationError
		if !errors.As(u.rejected, &appErr) || appErr.Type() != wantType || !strings.HasPrefix(appErr.Message(), d.refused) {
			t.Errorf("%s: rejection %v, want %s %q...", name, u.rejected, wantType, d.refused)
		}
		return
	}
	if u.rejected != nil || !u.accepted || !u.done || u.err != nil {
		t.Errorf("%s: rejected %v, accepted=%v, completed=%v, err %v; want it to count", name, u.rejected, u.accepted, u.done, u.err)
		return
	}
	if got := u.at; !got.Equal(at(d.at)) {
		t.Errorf("%s: completed at %v, want %v", name, got, at(d.at))
	}
	if u.approval.State != d.state {
		t.Errorf("%s: approval state after it = %q, want %q", name, u.approval.State, d.state)
	}
	want := workflows.ApprovalDecision{Approved: d.in.Approved, Approver: d.in.Approver, Comment: d.in.Comment, Time: at(d.at), Via: d.in.Via}
	if n := len(u.approval.Decisions); n == 0 {
		t.Errorf("%s: the returned approval has no decisions", name)
	} else if diff := cmp.Diff(want, u.approval.Decisions[n-1]); diff != "" {
		t.Errorf("%s: recorded decision (-want +got):\n%s", name, diff)
	}
}

// by is a decision on the test task's first approval, made through REST.
func by(approver string, groups []string, approved bool, comment string) wire.DecideApprovalInput {
	return wire.DecideApprovalInput{ApprovalID: testApprovalID, Approver: approver, ApproverGroups: groups,
		Approved: approved, Comment: comment, Via: "rest"}
}

// recorded is a decision as the approval records it.
func recorded(approved bool, approver, comment string, after time.Duration, via string) workflows.ApprovalDecision {
	return workflows.ApprovalDecision{Approved: approved, Approver: approver, Comment: comment, Time: at(after), Via: via}
}

// byDeadline is the decision the deadline records.
func byDeadline(approved bool, after time.Duration) workflows.ApprovalDecision {
	d := recorded(approved, "deadline", "", after, "deadline")
	if !approved {
		d.Comment = "no decision before the deadline"
	}
	return d
}

func deadline(after time.Duration) *time.Time { return ptr(at(after)) }

var (
	finance  = []string{"finance"}
	managers = []string{"managers"}
)

// invoice is the request most tests ask for.
var invoice = workflows.ApprovalRequest{
	Title:   "Pay invoice 42?",
	Details: "1,200 EUR to ACME",
	// Strings only, so that the request is the same after a JSON round trip.
	Action:  map[string]any{"pay": "invoice 42", "amount": "1200 EUR"},
	Groups:  finance,
	Timeout: 24 * time.Hour,
}

// request returns invoice changed by change.
func request(change func(*workflows.ApprovalRequest)) workflows.ApprovalRequest {
	r := invoice
	if change != nil {
		change(&r)
	}
	return r
}

// withDefaults is req as Approve stores it.
func withDefaults(req workflows.ApprovalRequest) workflows.ApprovalRequest {
	if req.OnTimeout == "" {
		req.OnTimeout = workflows.RejectAtDeadline
	}
	return req
}

// waiting is the status message of a task waiting for approvals, each
// "title by groups".
func waiting(pending ...string) messageView {
	return agent("Waiting for approval: " + strings.Join(pending, "; ") + ".")
}

var waitingFinance = waiting(`"Pay invoice 42?" by finance`)

// approvalResult is what a skill's Approve call returned, and when.
type approvalResult struct {
	approval *workflows.Approval // a copy, taken when Approve returned
	err      error
	at       time.Time
	returned bool
}

func (r *approvalResult) set(ctx workflow.Context, a *workflows.Approval, err error) {
	r.returned, r.at, r.err = true, workflow.Now(ctx), err
	if a != nil {
		c := *a
		c.Groups = slices.Clone(a.Groups)
		c.Decisions = slices.Clone(a.Decisions)
		r.approval = &c
	}
}

// payer is an agent that sleeps for delay, asks for req, then works for an
// hour (so that late decisions reach a running task) and completes "Paid."
// when approved, or rejects with the last decision's comment.
func payer(req workflows.ApprovalRequest, delay time.Duration, got *approvalResult) *workflows.Agent {
	return &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if delay > 0 {
			if err := workflow.Sleep(ctx, delay); err != nil {
				return err
			}
		}
		a, err := t.Approve(ctx, req)
		got.set(ctx, a, err)
		if err != nil {
			return err
		}
		if err := workflow.Sleep(ctx, time.Hour); err != nil {
			return err
		}
		if !a.Approved() {
			return workflows.Reject("Not paid: " + a.Decisions[len(a.Decisions)-1].Comment)
		}
		t.Reply("Paid.")
		return nil
	}}
}

// queryApprovals runs the Approvals query; safe in a delayed callback and
// after the workflow completed.
func queryApprovals(t *testing.T, env *testsuite.TestWorkflowEnvironment) []workflows.Approval {
	t.Helper()
	v, err := env.QueryWorkflow(wire.QueryApprovals, wire.GetTaskInput{})
	if err != nil {
		t.Errorf("query %s: %v", wire.QueryApprovals, err)
		return nil
	}
	var out []workflows.Approval
	if err := v.Get(&out); err != nil {
		t.Errorf("decode %s result: %v", wire.QueryApprovals, err)
	}
	return out
}

// checkApproval compares an approval with want, treating nil and empty
// slices alike (the JSON round trip of a query drops empty ones).
func checkApproval(t *testing.T, name string, want, got workflows.Approval) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestApprovalPaths(t *testing.T) {
	escalating := request(func(r *workflows.ApprovalRequest) {
		r.Timeout, r.OnTimeout, r.EscalateTo, r.EscalateTimeout = time.Hour, workflows.EscalateAtDeadline, managers, 2*time.Hour
	})
	twoOfFinance := request(func(r *workflows.ApprovalRequest) { r.Required = 2 })
	waitingManagers := waiting(`"Pay invoice 42?" by managers`)
	tests := []struct {
		name      string
		req       workflows.ApprovalRequest
		decisions []scripted

		// The approval Approve returns (ID, task, request and creation are fixed).
		wantState     string
		wantGroups    []string
		wantDeadline  *time.Time
		wantEscalated bool
		wantDecisions []workflows.ApprovalDecision
		wantReturned  time.Duration // when Approve returned

		wantStatus  statusView
		wantHistory []messageView
		wantPending [][]string // A2APendingApprovals upserts
	}{
		{
			name:          "approve",
			req:           invoice,
			decisions:     []scripted{{at: time.Hour, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved}},
			wantState:     workflows.ApprovalApproved,
			wantGroups:    finance,
			wantDeadline:  deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "ok", time.Hour, "rest")},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Paid.")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name:          "reject with a comment",
			req:           invoice,
			decisions:     []scripted{{at: time.Hour, in: by("ann", finance, false, "over budget"), state: workflows.ApprovalRejected}},
			wantState:     workflows.ApprovalRejected,
			wantGroups:    finance,
			wantDeadline:  deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{recorded(false, "ann", "over budget", time.Hour, "rest")},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: over budget"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid: over budget")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "no decision before the deadline rejects; a later one is refused",
			req:  request(func(r *workflows.ApprovalRequest) { r.Timeout = time.Hour }),
			decisions: []scripted{{at: 61 * time.Minute, in: by("ann", finance, true, "sorry, late"),
				refused: "approval task-1-approval-1 is already rejected"}},
			wantState:     workflows.ApprovalRejected,
			wantGroups:    finance,
			wantDeadline:  deadline(time.Hour),
			wantDecisions: []workflows.ApprovalDecision{byDeadline(false, time.Hour)},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: no decision before the deadline"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid: no decision before the deadline")},
			wantPending:   [][]string{finance, nil},
		},
		{
			// The deadline's timer fires before an update of the same
			// instant (the validator's own deadline check covers an update
			// that a server delivers in the same workflow task as the timer).
			name: "a decision at the deadline instant is refused",
			req:  request(func(r *workflows.ApprovalRequest) { r.Timeout = time.Hour }),
			decisions: []scripted{{at: time.Hour, in: by("ann", finance, true, "just in time?"),
				refused: "approval task-1-approval-1 is already rejected"}},
			wantState:     workflows.ApprovalRejected,
			wantGroups:    finance,
			wantDeadline:  deadline(time.Hour),
			wantDecisions: []workflows.ApprovalDecision{byDeadline(false, time.Hour)},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: no decision before the deadline"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid: no decision before the deadline")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "no decision before the deadline approves",
			req: request(func(r *workflows.ApprovalRequest) {
				r.Timeout, r.OnTimeout = time.Hour, workflows.ApproveAtDeadline
			}),
			wantState:     workflows.ApprovalApproved,
			wantGroups:    finance,
			wantDeadline:  deadline(time.Hour),
			wantDecisions: []workflows.ApprovalDecision{byDeadline(true, time.Hour)},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Paid.")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "the deadline escalates; the old group is refused, the new one approves",
			req:  escalating,
			decisions: []scripted{
				{at: 90 * time.Minute, in: by("fin", finance, true, "ok"),
					refused: "fin is not in the groups that decide approval task-1-approval-1 (managers)"},
				{at: 2 * time.Hour, in: by("max", managers, true, "go ahead"), state: workflows.ApprovalApproved},
			},
			wantState:     workflows.ApprovalApproved,
			wantGroups:    managers,
			wantDeadline:  deadline(3 * time.Hour),
			wantEscalated: true,
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "max", "go ahead", 2*time.Hour, "rest")},
			wantReturned:  2 * time.Hour,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, waitingManagers, agent("Paid.")},
			wantPending:   [][]string{finance, managers, nil},
		},
		{
			name:          "the deadline escalates, the second deadline rejects",
			req:           escalating,
			wantState:     workflows.ApprovalRejected,
			wantGroups:    managers,
			wantDeadline:  deadline(3 * time.Hour),
			wantEscalated: true,
			wantDecisions: []workflows.ApprovalDecision{byDeadline(false, 3*time.Hour)},
			wantReturned:  3 * time.Hour,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: no decision before the deadline"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, waitingManagers, agent("Not paid: no decision before the deadline")},
			wantPending:   [][]string{finance, managers, nil},
		},
		{
			name:          "escalation without groups to escalate to rejects",
			req:           request(func(r *workflows.ApprovalRequest) { r.Timeout, r.OnTimeout = time.Hour, workflows.EscalateAtDeadline }),
			wantState:     workflows.ApprovalRejected,
			wantGroups:    finance,
			wantDeadline:  deadline(time.Hour),
			wantDecisions: []workflows.ApprovalDecision{byDeadline(false, time.Hour)},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: no decision before the deadline"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid: no decision before the deadline")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "a duplicate decision is refused",
			req:  twoOfFinance,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "one"), state: workflows.ApprovalPending},
				{at: 20 * time.Minute, in: by("ann", finance, true, "one again"), refused: "ann already decided approval task-1-approval-1"},
				{at: 21 * time.Minute, in: by("ann", finance, false, "changed my mind"), refused: "ann already decided approval task-1-approval-1"},
				{at: 30 * time.Minute, in: by("bob", finance, true, "two"), state: workflows.ApprovalApproved},
			},
			wantState:    workflows.ApprovalApproved,
			wantGroups:   finance,
			wantDeadline: deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{
				recorded(true, "ann", "one", 10*time.Minute, "rest"),
				recorded(true, "bob", "two", 30*time.Minute, "rest"),
			},
			wantReturned: 30 * time.Minute,
			wantStatus:   status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:  []messageView{user("pay"), waitingFinance, agent("Paid.")},
			wantPending:  [][]string{finance, nil},
		},
		{
			name: "2 of finance: one rejection rejects at once",
			req:  twoOfFinance,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "fine"), state: workflows.ApprovalPending},
				{at: 20 * time.Minute, in: by("bob", finance, false, "no budget"), state: workflows.ApprovalRejected},
				{at: 30 * time.Minute, in: by("cid", finance, true, "fine too"), refused: "approval task-1-approval-1 is already rejected"},
			},
			wantState:    workflows.ApprovalRejected,
			wantGroups:   finance,
			wantDeadline: deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{
				recorded(true, "ann", "fine", 10*time.Minute, "rest"),
				recorded(false, "bob", "no budget", 20*time.Minute, "rest"),
			},
			wantReturned: 20 * time.Minute,
			wantStatus:   status(a2a.TaskStateRejected, ptr(agent("Not paid: no budget"))),
			wantHistory:  []messageView{user("pay"), waitingFinance, agent("Not paid: no budget")},
			wantPending:  [][]string{finance, nil},
		},
		{
			name: "unauthorized decisions are refused",
			req:  invoice,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("eve", []string{"sales", "hr"}, true, "sure"),
					refused: "eve is not in the groups that decide approval task-1-approval-1 (finance)"},
				{at: 10 * time.Minute, in: by("", finance, true, "anonymous"), refused: "the approver's identity is required"},
				{at: 10 * time.Minute, in: func() wire.DecideApprovalInput {
					in := by("ann", finance, true, "wrong endpoint")
					in.Agent = "other"
					return in
				}(), refused: "task task-1 not found", refusedType: wire.ErrTypeTaskNotFound},
				{at: 10 * time.Minute, in: func() wire.DecideApprovalInput {
					in := by("ann", finance, true, "wrong task")
					in.ApprovalID = "task-2-approval-1"
					return in
				}(), refused: "approval task-2-approval-1 does not exist"},
				// Without group authentication (no groups) anyone may decide.
				{at: 20 * time.Minute, in: by("ann", nil, true, "ok"), state: workflows.ApprovalApproved},
			},
			wantState:     workflows.ApprovalApproved,
			wantGroups:    finance,
			wantDeadline:  deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "ok", 20*time.Minute, "rest")},
			wantReturned:  20 * time.Minute,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Paid.")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "two approvers in the same instant: the first counts",
			req:  invoice,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "mine"), state: workflows.ApprovalApproved},
				{at: 10 * time.Minute, in: by("bob", finance, false, "no, mine"), refused: "approval task-1-approval-1 is already approved"},
			},
			wantState:     workflows.ApprovalApproved,
			wantGroups:    finance,
			wantDeadline:  deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "mine", 10*time.Minute, "rest")},
			wantReturned:  10 * time.Minute,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Paid.")},
			wantPending:   [][]string{finance, nil},
		},
		{
			name: "two approvers in the same instant: the first counts, also when it rejects",
			req:  invoice,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("bob", finance, false, "no"), state: workflows.ApprovalRejected},
				{at: 10 * time.Minute, in: by("ann", finance, true, "yes"), refused: "approval task-1-approval-1 is already rejected"},
			},
			wantState:     workflows.ApprovalRejected,
			wantGroups:    finance,
			wantDeadline:  deadline(24 * time.Hour),
			wantDecisions: []workflows.ApprovalDecision{recorded(false, "bob", "no", 10*time.Minute, "rest")},
			wantReturned:  10 * time.Minute,
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid: no"))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid: no")},
			wantPending:   [][]string{finance, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(tt.req, 0, &got))
			ups := recordUpserts(env)
			sent := scheduleDecisions(env, tt.decisions)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

			final := finalTask(t, env)
			for i, d := range tt.decisions {
				checkDecision(t, fmt.Sprintf("decision %d by %q at %v", i, d.in.Approver, d.at), sent[i], d)
			}
			want := workflows.Approval{
				ID: testApprovalID, TaskID: testTaskID, Request: withDefaults(tt.req), State: tt.wantState,
				Groups: tt.wantGroups, Deadline: tt.wantDeadline, Created: t0, Decisions: tt.wantDecisions, Escalated: tt.wantEscalated,
			}
			if !got.returned || got.err != nil {
				t.Fatalf("Approve returned=%v err=%v", got.returned, got.err)
			}
			checkApproval(t, "approval returned by Approve", want, *got.approval)
			if !got.at.Equal(at(tt.wantReturned)) {
				t.Errorf("Approve returned at %v, want %v", got.at, at(tt.wantReturned))
			}
			if diff := cmp.Diff([]workflows.Approval{want}, queryApprovals(t, env), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Approvals query after the task ended (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPending, ups.pending); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.PendingApprovalsKey.GetName(), diff)
			}
		})
	}
}

// partView is the part of a message part the tests compare.
type partView struct {
	Text      string
	Data      any
	MediaType string
}

func viewParts(m *a2a.Message) []partView {
	if m == nil {
		return nil
	}
	var views []partView
	for _, p := range m.Parts {
		views = append(views, partView{Text: p.Text(), Data: p.Data(), MediaType: p.MediaType})
	}
	return views
}

// waitingData is the data part of a pending approval, as a query returns it.
func waitingData(id, title string, groups []string, deadline string) partView {
	data := map[string]any{"approvalId": id, "title": title}
	var gs []any
	for _, g := range groups {
		gs = append(gs, g)
	}
	data["groups"] = gs
	if deadline != "" {
		data["deadline"] = deadline
	}
	return partView{Data: data, MediaType: "application/json"}
}

// TestApprovalWaitingStatus follows one escalated approval through the
// task's status, its data parts, the Approvals query and the search
// attributes.
func TestApprovalWaitingStatus(t *testing.T) {
	req := request(func(r *workflows.ApprovalRequest) {
		r.Timeout, r.OnTimeout, r.EscalateTo, r.EscalateTimeout = time.Hour, workflows.EscalateAtDeadline, []string{"managers", "directors"}, 2*time.Hour
	})
	var got approvalResult
	env := newApprovalEnv(t, payer(req, 0, &got))
	ups := recordUpserts(env)
	type snapshot struct {
		state     a2a.TaskState
		parts     []partView
		approvals []workflows.Approval
	}
	snap := func() snapshot {
		task := getTask(t, env, nil)
		return snapshot{state: task.Status.State, parts: viewParts(task.Status.Message), approvals: queryApprovals(t, env)}
	}
	var beforeEscalation, afterEscalation, afterDecision snapshot
	env.RegisterDelayedCallback(func() { beforeEscalation = snap() }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { afterEscalation = snap() }, 70*time.Minute)
	var approve *decisionUpdate
	env.RegisterDelayedCallback(func() {
		approve = decide(env, by("max", []string{"directors"}, true, "ok"))
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() { afterDecision = snap() }, 2*time.Hour+time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

	finalTask(t, env)
	checkDecision(t, "approve", approve, scripted{at: 2 * time.Hour, in: by("max", []string{"directors"}, true, "ok"), state: workflows.ApprovalApproved})
	pending := workflows.Approval{
		ID: testApprovalID, TaskID: testTaskID, Request: req, State: workflows.ApprovalPending,
		Groups: finance, Deadline: deadline(time.Hour), Created: t0,
	}
	escalated := pending
	escalated.Groups, escalated.Deadline, escalated.Escalated = []string{"managers", "directors"}, deadline(3*time.Hour), true
	approved := escalated
	approved.State, approved.Decisions = workflows.ApprovalApproved, []workflows.ApprovalDecision{recorded(true, "max", "ok", 2*time.Hour, "rest")}

	steps := []struct {
		name string
		got  snapshot
		want snapshot
	}{
		{"before the escalation", beforeEscalation, snapshot{
			state: a2a.TaskStateInputRequired,
			parts: []partView{
				{Text: `Waiting for approval: "Pay invoice 42?" by finance.`},
				waitingData(testApprovalID, "Pay invoice 42?", finance, "2026-03-02T10:00:00Z"),
			},
			approvals: []workflows.Approval{pending},
		}},
		{"after the escalation", afterEscalation, snapshot{
			state: a2a.TaskStateInputRequired,
			parts: []partView{
				{Text: `Waiting for approval: "Pay invoice 42?" by managers or directors.`},
				waitingData(testApprovalID, "Pay invoice 42?", []string{"managers", "directors"}, "2026-03-02T12:00:00Z"),
			},
			approvals: []workflows.Approval{escalated},
		}},
		{"after the decision", afterDecision, snapshot{
			state:     a2a.TaskStateWorking,
			approvals: []workflows.Approval{approved},
		}},
	}
	for _, s := range steps {
		if s.got.state != s.want.state {
			t.Errorf("%s: state %s, want %s", s.name, s.got.state, s.want.state)
		}
		if diff := cmp.Diff(s.want.parts, s.got.parts); diff != "" {
			t.Errorf("%s: status message parts (-want +got):\n%s", s.name, diff)
		}
		if diff := cmp.Diff(s.want.approvals, s.got.approvals, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: Approvals query (-want +got):\n%s", s.name, diff)
		}
	}
	wantStates := []string{
		string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
		string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted),
	}
	if diff := cmp.Diff(wantStates, ups.states); diff != "" {
		t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
	}
	// Sorted, so that the attribute does not change with the order of groups.
	wantPending := [][]string{finance, {"directors", "managers"}, nil}
	if diff := cmp.Diff(wantPending, ups.pending); diff != "" {
		t.Errorf("%s upserts (-want +got):\n%s", wire.PendingApprovalsKey.GetName(), diff)
	}
}

// TestThreeApprovalsPendingAtOnce runs three gated steps in parallel and
// decides them in every order: each coroutine gets its own outcome and the
// task's status follows the approvals still pending.
func TestThreeApprovalsPendingAtOnce(t *testing.T) {
	names := []string{"A", "B", "C"}
	groups := [][]string{{"group-a"}, {"group-b"}, {"group-c"}}
	approves := []bool{true, false, true} // B is rejected
	id := func(i int) string { return fmt.Sprintf("%s-approval-%d", testTaskID, i+1) }

	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, order := range orders {
		var label []string
		for _, i := range order {
			label = append(label, names[i])
		}
		t.Run(strings.Join(label, ""), func(t *testing.T) {
			var got [3]approvalResult
			gated := &workflows.Agent{Name: "gated", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				wg := workflow.NewWaitGroup(ctx)
				for i := range names {
					wg.Add(1)
					workflow.Go(ctx, func(ctx workflow.Context) {
						defer wg.Done()
						a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: names[i], Groups: groups[i]})
						got[i].set(ctx, a, err)
					})
				}
				wg.Wait(ctx)
				var outcomes []string
				for i := range got {
					if got[i].err != nil {
						return got[i].err
					}
					outcomes = append(outcomes, names[i]+" "+got[i].approval.State)
				}
				t.Reply(strings.Join(outcomes, ", "))
				return workflow.Sleep(ctx, time.Hour)
			}}
			env := newApprovalEnv(t, gated)
			ups := recordUpserts(env)

			// Decisions at 10, 20 and 30 minutes; the task is looked at
			// before them and a minute after each.
			type look struct {
				state a2a.TaskState
				parts []partView
			}
			looks := make([]look, 4)
			lookAt := func(k int) func() {
				return func() {
					task := getTask(t, env, nil)
					looks[k] = look{state: task.Status.State, parts: viewParts(task.Status.Message)}
				}
			}
			env.RegisterDelayedCallback(lookAt(0), 5*time.Minute)
			sent := make([]*decisionUpdate, 3)
			for step, i := range order {
				env.RegisterDelayedCallback(func() {
					sent[i] = decide(env, wire.DecideApprovalInput{ApprovalID: id(i), Approved: approves[i],
						Approver: "ann", ApproverGroups: groups[i], Comment: names[i] + "?", Via: "inbox"})
				}, time.Duration(step+1)*10*time.Minute)
				env.RegisterDelayedCallback(lookAt(step+1), time.Duration(step+1)*10*time.Minute+time.Minute)
			}

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "gated", ContextID: testContextID, Message: userText("go")})

			final := finalTask(t, env)
			decidedAt := map[int]time.Duration{}
			for step, i := range order {
				decidedAt[i] = time.Duration(step+1) * 10 * time.Minute
			}
			for i := range names {
				state := workflows.ApprovalApproved
				if !approves[i] {
					state = workflows.ApprovalRejected
				}
				in := wire.DecideApprovalInput{ApprovalID: id(i), Approved: approves[i], Approver: "ann",
					ApproverGroups: groups[i], Comment: names[i] + "?", Via: "inbox"}
				checkDecision(t, "decision on "+names[i], sent[i], scripted{at: decidedAt[i], in: in, state: state})
				if !got[i].returned || got[i].err != nil {
					t.Fatalf("Approve %s returned=%v err=%v", names[i], got[i].returned, got[i].err)
				}
				want := workflows.Approval{
					ID: id(i), TaskID: testTaskID, Created: t0, State: state, Groups: groups[i],
					Request:   workflows.ApprovalRequest{Title: names[i], Groups: groups[i], OnTimeout: workflows.RejectAtDeadline},
					Decisions: []workflows.ApprovalDecision{recorded(approves[i], "ann", names[i]+"?", decidedAt[i], "inbox")},
				}
				checkApproval(t, "approval returned to coroutine "+names[i], want, *got[i].approval)
				if !got[i].at.Equal(at(decidedAt[i])) {
					t.Errorf("Approve %s returned at %v, want %v", names[i], got[i].at, at(decidedAt[i]))
				}
			}

			// Expected looks: the pending approvals in the order they were
			// requested, a data part for each.
			pendingLook := func(pending []int) look {
				if len(pending) == 0 {
					return look{state: a2a.TaskStateWorking}
				}
				var titles []string
				var parts []partView
				for _, i := range pending {
					titles = append(titles, fmt.Sprintf("%q by %s", names[i], groups[i][0]))
					parts = append(parts, waitingData(id(i), names[i], groups[i], ""))
				}
				text := "Waiting for approval: " + strings.Join(titles, "; ") + "."
				return look{state: a2a.TaskStateInputRequired, parts: append([]partView{{Text: text}}, parts...)}
			}
			remaining := []int{0, 1, 2}
			wantLooks := []look{pendingLook(remaining)}
			wantPending := [][]string{{"group-a"}, {"group-a", "group-b"}, {"group-a", "group-b", "group-c"}}
			wantHistory := []messageView{user("go"), waiting(`"A" by group-a`), waiting(`"A" by group-a`, `"B" by group-b`), waiting(`"A" by group-a`, `"B" by group-b`, `"C" by group-c`)}
			for _, i := range order {
				remaining = slices.DeleteFunc(remaining, func(j int) bool { return j == i })
				l := pendingLook(remaining)
				wantLooks = append(wantLooks, l)
				var gs []string
				for _, j := range remaining {
					gs = append(gs, groups[j][0])
				}
				wantPending = append(wantPending, gs)
				if len(remaining) > 0 {
					wantHistory = append(wantHistory, agent(l.parts[0].Text))
				}
			}
			wantHistory = append(wantHistory, agent("A approved, B rejected, C approved"))
			// Each Approve is asked once the approval policies judged it,
			// the three judged at once (local activities): the first two
			// come in the order their decisions came back, each numbered
			// in the order of its call.
			gotHistory := viewHistory(final.History)
			if len(gotHistory) > 2 && len(ups.pending) > 1 {
				first := askedFirst(t, names, groups, gotHistory[1], gotHistory[2], ups.pending[0], ups.pending[1])
				wantHistory[1], wantHistory[2] = waiting(first[0]...), waiting(first[1]...)
				wantPending[0], wantPending[1] = ups.pending[0], ups.pending[1]
			}
			for k := range looks {
				if looks[k].state != wantLooks[k].state {
					t.Errorf("look %d: state %s, want %s", k, looks[k].state, wantLooks[k].state)
				}
				if diff := cmp.Diff(wantLooks[k].parts, looks[k].parts); diff != "" {
					t.Errorf("look %d: status message parts (-want +got):\n%s", k, diff)
				}
			}
			if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("A approved, B rejected, C approved"))), viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantPending, ups.pending); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.PendingApprovalsKey.GetName(), diff)
			}
			wantStates := []string{
				string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
				string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted),
			}
			if diff := cmp.Diff(wantStates, ups.states); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
			}
		})
	}
}

// askedFirst checks the first two waiting messages and pending-group
// upserts of three approvals asked at once: one of them, then two, the
// first among them, listed by their numbers; it returns the messages'
// approvals as waiting() takes them.
func askedFirst(t *testing.T, names []string, groups [][]string, one, two messageView, pendingOne, pendingTwo []string) [2][]string {
	t.Helper()
	var found [2][]string
	for a := range names {
		for b := range names {
			if a >= b {
				continue
			}
			for _, single := range []int{a, b} {
				q := func(i int) string { return fmt.Sprintf("%q by %s", names[i], groups[i][0]) }
				if cmp.Equal(one, waiting(q(single))) && cmp.Equal(two, waiting(q(a), q(b))) &&
					cmp.Equal(pendingOne, groups[single]) && cmp.Equal(pendingTwo, []string{groups[a][0], groups[b][0]}) {
					found = [2][]string{{q(single)}, {q(a), q(b)}}
				}
			}
		}
	}
	if found[0] == nil {
		t.Errorf("the first two asked: %v then %v, pending %v then %v; want one of the three, then two, the first among them", one, two, pendingOne, pendingTwo)
	}
	return found
}

// TestApprovalEarlyDecisions sends decisions before the skill reaches
// Approve (it sleeps an hour first).
func TestApprovalEarlyDecisions(t *testing.T) {
	approvalN := func(n int) string { return fmt.Sprintf("%s-approval-%d", testTaskID, n) }
	early := func(approver string, groups []string, approved bool, comment string, n int) wire.DecideApprovalInput {
		in := by(approver, groups, approved, comment)
		in.ApprovalID = approvalN(n)
		return in
	}
	tests := []struct {
		name          string
		decisions     []scripted
		wantState     string
		wantDecisions []workflows.ApprovalDecision
		wantReturned  time.Duration
		wantStatus    statusView
		wantStates    []string
		wantPending   [][]string
	}{
		{
			name: "a decision before Approve is kept and applied",
			decisions: []scripted{
				{at: 10 * time.Minute, in: early("ann", finance, true, "pre-approved", 1), state: workflows.ApprovalPending},
				{at: 20 * time.Minute, in: early("ann", finance, false, "again", 1), refused: "ann already decided approval task-1-approval-1"},
				// One of the next 16 approvals is kept; further ahead is refused.
				{at: 20 * time.Minute, in: early("ann", finance, true, "far", 16), state: workflows.ApprovalPending},
				{at: 20 * time.Minute, in: early("ann", finance, true, "too far", 17), refused: "approval task-1-approval-17 does not exist"},
				{at: 20 * time.Minute, in: early("ann", finance, true, "way too far", 99), refused: "approval task-1-approval-99 does not exist"},
				{at: 20 * time.Minute, in: early("ann", finance, true, "zero", 0), refused: "approval task-1-approval-0 does not exist"},
			},
			wantState: workflows.ApprovalApproved,
			// The decision keeps the time it was made, not the time it was applied.
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "pre-approved", 10*time.Minute, "rest")},
			wantReturned:  time.Hour,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			// Never waiting: the task never looked input-required.
			wantStates:  []string{string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted)},
			wantPending: [][]string{nil},
		},
		{
			name: "an early decision from outside the request's groups does not count",
			decisions: []scripted{
				// The validator cannot know the groups yet; Approve must.
				{at: 10 * time.Minute, in: early("eve", []string{"sales"}, false, "no way", 1), state: workflows.ApprovalPending},
				{at: 2 * time.Hour, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved},
			},
			wantState:     workflows.ApprovalApproved,
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "ok", 2*time.Hour, "rest")},
			wantReturned:  2 * time.Hour,
			wantStatus:    status(a2a.TaskStateCompleted, ptr(agent("Paid."))),
			wantStates: []string{
				string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired),
				string(a2a.TaskStateWorking), string(a2a.TaskStateCompleted),
			},
			wantPending: [][]string{finance, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(invoice, time.Hour, &got))
			ups := recordUpserts(env)
			sent := scheduleDecisions(env, tt.decisions)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

			final := finalTask(t, env)
			for i, d := range tt.decisions {
				name := fmt.Sprintf("decision %d by %q on %s", i, d.in.Approver, d.in.ApprovalID)
				checkDecision(t, name, sent[i], d)
				// An early decision answers with the approval as far as it is known.
				if u := sent[i]; d.refused == "" && d.at < time.Hour && u != nil && u.done {
					wantEarly := workflows.Approval{ID: d.in.ApprovalID, TaskID: testTaskID, State: workflows.ApprovalPending,
						Decisions: []workflows.ApprovalDecision{recorded(d.in.Approved, d.in.Approver, d.in.Comment, d.at, "rest")}}
					checkApproval(t, name+": returned approval", wantEarly, u.approval)
				}
			}
			if !got.returned || got.err != nil {
				t.Fatalf("Approve returned=%v err=%v", got.returned, got.err)
			}
			want := workflows.Approval{
				ID: testApprovalID, TaskID: testTaskID, Request: withDefaults(invoice), State: tt.wantState,
				Groups: finance, Created: at(time.Hour), Decisions: tt.wantDecisions,
			}
			if tt.wantReturned > time.Hour { // it waited, with a deadline
				want.Deadline = deadline(25 * time.Hour)
			}
			checkApproval(t, "approval returned by Approve", want, *got.approval)
			if !got.at.Equal(at(tt.wantReturned)) {
				t.Errorf("Approve returned at %v, want %v", got.at, at(tt.wantReturned))
			}
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStates, ups.states); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
			}
			if diff := cmp.Diff(tt.wantPending, ups.pending); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.PendingApprovalsKey.GetName(), diff)
			}
		})
	}
}

// decisionMessage is a user message carrying an approval decision in a data part.
func decisionMessage(approvalID string, approved bool, comment string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"approvalId": approvalID, "approved": approved, "comment": comment,
	}))
	m.ID = a2a.NewMessageID()
	return m
}

// TestApprovalDecisionsInMessages decides through A2A SendMessage: a data
// part from an approver, or a plain yes/no from the task's own user.
func TestApprovalDecisionsInMessages(t *testing.T) {
	// clerk asks for req; when approved it works for an hour, then asks
	// where the receipt goes.
	clerk := func(req workflows.ApprovalRequest, got *approvalResult) *workflows.Agent {
		return &workflows.Agent{Name: "clerk", Handle: func(ctx workflow.Context, t *workflows.Task) error {
			a, err := t.Approve(ctx, req)
			got.set(ctx, a, err)
			if err != nil {
				return err
			}
			if !a.Approved() {
				return workflows.Reject("Not paid.")
			}
			if err := workflow.Sleep(ctx, time.Hour); err != nil {
				return err
			}
			where, err := t.Ask(ctx, "receipt", "Where should the receipt go?")
			if err != nil {
				return err
			}
			t.Reply("Paid; receipt to " + workflows.MessageText(where) + ".")
			return nil
		}}
	}
	withRequester := request(func(r *workflows.ApprovalRequest) { r.Groups = []string{workflows.RequesterGroup, "finance"} })
	waitingRequester := waiting(`"Pay invoice 42?" by requester or finance`)
	receipt := question("receipt", "Where should the receipt go?")

	tests := []struct {
		name string
		req  workflows.ApprovalRequest
		// send goes at 10 minutes; its message is in history unless refused.
		send           wire.SendMessageInput
		sendText       string // the message's text in history
		wantRefusal    string // the validator's message, "" when accepted
		wantSendAfter  time.Duration
		wantSendStatus statusView
		wantDecisionOf string // a decision-only answer: the approval's state
		decisions      []scripted
		lookAt         time.Duration // when to look at the task, 0 never
		wantLook       statusView
		answer         bool // send "by mail" at 3h

		wantState     string
		wantDecisions []workflows.ApprovalDecision
		wantStatus    statusView
		wantHistory   []messageView
	}{
		{
			name: "a data part from an approver; the blocking send answers at the next question",
			req:  invoice,
			send: wire.SendMessageInput{Message: decisionMessage(testApprovalID, true, "ok"),
				Approver: "ann", ApproverGroups: finance},
			wantSendAfter:  70 * time.Minute,
			wantSendStatus: status(a2a.TaskStateInputRequired, &receipt),
			answer:         true,
			wantState:      workflows.ApprovalApproved,
			wantDecisions:  []workflows.ApprovalDecision{recorded(true, "ann", "ok", 10*time.Minute, "a2a")},
			wantStatus:     status(a2a.TaskStateCompleted, ptr(agent("Paid; receipt to by mail."))),
			wantHistory:    []messageView{user("pay"), waitingFinance, user(""), receipt, user("by mail"), agent("Paid; receipt to by mail.")},
		},
		{
			// With authentication the sender is the approver, not the task's owner.
			name: "a data part from an approver who does not own the task",
			req:  invoice,
			// The decision path only (access.go): the message is not
			// recorded and the answer, at once, is the approval, not the task.
			send: wire.SendMessageInput{Owner: "ann", Message: decisionMessage(testApprovalID, true, "ok"),
				Approver: "ann", ApproverGroups: finance},
			wantDecisionOf: workflows.ApprovalApproved,
			answer:         true,
			wantState:      workflows.ApprovalApproved,
			wantDecisions:  []workflows.ApprovalDecision{recorded(true, "ann", "ok", 10*time.Minute, "a2a")},
			wantStatus:     status(a2a.TaskStateCompleted, ptr(agent("Paid; receipt to by mail."))),
			wantHistory:    []messageView{user("pay"), waitingFinance, receipt, user("by mail"), agent("Paid; receipt to by mail.")},
		},
		{
			name:           "a plain yes from the task's user",
			req:            withRequester,
			send:           wire.SendMessageInput{Owner: "alice", Message: userText("Yes!")},
			wantSendAfter:  70 * time.Minute,
			wantSendStatus: status(a2a.TaskStateInputRequired, &receipt),
			answer:         true,
			wantState:      workflows.ApprovalApproved,
			wantDecisions:  []workflows.ApprovalDecision{recorded(true, "alice", "", 10*time.Minute, "a2a")},
			wantStatus:     status(a2a.TaskStateCompleted, ptr(agent("Paid; receipt to by mail."))),
			wantHistory:    []messageView{user("pay"), waitingRequester, user("Yes!"), receipt, user("by mail"), agent("Paid; receipt to by mail.")},
		},
		{
			name:           "a plain no from the task's user; the blocking send answers with the rejected task",
			req:            withRequester,
			send:           wire.SendMessageInput{Owner: "alice", Message: userText("no")},
			wantSendAfter:  10 * time.Minute,
			wantSendStatus: status(a2a.TaskStateRejected, ptr(agent("Not paid."))),
			wantState:      workflows.ApprovalRejected,
			wantDecisions:  []workflows.ApprovalDecision{recorded(false, "alice", "", 10*time.Minute, "a2a")},
			wantStatus:     status(a2a.TaskStateRejected, ptr(agent("Not paid."))),
			wantHistory:    []messageView{user("pay"), waitingRequester, user("no"), agent("Not paid.")},
		},
		{
			name: "a plain yes when the requester may not decide is an ordinary message",
			req:  invoice,
			send: wire.SendMessageInput{Owner: "alice", Message: userText("yes"), ReturnImmediately: true},
			// Recorded, the approval untouched.
			wantSendAfter:  10 * time.Minute,
			wantSendStatus: status(a2a.TaskStateInputRequired, &waitingFinance),
			decisions:      []scripted{{at: 20 * time.Minute, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved}},
			// Settled: the task works, whatever sits in its inbox.
			lookAt:        21 * time.Minute,
			wantLook:      status(a2a.TaskStateWorking, nil),
			wantState:     workflows.ApprovalApproved,
			wantDecisions: []workflows.ApprovalDecision{recorded(true, "ann", "ok", 20*time.Minute, "rest")},
			// The message sent while the task waited answers the next question.
			wantStatus:  status(a2a.TaskStateCompleted, ptr(agent("Paid; receipt to yes."))),
			wantHistory: []messageView{user("pay"), waitingFinance, user("yes"), receipt, agent("Paid; receipt to yes.")},
		},
		{
			name: "a refused decision message leaves no trace",
			req:  invoice,
			send: wire.SendMessageInput{Message: decisionMessage(testApprovalID, true, "sure"),
				Approver: "eve", ApproverGroups: []string{"sales"}},
			wantRefusal:   "eve is not in the groups that decide approval task-1-approval-1 (finance)",
			decisions:     []scripted{{at: 20 * time.Minute, in: by("ann", finance, false, "no"), state: workflows.ApprovalRejected}},
			wantState:     workflows.ApprovalRejected,
			wantDecisions: []workflows.ApprovalDecision{recorded(false, "ann", "no", 20*time.Minute, "rest")},
			wantStatus:    status(a2a.TaskStateRejected, ptr(agent("Not paid."))),
			wantHistory:   []messageView{user("pay"), waitingFinance, agent("Not paid.")},
		},
		{
			// The task is still interrupted, waiting for a second approver
			// who may come days later: the send answers at once.
			name: "a decision that does not settle the approval answers at once",
			req:  request(func(r *workflows.ApprovalRequest) { r.Required = 2 }),
			send: wire.SendMessageInput{Message: decisionMessage(testApprovalID, true, "one"),
				Approver: "ann", ApproverGroups: finance},
			wantSendAfter:  10 * time.Minute,
			wantSendStatus: status(a2a.TaskStateInputRequired, &waitingFinance),
			decisions:      []scripted{{at: 20 * time.Minute, in: by("bob", finance, false, "two"), state: workflows.ApprovalRejected}},
			wantState:      workflows.ApprovalRejected,
			wantDecisions: []workflows.ApprovalDecision{
				recorded(true, "ann", "one", 10*time.Minute, "a2a"),
				recorded(false, "bob", "two", 20*time.Minute, "rest"),
			},
			wantStatus:  status(a2a.TaskStateRejected, ptr(agent("Not paid."))),
			wantHistory: []messageView{user("pay"), waitingFinance, user(""), agent("Not paid.")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, clerk(tt.req, &got))
			var send, answer *update
			env.RegisterDelayedCallback(func() { send = sendMessage(env, tt.send) }, 10*time.Minute)
			sent := scheduleDecisions(env, tt.decisions)
			var look *a2a.Task
			if tt.lookAt > 0 {
				env.RegisterDelayedCallback(func() { look = getTask(t, env, nil) }, tt.lookAt)
			}
			if tt.answer {
				env.RegisterDelayedCallback(func() {
					answer = sendMessage(env, wire.SendMessageInput{Owner: "alice", Message: userText("by mail")})
				}, 3*time.Hour)
			}

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "clerk", ContextID: testContextID, Owner: "alice", Message: userText("pay")})

			final := finalTask(t, env)
			if tt.wantRefusal != "" {
				if send == nil || send.accepted || send.done {
					t.Errorf("decision message: %+v, want refused by the validator", send)
				} else {
					checkRejected(t, "decision message", send.rejected, wire.ErrTypeApprovalRefused, tt.wantRefusal)
				}
			} else if tt.wantDecisionOf != "" {
				if send == nil || !send.done || send.err != nil || send.result.Decision == nil || send.at.Sub(t0) != 10*time.Minute {
					t.Fatalf("decision message: %+v, want answered at once with the approval", send)
				}
				if send.result.Decision.State != tt.wantDecisionOf || send.result.Status != nil {
					t.Errorf("decision message answered %+v, want the %s approval and no task status", send.result, tt.wantDecisionOf)
				}
			} else {
				task := completedTask(t, "decision message", send, t0, tt.wantSendAfter)
				if diff := cmp.Diff(tt.wantSendStatus, viewStatus(task)); diff != "" {
					t.Errorf("decision message: returned status (-want +got):\n%s", diff)
				}
				// The message itself is in history, with its own ID.
				if !slices.ContainsFunc(task.History, func(m *a2a.Message) bool { return m.ID == tt.send.Message.ID }) {
					t.Errorf("decision message %s is not in the returned history", tt.send.Message.ID)
				}
			}
			for i, d := range tt.decisions {
				checkDecision(t, fmt.Sprintf("decision %d by %q", i, d.in.Approver), sent[i], d)
			}
			if tt.lookAt > 0 {
				if diff := cmp.Diff(tt.wantLook, viewStatus(look)); diff != "" {
					t.Errorf("status at %v (-want +got):\n%s", tt.lookAt, diff)
				}
			}
			if tt.answer {
				completedTask(t, "answer", answer, t0, 3*time.Hour)
			}
			if !got.returned || got.err != nil {
				t.Fatalf("Approve returned=%v err=%v", got.returned, got.err)
			}
			if got.approval.State != tt.wantState {
				t.Errorf("approval state %q, want %q", got.approval.State, tt.wantState)
			}
			if diff := cmp.Diff(tt.wantDecisions, got.approval.Decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApprovalDecisionMessageWithPushConfig: a decision message that also
// asks for push notifications is treated like any SendMessage with a config:
// a valid config is stored, an invalid one refuses the message.
func TestApprovalDecisionMessageWithPushConfig(t *testing.T) {
	tests := []struct {
		name        string
		url         string
		wantRefusal string // "" when accepted
		wantConfigs []string
	}{
		{"valid config is stored", "https://hooks.example.com/a2a", "", []string{"hook"}},
		{"invalid config refuses the message", "ftp://hooks.example.com/a2a", `push notification config url: invalid webhook URL: "ftp://hooks.example.com/a2a": the scheme must be http or https`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(invoice, 0, &got))
			var delivered []int64
			env.RegisterActivityWithOptions(func(_ context.Context, d wire.PushDelivery) error {
				delivered = append(delivered, d.Event.Seq)
				return nil
			}, activity.RegisterOptions{Name: wire.ActivityDeliverPush})
			var send *update
			env.RegisterDelayedCallback(func() {
				send = sendMessage(env, wire.SendMessageInput{
					Message: decisionMessage(testApprovalID, true, "ok"), Approver: "ann", ApproverGroups: finance,
					ReturnImmediately: true, PushConfig: &a2a.PushConfig{ID: "hook", URL: tt.url},
				})
			}, 10*time.Minute)
			var configs []string
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(wire.QueryPushConfigs, wire.PushConfigsInput{})
				if err != nil {
					t.Errorf("query %s: %v", wire.QueryPushConfigs, err)
					return
				}
				var cs []*a2a.PushConfig
				if err := v.Get(&cs); err != nil {
					t.Errorf("decode %s: %v", wire.QueryPushConfigs, err)
				}
				for _, c := range cs {
					configs = append(configs, c.ID)
				}
			}, 11*time.Minute)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

			finalTask(t, env)
			if tt.wantRefusal != "" {
				if send == nil || send.accepted {
					t.Fatalf("decision message with an invalid push config: %+v, want refused", send)
				}
				checkRejected(t, "decision message", send.rejected, wire.ErrTypeInvalidParams, tt.wantRefusal)
				if got.approval == nil || got.approval.State != workflows.ApprovalRejected {
					t.Errorf("approval %+v, want rejected at its deadline (the refused message decided nothing)", got.approval)
				}
			} else {
				completedTask(t, "decision message", send, t0, 10*time.Minute)
				if got.approval == nil || got.approval.State != workflows.ApprovalApproved {
					t.Errorf("approval %+v, want approved", got.approval)
				}
				// Added after events 1 (working) and 2 (input-required), the
				// webhook gets 3 (working: approved) and 4 (completed).
				if diff := cmp.Diff([]int64{3, 4}, delivered); diff != "" {
					t.Errorf("events delivered to the webhook (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.wantConfigs, configs); diff != "" {
				t.Errorf("push configs after the message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCancelWhileWaitingForApproval: a task canceled while it waits for an
// approval ends canceled and leaves the inbox.
func TestCancelWhileWaitingForApproval(t *testing.T) {
	tests := []struct {
		name   string
		cancel func(env *testsuite.TestWorkflowEnvironment) *update
	}{
		{"CancelTask", cancelTask},
		{"workflow cancellation", func(env *testsuite.TestWorkflowEnvironment) *update {
			env.CancelWorkflow()
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(invoice, 0, &got))
			ups := recordUpserts(env)
			var cancel *update
			env.RegisterDelayedCallback(func() { cancel = tt.cancel(env) }, 30*time.Minute)

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

			final := finalTask(t, env)
			want := status(a2a.TaskStateCanceled, ptr(agent("The task was canceled.")))
			if diff := cmp.Diff(want, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if cancel != nil {
				if diff := cmp.Diff(want, viewStatus(completedTask(t, "cancel", cancel, t0, 30*time.Minute))); diff != "" {
					t.Errorf("cancel result (-want +got):\n%s", diff)
				}
			}
			var canceled *temporal.CanceledError
			if !got.returned || !errors.As(got.err, &canceled) {
				t.Errorf("Approve returned=%v err=%v, want a *temporal.CanceledError", got.returned, got.err)
			}
			if !got.at.Equal(at(30 * time.Minute)) {
				t.Errorf("Approve returned at %v, want %v", got.at, at(30*time.Minute))
			}
			if diff := cmp.Diff([]messageView{user("pay"), waitingFinance, agent("The task was canceled.")}, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			wantStates := []string{string(a2a.TaskStateWorking), string(a2a.TaskStateInputRequired), string(a2a.TaskStateCanceled)}
			if diff := cmp.Diff(wantStates, ups.states); diff != "" {
				t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
			}
			// The canceled task no longer waits for finance: the inbox,
			// served from this attribute, must not list it.
			if n := len(ups.pending); n == 0 || ups.pending[n-1] != nil {
				t.Errorf("%s upserts = %v, want the last one empty", wire.PendingApprovalsKey.GetName(), ups.pending)
			}
			for _, a := range queryApprovals(t, env) {
				if a.State == workflows.ApprovalPending || len(a.Decisions) != 0 {
					t.Errorf("approval %s of the canceled task: state %q, decisions %v; want it settled without a decision", a.ID, a.State, a.Decisions)
				}
			}
		})
	}
}

// TestApprovalDecisionAfterTheTaskEnded reaches an ended task that still
// runs: the skill's own update handler holds the workflow while it drains.
// (Once the workflow is closed, Temporal itself refuses updates; the test
// suite cannot send one then.)
func TestApprovalDecisionAfterTheTaskEnded(t *testing.T) {
	var got approvalResult
	holder := &workflows.Agent{Name: "holder", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if err := workflow.SetUpdateHandler(ctx, "hold", func(ctx workflow.Context) error {
			return workflow.Sleep(ctx, time.Hour)
		}); err != nil {
			return err
		}
		a, err := t.Approve(ctx, invoice)
		got.set(ctx, a, err)
		return err
	}}
	env := newApprovalEnv(t, holder)
	hold := &update{env: env}
	env.RegisterDelayedCallback(func() { env.UpdateWorkflow("hold", "hold-1", hold.callbacks()) }, 10*time.Minute)
	var cancel *update
	env.RegisterDelayedCallback(func() { cancel = cancelTask(env) }, 20*time.Minute)
	var draining *a2a.Task
	var late, lateEarly *decisionUpdate
	env.RegisterDelayedCallback(func() {
		draining = getTask(t, env, nil)
		late = decide(env, by("ann", finance, true, "too late"))
		in := by("ann", finance, true, "too late")
		in.ApprovalID = testTaskID + "-approval-2"
		lateEarly = decide(env, in)
	}, 30*time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "holder", ContextID: testContextID, Message: userText("pay")})

	final := finalTask(t, env)
	completedTask(t, "cancel", cancel, t0, 20*time.Minute)
	if !hold.done {
		t.Fatal("the hold update did not complete")
	}
	if draining.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("state while draining = %s, want %s", draining.Status.State, a2a.TaskStateCanceled)
	}
	for _, u := range []struct {
		name string
		u    *decisionUpdate
	}{{"decision on the canceled task's approval", late}, {"early decision on a canceled task", lateEarly}} {
		if u.u == nil {
			t.Fatalf("%s: never sent", u.name)
		}
		if u.u.accepted || u.u.done {
			t.Errorf("%s: accepted=%v completed=%v, want refused by the validator", u.name, u.u.accepted, u.u.done)
		}
		var appErr *temporal.ApplicationError
		if !errors.As(u.u.rejected, &appErr) || appErr.Type() != wire.ErrTypeApprovalRefused {
			t.Errorf("%s: rejection %v, want an application error of type %s", u.name, u.u.rejected, wire.ErrTypeApprovalRefused)
		}
	}
	checkRejected(t, "early decision on a canceled task", lateEarly.rejected, wire.ErrTypeApprovalRefused, "approval task-1-approval-2 does not exist")
	for _, a := range queryApprovals(t, env) {
		if len(a.Decisions) != 0 {
			t.Errorf("approval %s of the canceled task has decisions %v, want none", a.ID, a.Decisions)
		}
	}
	if final.Status.State != a2a.TaskStateCanceled {
		t.Errorf("final state %s, want %s", final.Status.State, a2a.TaskStateCanceled)
	}
}

func TestApproveWithoutGroupsFails(t *testing.T) {
	var got approvalResult
	env := newApprovalEnv(t, payer(workflows.ApprovalRequest{Title: "Pay?"}, 0, &got))
	ups := recordUpserts(env)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Message: userText("pay")})

	final := finalTask(t, env)
	want := `approval "Pay?": at least one approver group is required`
	if got.err == nil || got.err.Error() != want || got.approval != nil {
		t.Errorf("Approve = %v, %v; want nil, %q", got.approval, got.err, want)
	}
	if diff := cmp.Diff(status(a2a.TaskStateFailed, ptr(agent(want))), viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if len(ups.pending) != 0 || len(queryApprovals(t, env)) != 0 {
		t.Errorf("an invalid request was recorded: upserts %v", ups.pending)
	}
}

func TestApprovalTaskID(t *testing.T) {
	tests := []struct {
		id     string
		want   a2a.TaskID
		wantOK bool
	}{
		{"task-1-approval-1", "task-1", true},
		{"019a-7f-approval-12", "019a-7f", true},
		// The last "-approval-" splits, so a task ID may contain it.
		{"a-approval-b-approval-3", "a-approval-b", true},
		{"task-1-approval-", "", false},
		{"task-1-approval-x", "", false},
		{"-approval-1", "", false},
		{"task-1", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := wire.ApprovalTaskID(tt.id)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ApprovalTaskID(%q) = %q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// noticeCall is one attempt of the approval webhook activity, on the
// workflow clock.
type noticeCall struct {
	Notice  wire.ApprovalNotice
	At      time.Duration
	Attempt int
}

// TestApprovalWebhookNotices checks that Approve runs the approval webhook
// activity for each group that may decide, when the request starts waiting
// and again when it escalates, without waiting for it, and that a notice
// still retried stops once the approval is settled.
func TestApprovalWebhookNotices(t *testing.T) {
	escalating := request(func(r *workflows.ApprovalRequest) {
		r.Timeout, r.OnTimeout, r.EscalateTo, r.EscalateTimeout = time.Hour, workflows.EscalateAtDeadline, managers, 2*time.Hour
	})
	notice := func(group string, groups []string, deadline time.Duration, escalated bool) wire.ApprovalNotice {
		return wire.ApprovalNotice{
			Group: group, ApprovalID: testApprovalID, TaskID: testTaskID, Agent: "payer",
			Title: invoice.Title, Details: invoice.Details, Groups: groups, Deadline: ptr(at(deadline)), Escalated: escalated,
		}
	}
	unavailable := errors.New("webhook answered 503 Service Unavailable")
	tests := []struct {
		name      string
		req       workflows.ApprovalRequest
		delay     time.Duration // before the skill calls Approve
		decisions []scripted
		// fail answers every attempt with this error when set.
		fail         error
		wantCalls    []noticeCall // the first attempt of each notice
		wantAttempts int          // of all notices together
		wantReturned time.Duration
		wantLastCall time.Duration // the latest attempt started no later than this
		// wantCanceled are the notices canceled while still retried.
		wantCanceled int
	}{
		{
			name: "the request notifies finance, the escalation managers",
			req:  escalating,
			decisions: []scripted{
				{at: 90 * time.Minute, in: by("mo", managers, true, "ok"), state: workflows.ApprovalApproved},
			},
			wantCalls: []noticeCall{
				{Notice: notice("finance", finance, time.Hour, false), At: 0, Attempt: 1},
				{Notice: notice("managers", managers, 3*time.Hour, true), At: time.Hour, Attempt: 1},
			},
			wantAttempts: 2,
			wantReturned: 90 * time.Minute,
			wantLastCall: time.Hour,
		},
		{
			name: "one notice for each group that may decide",
			req:  request(func(r *workflows.ApprovalRequest) { r.Groups = []string{"finance", "managers"} }),
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved},
			},
			wantCalls: []noticeCall{
				{Notice: notice("finance", []string{"finance", "managers"}, 24*time.Hour, false), At: 0, Attempt: 1},
				{Notice: notice("managers", []string{"finance", "managers"}, 24*time.Hour, false), At: 0, Attempt: 1},
			},
			wantAttempts: 2,
			wantReturned: 10 * time.Minute,
		},
		{
			name:  "a request settled by an early decision never waits and notifies nobody",
			req:   invoice,
			delay: time.Hour,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "pre-approved"), state: workflows.ApprovalPending},
			},
			wantReturned: time.Hour,
		},
		{
			name: "a failing webhook delays nothing and is no longer retried once the approval is decided",
			req:  invoice,
			decisions: []scripted{
				{at: 5 * time.Minute, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved},
			},
			fail: unavailable,
			wantCalls: []noticeCall{
				{Notice: notice("finance", finance, 24*time.Hour, false), At: 0, Attempt: 1},
			},
			// Attempts at 0, 1s, 3s, 7s... 255s (backoff 1s doubling); the
			// next one would be at 511s. (The test environment gives up
			// retrying an activity after 10 minutes, hence the early decision.)
			wantAttempts: 9,
			wantReturned: 5 * time.Minute,
			wantLastCall: 5 * time.Minute,
			wantCanceled: 1,
		},
		{
			name: "a webhook that refuses the notice for good changes nothing",
			req:  invoice,
			decisions: []scripted{
				{at: 10 * time.Minute, in: by("ann", finance, true, "ok"), state: workflows.ApprovalApproved},
			},
			fail: temporal.NewNonRetryableApplicationError("webhook answered 400 Bad Request", "WebhookRejected", nil),
			wantCalls: []noticeCall{
				{Notice: notice("finance", finance, 24*time.Hour, false), At: 0, Attempt: 1},
			},
			wantAttempts: 1,
			wantReturned: 10 * time.Minute,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(tt.req, tt.delay, &got))
			var mu sync.Mutex
			var calls []noticeCall
			env.OnActivity(wire.ActivityNotifyApprovalWebhook, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, n wire.ApprovalNotice) error {
					mu.Lock()
					calls = append(calls, noticeCall{Notice: n, At: env.Now().Sub(t0), Attempt: int(activity.GetInfo(ctx).Attempt)})
					mu.Unlock()
					return tt.fail
				})
			in := tt.decisions
			if tt.delay > 0 { // an early decision names the approval to come
				in = append([]scripted(nil), tt.decisions...)
				for i := range in {
					in[i].in.ApprovalID = testApprovalID
				}
			}
			scheduleDecisions(env, in)
			canceled := 0
			env.SetOnActivityCanceledListener(func(info *activity.Info) {
				if info.ActivityType.Name == wire.ActivityNotifyApprovalWebhook {
					canceled++
				}
			})

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID, Message: userText("pay")})

			if canceled != tt.wantCanceled {
				t.Errorf("%d notices canceled, want %d", canceled, tt.wantCanceled)
			}
			if final := finalTask(t, env); final.Status.State != a2a.TaskStateCompleted {
				t.Errorf("task %s, want completed", final.Status.State)
			}
			if !got.returned || got.err != nil || !got.approval.Approved() {
				t.Fatalf("Approve returned=%v err=%v approval=%+v, want approved", got.returned, got.err, got.approval)
			}
			if !got.at.Equal(at(tt.wantReturned)) {
				t.Errorf("Approve returned at %v, want %v", got.at.Sub(t0), tt.wantReturned)
			}
			mu.Lock()
			defer mu.Unlock()
			var first []noticeCall
			for _, c := range calls {
				if c.Attempt == 1 {
					first = append(first, c)
				}
				if c.At > tt.wantLastCall {
					t.Errorf("attempt %d for %s at %v, after the approval no longer waited for it (%v)", c.Attempt, c.Notice.Group, c.At, tt.wantLastCall)
				}
			}
			// Coroutines of one workflow task run in a fixed order, but the
			// test environment runs their activities on goroutines.
			slices.SortStableFunc(first, func(a, b noticeCall) int {
				if a.At != b.At {
					return int(a.At - b.At)
				}
				return strings.Compare(a.Notice.Group, b.Notice.Group)
			})
			if diff := cmp.Diff(tt.wantCalls, first, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("notices (-want +got):\n%s", diff)
			}
			if len(calls) != tt.wantAttempts {
				t.Errorf("%d attempts, want %d: %+v", len(calls), tt.wantAttempts, calls)
			}
		})
	}
}

// TestMessageWhileWaitingForApprovalAnswersAtOnce: a plain message to a task
// waiting for an approval is queued for the skill's next question, and a
// blocking send of it answers at once: the task is already waiting.
func TestMessageWhileWaitingForApprovalAnswersAtOnce(t *testing.T) {
	env := newApprovalEnv(t, &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay", Groups: finance}); err != nil {
			return err
		}
		m, err := t.Ask(ctx, "note", "Any note?")
		if err != nil {
			return err
		}
		t.Reply("noted: " + workflows.MessageText(m))
		return nil
	}})
	var news *update
	env.RegisterDelayedCallback(func() { news = sendMessage(env, wire.SendMessageInput{Message: userText("any news?")}) }, 10*time.Minute)
	env.RegisterDelayedCallback(func() { decide(env, by("fiona", finance, true, "")) }, time.Hour)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Message: userText("pay")})
	got := completedTask(t, "the message while waiting", news, t0, 10*time.Minute)
	if got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("answered with %s, want input-required (still waiting for the approval)", got.Status.State)
	}
	// The queued message answered the next question at once.
	if final := finalTask(t, env); workflows.MessageText(final.Status.Message) != "noted: any news?" {
		t.Errorf("final message %q", workflows.MessageText(final.Status.Message))
	}
}
