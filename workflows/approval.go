package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// DeadlineAction is what happens when an approval's deadline passes.
type DeadlineAction string

const (
	// RejectAtDeadline rejects the request (the default).
	RejectAtDeadline DeadlineAction = "reject"
	// ApproveAtDeadline approves it.
	ApproveAtDeadline DeadlineAction = "approve"
	// EscalateAtDeadline hands it to EscalateTo with a new deadline.
	EscalateAtDeadline DeadlineAction = "escalate"
)

// ApprovalRequest is what a skill asks people to decide.
type ApprovalRequest struct {
	// Title is the one-line question, e.g. "Pay invoice 42 (1,200 EUR)?".
	Title string `json:"title"`
	// Details explain the request to the approver.
	Details string `json:"details,omitempty"`
	// Action is the proposed action as JSON-marshalable data.
	Action any `json:"action,omitempty"`
	// Groups may decide; anyone in one of them counts. Required.
	Groups []string `json:"groups"`
	// Required is how many approvals are needed (N of M); default 1. One
	// rejection rejects.
	Required int `json:"required,omitempty"`
	// Timeout is how long the approvers have; zero waits forever.
	Timeout time.Duration `json:"timeout,omitempty"`
	// OnTimeout says what the deadline does; default RejectAtDeadline.
	OnTimeout DeadlineAction `json:"onTimeout,omitempty"`
	// EscalateTo are the groups that decide after an escalation, with
	// EscalateTimeout (zero: forever) and then a rejection.
	EscalateTo      []string      `json:"escalateTo,omitempty"`
	EscalateTimeout time.Duration `json:"escalateTimeout,omitempty"`
	// EditSchema, when set, lets approvers approve edited arguments: the
	// JSON Schema they must satisfy (a gated tool's parameters). The
	// decision then carries them ([ApprovalDecision.Arguments]) and the
	// record keeps both; [Approval.Arguments] gives the ones approved.
	EditSchema json.RawMessage `json:"editSchema,omitempty"`
	// GrantKey, when set, lets an approver approve every later request of
	// the task with the same key as well (ApprovalDecision.Grant): a gated
	// tool, for the rest of the task. [Task.Granted] reads the grant,
	// which crosses continue-as-new.
	GrantKey string `json:"grantKey,omitempty"`
	// Step names the step for the approval policies (their
	// context.step): "payment", "merger". Policies judge every Approve;
	// a step without a name is "".
	Step string `json:"step,omitempty"`
	// Policy is what the approval policies in force said of the request,
	// and their version: set by Approve (and by a gated tool call, whose
	// policies judged the call itself). A request that carries it is not
	// judged again.
	Policy *PolicyRecord `json:"policy,omitempty"`
}

// ApprovalDecision is one approver's decision, kept for the audit trail.
type ApprovalDecision struct {
	Approved bool      `json:"approved"`
	Approver string    `json:"approver"`
	Comment  string    `json:"comment,omitempty"`
	Time     time.Time `json:"time"`
	// Via says how the decision came: "a2a", "rest", "cli", "inbox", "console",
	// "deadline"...
	Via string `json:"via,omitempty"`
	// Arguments are the edited arguments the approver approved instead of
	// the proposed ones (ApprovalRequest.EditSchema); empty: as proposed.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Grant says the approver approved the request's GrantKey for the rest
	// of the task.
	Grant bool `json:"grant,omitempty"`
	// OnBehalfOf names the approver whose delegated authority the decision
	// used (out of office): Approver is then "X for Y".
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
}

// authority is whose authority d used: its OnBehalfOf, else its approver.
func (d ApprovalDecision) authority() string {
	if d.OnBehalfOf != "" {
		return d.OnBehalfOf
	}
	return d.Approver
}

// Approval states.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	// ApprovalCanceled: the task ended (canceled, failed, or the skill
	// returned) while the approval was pending; nobody can decide it any more.
	ApprovalCanceled = "canceled"
)

// Approval is a request and everything that happened to it.
type Approval struct {
	ID      string          `json:"id"`
	TaskID  a2a.TaskID      `json:"taskId"`
	Request ApprovalRequest `json:"request"`
	// State is pending, approved or rejected.
	State string `json:"state"`
	// Groups are the groups that may decide now (changed by an escalation).
	Groups    []string           `json:"groups"`
	Deadline  *time.Time         `json:"deadline,omitempty"`
	Created   time.Time          `json:"created"`
	Decisions []ApprovalDecision `json:"decisions,omitempty"`
	// Escalated is set once the request went to EscalateTo.
	Escalated bool `json:"escalated,omitempty"`
}

// Approved reports whether the approval ended approved.
func (a *Approval) Approved() bool { return a.State == ApprovalApproved }

// Arguments returns the edited arguments the approval was approved with:
// those of its latest approving decision that edited them, or nil when no
// approver edited them (the request's own stand).
func (a *Approval) Arguments() json.RawMessage {
	if a.State != ApprovalApproved {
		return nil
	}
	for i := len(a.Decisions) - 1; i >= 0; i-- {
		if d := a.Decisions[i]; d.Approved && len(d.Arguments) > 0 {
			return d.Arguments
		}
	}
	return nil
}

// approvals is the approval state of a run.
type approvals struct {
	r *run `carry:"-"`

	list  []*Approval
	count int             // approvals requested so far, including those an earlier run no longer carries
	early []earlyDecision // decisions for approvals not requested yet: the decision as made and the approver's groups
	// notices are the webhook notices under way (not yet completed, failed
	// or canceled in history); carriedNotices those an earlier run handed
	// over, to send again.
	notices        []*wire.ApprovalNotice `carry:"-"` // carried as the next run's carriedNotices
	carriedNotices []wire.ApprovalNotice  `carry:"-"` // sent again by resume, then nil
	// waiting says the input-required status is the approvals'.
	waiting bool
}

var _ unit = (*approvals)(nil)

// heldDecisions counts the decisions that settled nothing yet: those of
// pending approvals and the early ones (a fork's replay goes on after
// one).
func (a *approvals) heldDecisions() int {
	n := len(a.early)
	for _, ap := range a.list {
		if ap.State == ApprovalPending {
			n += len(ap.Decisions)
		}
	}
	return n
}

// pendingNotices returns the notices under way, to hand to the next run.
func (a *approvals) pendingNotices() []wire.ApprovalNotice {
	out := make([]wire.ApprovalNotice, 0, len(a.notices))
	for _, n := range a.notices {
		out = append(out, *n)
	}
	return out
}

// maxEarlyApprovals bounds how far ahead an early decision may point.
const maxEarlyApprovals = 16

// approvalID is the deterministic ID of a task's n-th approval (from 1), so
// a caller can send a decision before the skill reaches its Approve call.
func approvalID(task a2a.TaskID, n int) string { return fmt.Sprintf("%s-approval-%d", task, n) }

// register sets the approvals' query and decision update.
func (u *approvals) register(ctx workflow.Context) error {
	r := u.r
	if err := workflow.SetQueryHandler(ctx, wire.QueryApprovals, func(in wire.Caller) ([]Approval, error) {
		if err := r.checkAccess(in.Agent, ""); err != nil {
			return nil, err
		}
		out := make([]Approval, 0, len(r.approvals.list))
		for _, a := range r.approvals.list {
			if r.mayRead(in, a) {
				out = append(out, *a)
			}
		}
		return out, nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryApprovals, err)
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateDecideApproval,
		func(ctx workflow.Context, in wire.DecideApprovalInput) (Approval, error) {
			r.updates++
			defer r.answerSent(ctx)
			return r.decide(ctx, in)
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, in wire.DecideApprovalInput) error {
				if err := r.checkAccess(in.Agent, ""); err != nil {
					return err
				}
				if err := r.authorizeDecision(in, in.Principal); err != nil {
					return err
				}
				return r.validateDecision(ctx, in)
			},
			Description: "record an approver's decision on a pending approval",
		})
}

func refused(format string, args ...any) error {
	return temporal.NewApplicationError(fmt.Sprintf(format, args...), wire.ErrTypeApprovalRefused)
}

func (r *run) findApproval(id string) *Approval {
	for _, a := range r.approvals.list {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// validateDecision refuses, before anything reaches history, a decision
// that is unknown, late, duplicate, unauthorized or for a settled approval.
func (r *run) validateDecision(ctx workflow.Context, in wire.DecideApprovalInput) error {
	if err := r.checkAccess(in.Agent, ""); err != nil {
		return err
	}
	if in.Approver == "" {
		return refused("the approver's identity is required")
	}
	a := r.findApproval(in.ApprovalID)
	if a == nil {
		// A decision may come before the skill asks: keep it if the ID is
		// one of the task's next approvals and the task is still running.
		n, ok := approvalNumber(r.task.ID, in.ApprovalID)
		if !ok || n <= r.approvals.count || n > r.approvals.count+maxEarlyApprovals || r.task.Status.State.Terminal() {
			return refused("approval %s does not exist", in.ApprovalID)
		}
		for _, d := range r.approvals.early {
			if d.ApprovalID == in.ApprovalID && d.Decision.Approver == in.Approver {
				return refused("%s already decided approval %s", in.Approver, in.ApprovalID)
			}
		}
		if len(in.Arguments) > 0 || in.Grant {
			return temporal.NewApplicationError(fmt.Sprintf("approval %s is not asked yet: edited arguments and grants wait for its request", in.ApprovalID), wire.ErrTypeInvalidParams)
		}
		return nil
	}
	if a.State != ApprovalPending {
		return refused("approval %s is already %s%s", a.ID, a.State, decidedBy(a))
	}
	if a.Deadline != nil && !workflow.Now(ctx).Before(*a.Deadline) {
		return refused("approval %s passed its deadline at %s", a.ID, a.Deadline.Format(time.RFC3339))
	}
	requester := in.Principal != "" && in.Principal == r.owner && slices.Contains(a.Groups, RequesterGroup)
	if !requester && len(in.ApproverGroups) > 0 && !slices.ContainsFunc(in.ApproverGroups, func(g string) bool { return slices.Contains(a.Groups, g) }) {
		return refused("%s is not in the groups that decide approval %s (%s)", in.Approver, a.ID, strings.Join(a.Groups, ", "))
	}
	mine := ApprovalDecision{Approver: in.Approver, OnBehalfOf: in.OnBehalfOf}.authority()
	for _, d := range a.Decisions {
		if d.Approver == in.Approver || d.authority() == mine {
			return refused("%s already decided approval %s%s", mine, a.ID, decidedBy(a))
		}
	}
	return validateEdits(a, in)
}

// maxEditedArgumentsBytes bounds a decision's edited arguments: they go into
// the task's history.
const maxEditedArgumentsBytes = 64 << 10

// validateEdits refuses edited arguments or a grant that the request does
// not take, and edited arguments its EditSchema refuses.
func validateEdits(a *Approval, in wire.DecideApprovalInput) error {
	if len(in.Arguments) > 0 {
		switch {
		case !in.Approved:
			return temporal.NewApplicationError("edited arguments come with an approval, not a rejection", wire.ErrTypeInvalidParams)
		case len(a.Request.EditSchema) == 0:
			return temporal.NewApplicationError(fmt.Sprintf("approval %s takes no edited arguments", a.ID), wire.ErrTypeInvalidParams)
		}
		// Validators run on new updates only; the check is a pure function
		// of the schema and the arguments.
		err := wire.CheckJSON(a.Request.EditSchema, in.Arguments, maxEditedArgumentsBytes, "the edited arguments") //workflowcheck:ignore
		if err != nil {
			return temporal.NewApplicationError(fmt.Sprintf("approval %s: %v", a.ID, err), wire.ErrTypeInvalidParams)
		}
	}
	if in.Grant {
		switch {
		case !in.Approved:
			return temporal.NewApplicationError("a grant comes with an approval, not a rejection", wire.ErrTypeInvalidParams)
		case a.Request.GrantKey == "":
			return temporal.NewApplicationError(fmt.Sprintf("approval %s grants nothing for the rest of the task", a.ID), wire.ErrTypeInvalidParams)
		}
	}
	return nil
}

// decidedBy says who decided what on a, for a refusal's message.
func decidedBy(a *Approval) string {
	if len(a.Decisions) == 0 {
		return ""
	}
	var parts []string
	for _, d := range a.Decisions {
		verdict := "rejected"
		if d.Approved {
			verdict = "approved"
		}
		parts = append(parts, fmt.Sprintf("%s %s it at %s (via %s)", d.Approver, verdict, d.Time.Format(time.RFC3339), d.Via))
	}
	return ": " + strings.Join(parts, "; ")
}

func approvalNumber(task a2a.TaskID, id string) (int, bool) {
	prefix := string(task) + "-approval-"
	if !strings.HasPrefix(id, prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(id[len(prefix):])
	return n, err == nil && n > 0
}

// decide applies a validated decision. Validation ran against the same
// state in the same workflow task, so racing approvers are serialised: the
// first decision that settles the approval wins, later ones are refused by
// the validator (or here, should they share a workflow task).
func (r *run) decide(ctx workflow.Context, in wire.DecideApprovalInput) (Approval, error) {
	if err := r.validateDecision(ctx, in); err != nil {
		return Approval{}, err
	}
	d := ApprovalDecision{Approved: in.Approved, Approver: in.Approver, Comment: in.Comment, Time: workflow.Now(ctx).UTC(), Via: in.Via,
		Arguments: in.Arguments, Grant: in.Grant, OnBehalfOf: in.OnBehalfOf}
	a := r.findApproval(in.ApprovalID)
	if a == nil {
		r.approvals.early = append(r.approvals.early, earlyDecision{ApprovalID: in.ApprovalID, Decision: d, Groups: in.ApproverGroups})
		return Approval{ID: in.ApprovalID, TaskID: r.task.ID, State: ApprovalPending,
			Decisions: []ApprovalDecision{d}}, nil
	}
	r.recordDecision(a, d)
	r.showDetails(ctx) // a decision short of the quorum changes no status
	return *a, nil
}

// recordDecision adds a decision and settles the approval when it is enough.
func (r *run) recordDecision(a *Approval, d ApprovalDecision) {
	a.Decisions = append(a.Decisions, d)
	if !d.Approved {
		a.State = ApprovalRejected
		return
	}
	approvals := 0
	for _, d := range a.Decisions {
		if d.Approved {
			approvals++
		}
	}
	required := a.Request.Required
	if required < 1 {
		required = 1
	}
	if approvals >= required {
		a.State = ApprovalApproved
		r.grants.record(a)
	}
}

// Approve asks the request's groups to decide and returns the settled
// approval (check Approved()). While it waits the task is input-required,
// with a status message saying what is awaited and a data part carrying the
// approval ID, and is findable by the A2APendingApprovals search attribute.
// Several Approve calls may wait at once (from workflow.Go coroutines); each
// settles on its own. The wait is durable: hours or days, across restarts.
// With [Resumable], the task may continue as new while it waits (see
// continued.go): Approve then returns the continue-as-new error, and the
// skill's first Approve in the next run goes on waiting for the same
// approval, with its deadline and escalation as they were.
func (t *Task) Approve(ctx workflow.Context, req ApprovalRequest, opts ...AskOption) (*Approval, error) {
	if len(req.Groups) == 0 {
		return nil, fmt.Errorf("approval %q: at least one approver group is required", req.Title)
	}
	if req.OnTimeout == "" {
		req.OnTimeout = RejectAtDeadline
	}
	o, resumeState, err := waitOptions(opts)
	if err != nil {
		return nil, err
	}
	r := t.r
	if p, ok := r.resumeWait(waitApproval, ""); ok {
		if a := r.findApproval(p.ApprovalID); a != nil {
			return t.awaitApproval(ctx, a, req, o, resumeState, true)
		}
	}
	// The request's number is taken now: Approve calls waiting at once
	// (workflow.Go) number theirs in the order they were made, however
	// their policy decisions come back.
	r.approvals.count++
	n := r.approvals.count
	// The policies in force judge the step, unless the request carries
	// their decision already (a gated tool call's: package llm).
	if req.Policy == nil {
		d, judged := r.JudgePolicy(ctx, wire.PolicyInput{Action: wire.PolicyApproveStep, Step: req.Step,
			Title: req.Title, Groups: req.Groups})
		if judged {
			return t.approveByPolicy(ctx, req, n, d, o, resumeState)
		}
	}
	return t.awaitApproval(ctx, r.requestApprovalNumbered(ctx, req, n), req, o, resumeState, false)
}

// awaitApproval waits until a settles (resumed: an earlier run asked and
// notified already, and a keeps its deadline), and returns a copy of it.
func (t *Task) awaitApproval(ctx workflow.Context, a *Approval, req ApprovalRequest, o askOptions, resumeState json.RawMessage, resumed bool) (*Approval, error) {
	r := t.r
	timeout := req.Timeout
	for a.State == ApprovalPending {
		var stopNotices workflow.CancelFunc = func() {}
		if resumed {
			// Asked and notified by an earlier run: wait out what is left.
			resumed = false
			timeout = 0
			if a.Deadline != nil {
				timeout = max(a.Deadline.Sub(workflow.Now(ctx)), time.Millisecond)
			}
		} else {
			a.Deadline = nil
			if timeout > 0 {
				a.Deadline = ptr(workflow.Now(ctx).Add(timeout).UTC())
			}
			r.approvalsChanged(ctx)
			stopNotices = r.notifyApprovers(ctx, a)
		}
		continueHere := func() bool { return o.resumable && r.continueDue(ctx) }
		settled := func() bool { return a.State != ApprovalPending || continueHere() }
		var err error
		ok := true
		if timeout > 0 {
			ok, err = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: timeout,
				TimerOptions: workflow.TimerOptions{Summary: approvalDeadlineSummary(a, req)}}, settled)
		} else {
			err = workflow.Await(ctx, settled)
		}
		if err == nil && ok && a.State == ApprovalPending {
			// The run continues as new; the notices under way go with it.
			return nil, r.continueAsNew(ctx, t, &skillState{State: resumeState, Wait: &parkedWait{Kind: waitApproval, ApprovalID: a.ID}})
		}
		// Settled or escalated, the request no longer waits for these
		// groups: a notice still being retried would be stale.
		stopNotices()
		if err != nil {
			return a, err
		}
		if ok {
			break
		}
		timeout = passDeadline(ctx, a, req, timeout)
	}
	r.approvalsChanged(ctx)
	r.countApproval(ctx, a) // metrics.go
	// A copy: the skill must not be able to rewrite the audit trail.
	settledCopy := *a
	settledCopy.Decisions = append([]ApprovalDecision(nil), a.Decisions...)
	return &settledCopy, nil
}

// approvalDeadlineSummary is the summary of the timer of a's deadline:
// whose deadline it is and what it does.
func approvalDeadlineSummary(a *Approval, req ApprovalRequest) string {
	action := req.OnTimeout
	if action == EscalateAtDeadline && (a.Escalated || len(req.EscalateTo) == 0) {
		action = RejectAtDeadline
	}
	return wire.OneLine(fmt.Sprintf("deadline of approval %s (%s): %s", a.ID, req.Title, action), 200)
}

// requestApproval records a new pending approval of req, numbered after
// the task's earlier ones, and applies the decisions made for it before it
// was requested (a fork's records, a decision that raced the request),
// those of approvers in its groups.
func (r *run) requestApproval(ctx workflow.Context, req ApprovalRequest) *Approval {
	r.approvals.count++
	return r.requestApprovalNumbered(ctx, req, r.approvals.count)
}

// requestApprovalNumbered is requestApproval of the task's n-th approval,
// whose number was taken already.
func (r *run) requestApprovalNumbered(ctx workflow.Context, req ApprovalRequest, n int) *Approval {
	a := &Approval{
		ID: approvalID(r.task.ID, n), TaskID: r.task.ID, Request: req,
		State: ApprovalPending, Groups: req.Groups, Created: workflow.Now(ctx).UTC(),
	}
	// In the order of their numbers: one whose number was taken before
	// the policies judged it goes before those asked meanwhile.
	at := len(r.approvals.list)
	for at > 0 {
		if m, _ := approvalNumber(r.task.ID, r.approvals.list[at-1].ID); m < n {
			break
		}
		at--
	}
	r.approvals.list = slices.Insert(r.approvals.list, at, a)
	kept := r.approvals.early[:0]
	for _, early := range r.approvals.early {
		switch {
		case early.ApprovalID != a.ID:
			kept = append(kept, early)
		case a.State != ApprovalPending:
		case len(early.Groups) > 0 && !slices.ContainsFunc(early.Groups, func(g string) bool { return slices.Contains(a.Groups, g) }):
			r.logger.Warn("early approval decision by someone outside the request's groups ignored", "approval", a.ID, "approver", early.Decision.Approver)
		default:
			r.recordDecision(a, early.Decision)
		}
	}
	r.approvals.early = kept
	return a
}

// passDeadline applies req.OnTimeout to a, whose deadline passed: it
// escalates a (and returns the escalation's timeout), or settles it
// approved or rejected by "deadline" (and returns timeout).
func passDeadline(ctx workflow.Context, a *Approval, req ApprovalRequest, timeout time.Duration) time.Duration {
	switch {
	case req.OnTimeout == EscalateAtDeadline && !a.Escalated && len(req.EscalateTo) > 0:
		a.Escalated, a.Groups, timeout = true, req.EscalateTo, req.EscalateTimeout
	case req.OnTimeout == ApproveAtDeadline:
		a.Decisions = append(a.Decisions, ApprovalDecision{Approved: true, Approver: "deadline", Time: workflow.Now(ctx).UTC(), Via: "deadline"})
		a.State = ApprovalApproved
	default:
		a.Decisions = append(a.Decisions, ApprovalDecision{Approved: false, Approver: "deadline", Comment: "no decision before the deadline", Time: workflow.Now(ctx).UTC(), Via: "deadline"})
		a.State = ApprovalRejected
	}
	return timeout
}

// notifyApprovers runs ActivityNotifyApprovalWebhook for each group that
// may decide a now, each in a coroutine of its own, so that Approve waits for
// no webhook and a slow webhook delays no other group. Temporal retries a
// failing webhook like a push notification (PushOptions). The activity runs
// for every group, webhook or not: which groups have one is the worker's
// configuration, which the workflow must not read, so every waiting request
// costs one activity per group in history. The returned function cancels the
// notices still running; the run completes only once they are over (see
// noticesIdle).
func (r *run) notifyApprovers(ctx workflow.Context, a *Approval) workflow.CancelFunc {
	ctx, cancel := workflow.WithCancel(ctx)
	for _, group := range a.Groups {
		r.sendNotice(ctx, wire.ApprovalNotice{
			Group: group, ApprovalID: a.ID, TaskID: a.TaskID, Agent: r.agentName,
			Title: a.Request.Title, Details: a.Request.Details,
			Groups: slices.Clone(a.Groups), Deadline: a.Deadline, Escalated: a.Escalated,
		})
	}
	return cancel
}

// sendNotice runs ActivityNotifyApprovalWebhook for one notice in a
// coroutine of its own.
func (r *run) sendNotice(ctx workflow.Context, notice wire.ApprovalNotice) {
	opts := r.pushActivityOptions("", 0)
	opts.Summary = fmt.Sprintf("notify %s of approval %s", notice.Group, notice.ApprovalID)
	// A canceled notice is over once history says so, not at the
	// request: see noticesIdle.
	opts.WaitForCancellation = true
	actx := workflow.WithActivityOptions(ctx, opts)
	n := &notice
	r.approvals.notices = append(r.approvals.notices, n)
	workflow.Go(actx, func(ctx workflow.Context) {
		defer func() {
			r.approvals.notices = slices.DeleteFunc(r.approvals.notices, func(o *wire.ApprovalNotice) bool { return o == n })
		}()
		err := workflow.ExecuteActivity(ctx, wire.ActivityNotifyApprovalWebhook, notice).Get(ctx, nil)
		var canceled *temporal.CanceledError
		if err != nil && !errors.As(err, &canceled) {
			r.logger.Warn("approval webhook not notified", "approval", notice.ApprovalID, "group", notice.Group, "error", err)
		}
	})
}

// renotify sends again the notices an earlier run had under way when the
// task continued as new, for approvals still pending.
func (u *approvals) resume(ctx workflow.Context) {
	r := u.r
	for _, n := range r.approvals.carriedNotices {
		if a := r.findApproval(n.ApprovalID); a != nil && a.State == ApprovalPending {
			r.sendNotice(ctx, n)
		}
	}
	r.approvals.carriedNotices = nil
}

// noticesIdle reports whether no approval webhook notice is under way, so
// that the run may complete: completing while a notice's activity ends
// would make Temporal fail the workflow task (UnhandledCommand), and with it
// any update that task was answering.
func (u *approvals) idle() bool { return len(u.notices) == 0 }

// cancelPendingApprovals settles the approvals still pending when the task
// ends, so that late decisions are refused and the inbox no longer lists
// the task.
func (u *approvals) end(ctx workflow.Context) {
	r := u.r
	canceled := false
	for _, a := range r.approvals.list {
		if a.State == ApprovalPending {
			a.State, a.Deadline, canceled = ApprovalCanceled, nil, true
			r.countApproval(ctx, a) // metrics.go
		}
	}
	if canceled {
		r.setSearchAttributes(ctx, "pending approvals", wire.PendingApprovalsKey.ValueSet(nil)) // writes.go
	}
}

// approvalsChanged keeps the task's status and search attribute in step
// with its pending approvals.
func (r *run) approvalsChanged(ctx workflow.Context) {
	var pending []*Approval
	var groups []string
	for _, a := range r.approvals.list {
		if a.State == ApprovalPending {
			pending = append(pending, a)
			for _, g := range a.Groups {
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
		}
	}
	slices.Sort(groups)
	var asked []string
	for _, a := range r.approvals.list {
		for _, g := range append(append([]string(nil), a.Request.Groups...), a.Groups...) {
			if !slices.Contains(asked, g) {
				asked = append(asked, g)
			}
		}
	}
	slices.Sort(asked)
	r.setSearchAttributes(ctx, "pending approvals", wire.PendingApprovalsKey.ValueSet(groups), wire.ApprovalGroupsKey.ValueSet(asked)) // writes.go
	if len(pending) == 0 {
		if r.task.Status.State == a2a.TaskStateInputRequired && r.approvals.waiting {
			r.approvals.waiting = false
			r.setStatus(ctx, a2a.TaskStateWorking, nil)
		}
		return
	}
	var titles []string
	var parts a2a.ContentParts
	for _, a := range pending {
		titles = append(titles, fmt.Sprintf("%q by %s", a.Request.Title, strings.Join(a.Groups, " or ")))
	}
	parts = append(parts, a2a.NewTextPart("Waiting for approval: "+strings.Join(titles, "; ")+"."))
	for _, a := range pending {
		data := map[string]any{"approvalId": a.ID, "title": a.Request.Title, "groups": a.Groups}
		if a.Deadline != nil {
			data["deadline"] = a.Deadline.Format(time.RFC3339)
		}
		p := a2a.NewDataPart(data)
		p.MediaType = "application/json"
		parts = append(parts, p)
	}
	r.approvals.waiting = true
	r.setStatus(ctx, a2a.TaskStateInputRequired, r.agentMessage(parts...))
}

// carry hands over every pending approval and the latest settled ones
// (maxCarriedApprovals), the count that numbers the next one, the early
// decisions and the webhook notices under way.
func (u *approvals) carry(c *continuedTask) {
	c.Approvals = carriedApprovals{Count: u.count, Waiting: u.waiting, Early: slices.Clone(u.early),
		Notices: slices.Clone(u.pendingNotices())}
	settled := 0
	for i := len(u.list) - 1; i >= 0; i-- {
		if u.list[i].State == ApprovalPending || settled < maxCarriedApprovals {
			if u.list[i].State != ApprovalPending {
				settled++
			}
			c.Approvals.List = append(c.Approvals.List, u.list[i])
		}
	}
	slices.Reverse(c.Approvals.List)
}

func (u *approvals) restore(c *continuedTask) {
	u.list = slices.Clone(c.Approvals.List)
	u.count = c.Approvals.Count
	u.early = slices.Clone(c.Approvals.Early)
	u.carriedNotices = slices.Clone(c.Approvals.Notices)
	u.waiting = c.Approvals.Waiting
}
