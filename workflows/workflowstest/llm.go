package workflowstest

import (
	"context"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/llm"
)

// LLM answers the task's model calls (llm.Worker, llm.Function) with p, as
// a2aflow's worker answers them with the configured provider, errors
// classified for Temporal's retries the same way. A scripted p ([LLMFunc])
// makes an LLM agent's test exact: which tool it calls, with which
// arguments, in which turn. The tools run for real; replace one with the
// environment's OnActivity(tool.ActivityName(), ...).
func (e *Env) LLM(p llm.Provider) {
	e.RegisterActivity(&activities.LLM{Provider: p})
}

// LLMFunc is a scripted llm.Provider: each model call is answered by the
// function, which reads the conversation so far in req.Messages (the tool
// results included) and returns the model's next turn.
type LLMFunc func(req llm.Request) (llm.Response, error)

// Name is "scripted".
func (f LLMFunc) Name() string { return "scripted" }

// Model is "scripted".
func (f LLMFunc) Model() string { return "scripted" }

// Complete answers with f.
func (f LLMFunc) Complete(_ context.Context, req llm.Request) (llm.Response, error) { return f(req) }
