package workflows

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Search attributes that make tasks findable in the Temporal Web UI and in
// visibility queries (ListTasks). They are Keyword attributes so that they
// match exactly, e.g. `A2AContextId = "..." AND A2ATaskState = "TASK_STATE_INPUT_REQUIRED"`.
var (
	// ContextIDKey is the task's A2A context ID.
	ContextIDKey = temporal.NewSearchAttributeKeyKeyword("A2AContextId")
	// TaskStateKey is the task's A2A state as a2a.TaskState spells it, e.g. "TASK_STATE_INPUT_REQUIRED".
	TaskStateKey = temporal.NewSearchAttributeKeyKeyword("A2ATaskState")
	// AgentKey is the name of the agent that serves the task.
	AgentKey = temporal.NewSearchAttributeKeyKeyword("A2AAgent")
	// SkillKey is the skill the task runs, when the agent sets one.
	SkillKey = temporal.NewSearchAttributeKeyKeyword("A2ASkill")
	// OwnerKey is the principal that created the task ("" without auth).
	OwnerKey = temporal.NewSearchAttributeKeyKeyword("A2AOwner")
)

// SearchAttributes returns every custom search attribute the task workflow
// uses, with its type, for registering on a namespace.
func SearchAttributes() map[string]enums.IndexedValueType {
	return map[string]enums.IndexedValueType{
		ContextIDKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		TaskStateKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		AgentKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		SkillKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		OwnerKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		// Declared in approval.go.
		PendingApprovalsKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD_LIST,
		ApprovalGroupsKey.GetName():   enums.INDEXED_VALUE_TYPE_KEYWORD_LIST,
	}
}
