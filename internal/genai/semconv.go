package genai

import "strings"

// SemconvVersion is the version of the GenAI semantic conventions the spans
// and metrics follow: the first standalone release of
// open-telemetry/semantic-conventions-genai, which depends on the
// OpenTelemetry semantic conventions v1.45.0.
const SemconvVersion = "semantic-conventions-genai v0.1.0"

// Attribute keys of the GenAI semantic conventions.
const (
	AttrOperationName         = "gen_ai.operation.name"
	AttrProviderName          = "gen_ai.provider.name"
	AttrAgentName             = "gen_ai.agent.name"
	AttrAgentID               = "gen_ai.agent.id"
	AttrAgentDescription      = "gen_ai.agent.description"
	AttrConversationID        = "gen_ai.conversation.id"
	AttrRequestModel          = "gen_ai.request.model"
	AttrRequestMaxTokens      = "gen_ai.request.max_tokens"
	AttrRequestStream         = "gen_ai.request.stream"
	AttrOutputType            = "gen_ai.output.type"
	AttrResponseModel         = "gen_ai.response.model"
	AttrResponseFinishReasons = "gen_ai.response.finish_reasons"
	AttrUsageInputTokens      = "gen_ai.usage.input_tokens"
	AttrUsageOutputTokens     = "gen_ai.usage.output_tokens"
	AttrUsageCacheReadTokens  = "gen_ai.usage.cache_read.input_tokens"
	AttrToolName              = "gen_ai.tool.name"
	AttrToolCallID            = "gen_ai.tool.call.id"
	AttrToolType              = "gen_ai.tool.type"
	AttrToolDescription       = "gen_ai.tool.description"
	AttrToolCallArguments     = "gen_ai.tool.call.arguments"
	AttrToolCallResult        = "gen_ai.tool.call.result"
	AttrInputMessages         = "gen_ai.input.messages"
	AttrOutputMessages        = "gen_ai.output.messages"
	AttrSystemInstructions    = "gen_ai.system_instructions"
	AttrErrorType             = "error.type"
	AttrServerAddress         = "server.address"
	AttrServerPort            = "server.port"

	// A2A's own conventions (docs/gen-ai/a2a.md of the same release).
	AttrA2ATaskID    = "a2a.task.id"
	AttrA2ATaskState = "a2a.task.state"
	AttrA2AMethod    = "a2a.method.name"

	// MCP's conventions (docs/gen-ai/mcp.md).
	AttrMCPMethodName = "mcp.method.name"
	AttrMCPSessionID  = "mcp.session.id"

	// a2aflow's own, beside the conventions' (they have none for these).
	AttrCostUSD        = "a2aflow.llm.cost_usd"
	AttrToolGated      = "a2aflow.tool.gated"
	AttrToolDecision   = "a2aflow.tool.decision"
	AttrToolApprovalID = "a2aflow.tool.approval_id"
	// AttrToolPolicyVersion is the version of the approval policies that
	// judged the call.
	AttrToolPolicyVersion = "a2aflow.tool.policy_version"
	AttrTurnAttempt       = "a2aflow.activity.attempt"
	AttrRemoteAgentName   = "a2aflow.remote_agent"
)

// Operation names (gen_ai.operation.name).
const (
	OpChat            = "chat"
	OpGenerateContent = "generate_content"
	OpInvokeAgent     = "invoke_agent"
	OpExecuteTool     = "execute_tool"
)

// Tool types (gen_ai.tool.type): a function the application runs, or an
// extension (an MCP server's tool, a remote agent's skill) run elsewhere.
const (
	ToolTypeFunction  = "function"
	ToolTypeExtension = "extension"
)

// ProviderName is gen_ai.provider.name of an a2aflow provider ("openai",
// "anthropic", "gemini"): the conventions call Gemini's AI Studio API
// gcp.gemini.
func ProviderName(provider string) string {
	switch provider {
	case "gemini":
		return "gcp.gemini"
	}
	return provider
}

// Operation is gen_ai.operation.name of a model call to provider: Gemini's
// generateContent is generate_content, the others' chat APIs chat.
func Operation(provider string) string {
	if provider == "gemini" {
		return OpGenerateContent
	}
	return OpChat
}

// FinishReason is the conventions' name of a model's stop reason (llm's
// StopReason values: end, tool_use, max_tokens, refusal, other).
func FinishReason(stop string) string {
	switch strings.ToLower(stop) {
	case "end":
		return "stop"
	case "tool_use":
		return "tool_call"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	case "":
		return ""
	}
	return "error"
}
