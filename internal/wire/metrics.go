package wire

// Metrics the task workflow emits. It emits them through
// workflow.GetMetricsHandler, which emits nothing while the workflow
// replays: a worker rebuilding a task from its history (after a restart,
// or when the task left its cache) does not count the task's past again.
// The Temporal client's handler in a2aflow (package metrics) serves them at
// /metrics with a2aflow's labels only (agent, state, outcome): the SDK's
// tags such as namespace and task_queue are dropped, a task ID is never one.
// Emitting a metric records nothing in history, so these need no
// workflow.GetVersion.
const (
	// MetricTasksEnded counts tasks that reached a terminal state, by
	// agent and state: a2aflow_tasks_ended_total.
	MetricTasksEnded = "a2aflow_tasks_ended"
	// MetricInputRequired times each stretch a task spent input-required
	// (asking its user, waiting for approvals or a waitpoint), from entering
	// the state to leaving it, by agent: a2aflow_input_required_seconds.
	MetricInputRequired = "a2aflow_input_required"
	// MetricApprovalWait times an approval from its request to its
	// settlement, by agent and outcome (ApprovalOutcome...):
	// a2aflow_approval_wait_seconds.
	MetricApprovalWait = "a2aflow_approval_wait"
	// MetricApprovalDecision times an approval from its request to its
	// decision, once per group that decided it (its groups when settled:
	// after an escalation, the escalation's), by agent, group and outcome
	// (approved, rejected, expired; not canceled, which nobody decided):
	// a2aflow_approval_decision_seconds.
	MetricApprovalDecision = "a2aflow_approval_decision"
)

// Outcomes of an approval, the outcome label of MetricApprovalWait.
const (
	ApprovalOutcomeApproved = "approved" // approved by its approvers
	ApprovalOutcomeRejected = "rejected" // rejected by an approver
	ApprovalOutcomeExpired  = "expired"  // settled by its deadline (OnTimeout), approved or not
	ApprovalOutcomeCanceled = "canceled" // the task ended while it was pending
)
