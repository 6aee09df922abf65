package policies

import (
	"fmt"
	"sync"

	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// Schema is the Cedar schema every policy is validated against: what a
// policy may name and read.
//
//   - principal: Caller::"NAME", the principal the task acts for (its
//     owner, "" without authentication), in Tenant::"NAME", its tenant;
//   - action: Action::"callTool" (an LLM tool loop's call) or
//     Action::"approveStep" (a skill's Task.Approve);
//   - resource: Task::"ID", in Agent::"NAME", with its contextId;
//   - context of callTool: tool (its name), source ("go", "workflow",
//     "mcp:SERVER", "builtin", "agent:REMOTE"), annotations (readOnly,
//     destructive, idempotent, openWorld), arguments (the JSON text), and
//     the arguments by type as tags: numbers (Long: every number; a
//     fraction is rounded up, so 1000.5 counts as 1001), texts (String)
//     and flags (Bool), by name, nested objects' members as "a.b";
//   - context of approveStep: step (ApprovalRequest.Step), title, groups.
//
// Arguments are tags because their names are each tool's own: read one
// with context.numbers.hasTag("amount") && context.numbers.getTag("amount")
// > 1000 (the validator refuses a getTag that hasTag does not guard).
const Schema = `entity Tenant;
entity Caller in [Tenant];
entity Agent;
entity Task in [Agent] {
  contextId: String,
};
entity Numbers tags Long;
entity Texts tags String;
entity Flags tags Bool;
type ToolAnnotations = {
  readOnly: Bool,
  destructive: Bool,
  idempotent: Bool,
  openWorld: Bool,
};
action callTool appliesTo {
  principal: Caller,
  resource: Task,
  context: {
    tool: String,
    source: String,
    annotations: ToolAnnotations,
    arguments: String,
    numbers: Numbers,
    texts: Texts,
    flags: Flags,
  },
};
action approveStep appliesTo {
  principal: Caller,
  resource: Task,
  context: {
    step: String,
    title: String,
    groups: Set<String>,
  },
};
`

var schemaValidator = sync.OnceValues(func() (*validate.Validator, error) {
	var s schema.Schema
	s.SetFilename("schema")
	if err := s.UnmarshalCedar([]byte(Schema)); err != nil {
		return nil, fmt.Errorf("the policy schema: %w", err)
	}
	r, err := s.Resolve()
	if err != nil {
		return nil, fmt.Errorf("the policy schema: %w", err)
	}
	return validate.New(r), nil
})
