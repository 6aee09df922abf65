package workflows

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
)
