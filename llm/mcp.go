package llm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// MCPOption chooses among an MCP server's tools.
type MCPOption func(*mcpOptions)

type mcpOptions struct {
	only []string
	opts map[string][]ToolOption
}

// OnlyTools offers the model only the server's tools of these names (an
// allow-list); the default offers every tool the server lists.
func OnlyTools(names ...string) MCPOption {
	return func(o *mcpOptions) { o.only = append(o.only, names...) }
}

// ToolOptions applies opts to the server's tool of that name, e.g. a gate:
//
//	llm.ToolOptions("pay_invoice", llm.RequireApproval(gate))
func ToolOptions(name string, opts ...ToolOption) MCPOption {
	return func(o *mcpOptions) {
		if o.opts == nil {
			o.opts = map[string][]ToolOption{}
		}
		o.opts[name] = append(o.opts[name], opts...)
	}
}

// MCPListOptions are the activity options of reading an MCP server's tool
// list: 30 seconds per attempt, retried for up to about two minutes.
var MCPListOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, MaximumAttempts: 10},
}

// MCPCallOptions are the activity options of an MCP tool call: two minutes
// per attempt, five attempts; the call heartbeats every five seconds, so a
// worker that dies mid-call has it retried after 20 seconds. The server
// gets the call's idempotency key in the request's _meta
// (wire.MCPIdempotencyKeyMeta), the same on every attempt.
var MCPCallOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Minute,
	HeartbeatTimeout:    20 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
}

var unsafeToolRune = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// MCP returns the tools of the worker's MCP server named server (the
// config file's [[mcp-servers]], or a2aflow.WithMCPServer) for a Worker
// loop. The tool list is read by an activity, so a replay builds the same
// tools; each call of a tool is one CallMCPTool activity, retried by
// Temporal, whose summary names the server, the tool and the arguments. A
// result the server marks as an error goes back to the model as the tool's
// error. The tools are concurrent: the calls of one turn run at once.
func MCP(ctx workflow.Context, server string, opts ...MCPOption) ([]Tool, error) {
	var o mcpOptions
	for _, opt := range opts {
		opt(&o)
	}
	var list wire.MCPToolList
	actx := workflow.WithActivityOptions(ctx, withSummary(MCPListOptions, "tools of MCP server "+server))
	if err := workflow.ExecuteActivity(actx, wire.ActivityListMCPTools, wire.MCPListToolsInput{Server: server}).Get(ctx, &list); err != nil {
		return nil, fmt.Errorf("the tools of MCP server %q: %w", server, err)
	}
	var tools []Tool
	for _, mt := range list.Tools {
		if len(o.only) > 0 && !slices.Contains(o.only, mt.Name) {
			continue
		}
		tools = append(tools, mcpTool(server, mt).With(o.opts[mt.Name]...))
	}
	for _, name := range o.only {
		if !slices.ContainsFunc(list.Tools, func(t wire.MCPTool) bool { return t.Name == name }) {
			workflow.GetLogger(ctx).Warn("an allowed MCP tool is not on its server", "server", server, "tool", name)
		}
	}
	return tools, nil
}

// mcpTool is one MCP tool as the model sees it: the server's name for it
// (made fit for every provider), its description and its input schema.
func mcpTool(server string, mt wire.MCPTool) Tool {
	name := unsafeToolRune.ReplaceAllString(mt.Name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	description := mt.Description
	if description == "" {
		description = mt.Title
	}
	schema := mt.InputSchema
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	t := Tool{spec: ToolSpec{Name: name, Description: description, Parameters: schema}, parallel: true, extension: true,
		source: "mcp:" + server, annotations: mt.Annotations}
	if !toolName.MatchString(name) {
		t.err = fmt.Errorf("MCP server %q: tool name %q: %w", server, mt.Name, ErrInvalidRequest)
	}
	t.check = func(arguments string) error {
		args := json.RawMessage(arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		// Checking JSON against a schema is deterministic (the compiler
		// iterates over maps, its result does not depend on the order).
		err := wire.CheckJSON(schema, args, 1<<20, "the arguments") //workflowcheck:ignore
		if err != nil {
			return &argumentsError{err}
		}
		return nil
	}
	t.invoke = func(ctx workflow.Context, call ToolCall) (string, error) {
		ao := toolCallOptions(ctx, MCPCallOptions, "tool "+server+"/"+mt.Name+" (MCP) "+call.Arguments)
		var res wire.MCPCallToolResult
		in := wire.MCPCallToolInput{Server: server, Tool: mt.Name, Arguments: json.RawMessage(call.Arguments)}
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), wire.ActivityCallMCPTool, in).Get(ctx, &res); err != nil {
			return "", err
		}
		return res.Text, nil
	}
	return t
}
