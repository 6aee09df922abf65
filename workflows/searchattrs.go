package workflows

import (
	"context"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Search attributes that make tasks findable in the Temporal Web UI and in
// visibility queries (ListTasks). They are Keyword attributes so that they
// match exactly, e.g. `A2AContextId = "..." AND A2ATaskState = "input-required"`.
var (
	// ContextIDKey is the task's A2A context ID.
	ContextIDKey = temporal.NewSearchAttributeKeyKeyword("A2AContextId")
	// TaskStateKey is the task's A2A state, e.g. "input-required" (the a2a.TaskState value).
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
	}
}

// RegisterSearchAttributes adds the task workflow's search attributes that
// namespace lacks, through the operator service. It is idempotent, so api and
// worker processes call it at start against any Temporal cluster.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	existing, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enums.IndexedValueType{}
	for name, typ := range SearchAttributes() {
		if _, ok := existing.GetCustomAttributes()[name]; ok {
			continue
		}
		if _, ok := existing.GetSystemAttributes()[name]; ok {
			continue
		}
		missing[name] = typ
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes to namespace %q: %w", namespace, err)
	}
	return nil
}
