package wire

// Names shared by the API and the worker. Changing one breaks tasks that are
// already running, so they are constants and never derived from Go names.
const (
	// TaskWorkflowName is the Temporal workflow type of every A2A task.
	TaskWorkflowName = "TaskWorkflow"

	// DefaultTaskQueue is the task queue the worker polls when none is configured.
	DefaultTaskQueue = "a2aflow"

	// UpdateSendMessage adds a user message to a task (A2A SendMessage). Its
	// argument is a [SendMessageInput] and its result a [TaskUpdateResult]
	// once the task is interrupted or terminal (or at once with
	// ReturnImmediately); the caller reads the task with [QueryGetTask].
	UpdateSendMessage = "SendMessage"

	// UpdateCancelTask cancels a task (A2A CancelTask). Its argument is a
	// [CancelTaskInput] and its result a [TaskUpdateResult] once the task
	// ended.
	UpdateCancelTask = "CancelTask"

	// QueryGetTask returns the task (A2A GetTask). Its argument is a
	// [GetTaskInput] and its result a [*TaskSnapshot], which decodes as an
	// [*a2a.Task] too (with the recent history only).
	QueryGetTask = "GetTask"
)

// Names of a2aflow's built-in activities. The workflows call them by these
// names and activities.Set.Register registers each implementation under its
// name, in one place: a name is part of every running task's history, so it is
// a constant, never derived from a Go method (renaming a method must not
// break parked tasks). TestActivityNames checks that every name the
// workflows call is registered.
const (
	// ActivityNotifyApprovalWebhook POSTs an [ApprovalNotice] to the webhook
	// the worker has configured for the notice's group, and does nothing for
	// a group without one. Approve runs it for every group that may decide,
	// when a request starts waiting and again when it escalates; the
	// webhooks and their tokens live only in the worker's configuration.
	// activities.ApprovalWebhooks implements it.
	ActivityNotifyApprovalWebhook = "NotifyApprovalWebhook"

	// ActivitySendRemoteMessage sends one message to a remote agent (a
	// [RemoteSendInput], answering a [RemoteTaskResult]) for
	// [Task.CallAgent]. It asks the remote agent to return at once, so it
	// never waits for the remote work. The remote task's ID is kept in
	// workflow state (this activity's result is in history), so neither a
	// retry nor a restart ever starts a second remote task.
	// activities.Remote implements the three delegation activities.
	ActivitySendRemoteMessage = "SendRemoteMessage"
	// ActivityFollowRemoteTask follows a remote task (a [RemoteFollowInput],
	// answering a [RemoteTaskResult]) until it ends, waits for input, or the
	// window passes: by streaming when the remote card offers it, else by
	// polling, heartbeating all along.
	ActivityFollowRemoteTask = "FollowRemoteTask"
	// ActivityCancelRemoteTask cancels a remote task (a [RemoteCancelInput]).
	// A task that is already terminal or gone is not an error.
	ActivityCancelRemoteTask = "CancelRemoteTask"

	// ActivityStoreHistoryPage writes a page of older messages to the payload
	// store. Its argument is a [StoreHistoryPageInput], its result the stored
	// [HistoryPage]. activities.HistoryPages implements it.
	ActivityStoreHistoryPage = "StoreHistoryPage"

	// ActivityDeliverPush POSTs one task event to one webhook. Its argument
	// is a [PushDelivery]. activities.Webhooks implements it.
	ActivityDeliverPush = "DeliverPushNotification"

	// ActivityFetchTask reads one task by ID (a [FetchTaskInput], answering
	// an *a2a.Task). activities.Tasks implements it.
	ActivityFetchTask = "FetchTask"
	// ActivityContextHistory reads the history of a context's earlier
	// tasks (a [ContextHistoryInput], answering []*a2a.Message).
	ActivityContextHistory = "ContextHistory"

	// ActivityCompleteChat makes one LLM call (an llm.Request in, an
	// llm.Response out). activities.LLM implements it.
	ActivityCompleteChat = "CompleteChat"
	// ActivityFetchFile fetches a file part given by URI (an
	// llm.FetchFileInput in, an llm.FetchedFile out) through the guarded
	// outbound client, for the model to read. activities.Files implements it.
	ActivityFetchFile = "FetchFile"

	// ActivityAgentSkills reads a remote agent's skills from its card in the
	// agent directory (an activities.AgentSkillsInput, answering an
	// activities.AgentSkillsOutput), for an agent that has one tool per
	// remote skill. activities.Directory implements it.
	ActivityAgentSkills = "AgentSkills"

	// ActivityListMCPTools lists an MCP server's tools (an MCPListToolsInput
	// in, an MCPToolList out). Its result is in history, so a replay builds
	// the same tools the model was shown. activities.MCP implements both
	// MCP activities.
	ActivityListMCPTools = "ListMCPTools"
	// ActivityCallMCPTool calls one tool of an MCP server (an
	// MCPCallToolInput in, an MCPCallToolResult out). A result the server
	// marks as an error fails the activity with ErrTypeMCPToolError (not
	// retried): the model reads it as the tool's error.
	ActivityCallMCPTool = "CallMCPTool"
)

// BuiltinActivities lists the names of a2aflow's built-in activities. An
// agent's own activities (Agent.Activities) may not take one of them. LLM
// tools run as activities named with llm.ToolActivityPrefix and are not
// listed.
func BuiltinActivities() []string {
	return []string{
		ActivityNotifyApprovalWebhook, ActivitySendRemoteMessage, ActivityFollowRemoteTask,
		ActivityCancelRemoteTask, ActivityStoreHistoryPage, ActivityDeliverPush, ActivityFetchTask,
		ActivityContextHistory, ActivityCompleteChat, ActivityFetchFile,
		ActivityAgentSkills, ActivityListMCPTools, ActivityCallMCPTool,
	}
}

// Error types carried by temporal.ApplicationError values that the update
// validators return. The API maps each to its A2A error in one place.
const (
	// ErrTypeUnsupportedOperation: the task is terminal and takes no more messages.
	ErrTypeUnsupportedOperation = "UnsupportedOperation"
	// ErrTypeTaskNotCancelable: the task is already terminal.
	ErrTypeTaskNotCancelable = "TaskNotCancelable"
	// ErrTypeInvalidParams: the message itself is malformed.
	ErrTypeInvalidParams = "InvalidParams"
	// ErrTypeTaskNotFound: the task belongs to another agent, so this
	// agent's endpoint does not know it.
	ErrTypeTaskNotFound = "TaskNotFound"
	// ErrTypeDuplicateMessage: a message with this ID was already received
	// (by an earlier run of the task): the retry is answered with the task
	// as it is, and nothing is recorded twice.
	ErrTypeDuplicateMessage = "DuplicateMessage"
	// ErrTypeContinuing: the task is continuing as new at this moment; the
	// same write succeeds on the next run, a few milliseconds later.
	ErrTypeContinuing = "ContinuingAsNew"
	// ErrTypeGenerationMismatch: the message's IfGenerationMatch is not the
	// task's generation (A2A 1.1 TaskGenerationMismatchError), or another
	// conditional message already won at that generation.
	ErrTypeGenerationMismatch = "TaskGenerationMismatch"
	// ErrTypePushConfigNotFound: the caller's task has no push notification
	// config of that ID. A delete refused so has done what it was asked
	// (A2A §3.1.10: deleting is idempotent), and the API answers it so.
	ErrTypePushConfigNotFound = "PushConfigNotFound"
)
