// Package genai names a2aflow's agent work the way agent observability
// tools read it: the OpenTelemetry GenAI semantic conventions
// (open-telemetry/semantic-conventions-genai v0.1.0, see [SemconvVersion]).
// A task's turn is an `invoke_agent {agent}` span, each model call a
// `chat {model}` span (`generate_content` for Gemini), each tool call an
// `execute_tool {tool}` span, each delegation an `invoke_agent` client span
// of the remote agent, each MCP call a `tools/call {tool}` client span; the
// model calls are measured by the gen_ai.client.* histograms (package
// metrics).
//
// The spans of a turn's model and tool calls are children of the turn's
// span, whose IDs are derived from the task, so that a worker that replays
// the task after a crash, or a turn days later, still finds them: the
// worker's interceptor (package engine) carries the turn's span context to
// the activities in a Temporal header ([ContextWithTurn]), and the
// [IDGenerator] of a2aflow's tracer provider gives a span the ID
// [WithSpanID] chose for it. Message contents go on the spans only when the
// operator opts in ([CaptureContent]).
package genai
