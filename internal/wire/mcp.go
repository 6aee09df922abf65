package wire

import "encoding/json"

// Activities of MCP tools (the MCP client: internal/activities/mcp.go).
// Their inputs name an MCP server of the worker's configuration by its
// name; where it is and how to reach it (a URL and the name of its
// credentials, or a command) stay in the worker's configuration, out of
// history.
// Their activity names are in names.go (ActivityListMCPTools,
// ActivityCallMCPTool).
const (
	// ErrTypeMCPToolError: the MCP server answered the call with an error
	// result (isError); the message is what it said.
	ErrTypeMCPToolError = "MCPToolError"
	// ErrTypeUnknownMCPServer: the worker has no MCP server of that name.
	ErrTypeUnknownMCPServer = "UnknownMCPServer"

	// MCPIdempotencyKeyMeta is the _meta key of a tools/call request that
	// carries the call's idempotency key: the same on every retry of one
	// call (an approved call's names its approval), so that a server can
	// apply a side effect once.
	MCPIdempotencyKeyMeta = "io.a2aflow/idempotency-key"
)

// MCPListToolsInput is the argument of ActivityListMCPTools.
type MCPListToolsInput struct {
	Server string `json:"server"`
}

// MCPToolList is the result of ActivityListMCPTools.
type MCPToolList struct {
	Server string    `json:"server"`
	Tools  []MCPTool `json:"tools"`
}

// MCPTool is one tool of an MCP server as the model is shown it.
type MCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Annotations are the server's hints about the tool (readOnlyHint,
	// destructiveHint, idempotentHint, openWorldHint), which the approval
	// policies read; absent in lists recorded before them.
	Annotations ToolAnnotations `json:"annotations,omitempty"`
}

// MCPCallToolInput is the argument of ActivityCallMCPTool.
type MCPCallToolInput struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MCPCallToolResult is the result of ActivityCallMCPTool: what the model
// reads of the server's answer (text content as it is; structured content
// as JSON; images, audio and resources described, text resources inline).
type MCPCallToolResult struct {
	Text string `json:"text"`
}
