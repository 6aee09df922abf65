// Package llm calls large language models from a2aflow agents, durably.
//
// It has two halves. The provider half is plain Go: a small provider-neutral
// [Provider] interface (one [Request] in, one [Response] out) with two
// implementations on the official client libraries, [NewOpenAI] for any
// OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
// llama.cpp) and [NewAnthropic] for Anthropic Messages. [FromEnv] picks one
// from the environment. The worker runs them in the CompleteChat activity
// (activities.LLM), so Temporal retries a failed call: client-side retries are
// off, 429 and 5xx are retried by Temporal (after Retry-After when the
// provider sends one), other 4xx fail at once. API keys stay in the worker's
// configuration and never reach workflow history, errors or logs.
//
// The workflow half is deterministic workflow code for skill handlers:
//
//	plan, err := llm.Function[Plan](ctx, "Plan a trip to "+dest, llm.WithUsage(t))
//	answer, err := llm.Worker(llm.AskUser(t), clock, calculator).Run(ctx, t.Thread(), llm.WithUsage(t))
//
// [Function] is one turn with structured output: the JSON schema of T is sent
// as the response format, the answer is decoded and validated (the
// `validate` struct tags of github.com/go-playground/validator), and an
// invalid answer is asked again with the validation error, a bounded number
// of times. [Worker] is the multi-turn tool loop: every LLM call and every
// activity tool call is its own Temporal activity, with a summary so the
// Temporal UI reads like the conversation. A tool made with [WorkflowTool]
// runs in the workflow instead, so it can ask the user ([AskUser]) or wait for
// days; the loop simply waits with it, across restarts.
//
// Token usage of every call is added to the task's metadata when the call
// gets [WithUsage].
package llm
