package llm

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// ToolLoop is the multi-turn tool loop of an LLM agent; make one with [Worker].
type ToolLoop struct {
	tools []Tool
}

// Worker returns the tool loop over tools (radkit's LlmWorker): the model
// answers, calls tools, sees their results, and so on until it answers
// without a tool call.
func Worker(tools ...Tool) *ToolLoop {
	return &ToolLoop{tools: append([]Tool(nil), tools...)}
}

// Run runs the loop on a conversation and returns the model's final answer.
// Each LLM call is one CompleteChat activity (summary "model call N (MODEL),
// turn T: ..."), each activity tool call one "tool:NAME" activity (summary
// "tool NAME" and the arguments), so the
// workflow's history in the Temporal UI reads like the conversation.
//
// The calls of one turn run at once (at most WithParallelToolCalls, default
// 8) when every one of them is concurrent: an activity tool, an MCP tool, or
// a workflow tool marked [Concurrent]. Otherwise they run one after another
// in the order the model asked for them: a workflow tool that asks the user
// pauses the loop until the answer comes. Either way the model reads the
// results in its order. The gated calls of a turn that runs at once wait on
// their approvals together, each on a record of its own.
//
// A tool's error goes back to the model as the call's result, so it can
// recover or explain; a canceled task, a workflows.Reject from a tool and a
// failed LLM call end the loop with that error. A loop that has not
// finished after WithMaxTurns LLM calls (default 12) fails with a
// non-retryable ErrTypeTooManyTurns error.
func (l *ToolLoop) Run(ctx workflow.Context, thread workflows.Thread, opts ...Option) (string, error) {
	o := newOptions(opts)
	o.applyDefaults(ctx)
	defer usageMemo(ctx, o)
	byName := map[string]Tool{}
	specs := make([]ToolSpec, 0, len(l.tools))
	for _, t := range l.tools {
		if t.err != nil {
			return "", temporal.NewNonRetryableApplicationError(t.err.Error(), ErrTypeInvalidRequest, nil)
		}
		if _, dup := byName[t.spec.Name]; dup {
			return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("two tools are named %q", t.spec.Name), ErrTypeInvalidRequest, nil)
		}
		byName[t.spec.Name] = t
		specs = append(specs, t.spec)
	}
	if len(o.safeByDefault) > 0 {
		ctx = workflow.WithValue(ctx, safeByDefaultKey{}, o.safeByDefault)
	}
	msgs := threadMessages(thread)
	if len(msgs) == 0 {
		return "", temporal.NewNonRetryableApplicationError("the conversation is empty: nothing to answer", ErrTypeInvalidRequest, nil)
	}
	if err := fetchFiles(ctx, o, msgs); err != nil {
		return "", err
	}
	for turn := 1; turn <= o.maxTurns; turn++ {
		req := Request{Model: o.model, Provider: o.provider, System: o.system, Messages: msgs, Tools: specs, MaxTokens: o.maxTokens}
		resp, err := complete(ctx, o, req, o.callSummary(fmt.Sprintf("turn %d", turn), lastText(msgs)))
		if err != nil {
			return "", err
		}
		if len(resp.ToolCalls) == 0 {
			return resp.Text, nil
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls})
		results, err := callTools(ctx, o, byName, resp.ToolCalls, resp.Text)
		if err != nil {
			return "", err
		}
		msgs = append(msgs, results...)
	}
	return "", temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the model did not finish within %d turns", o.maxTurns), ErrTypeTooManyTurns, nil)
}

// loopEnding returns err when it must end the loop rather than go back to the
// model: the task was canceled, or a tool rejected the task.
func loopEnding(ctx workflow.Context, err error) error {
	var rejected *workflows.RejectedError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case temporal.IsCanceledError(err), errors.As(err, &rejected):
		return err
	}
	return nil
}

// toolErrorText is what the model reads of a tool's failure: the activity's
// own message, without Temporal's wrapping.
func toolErrorText(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Message() != "" {
		return "error: " + appErr.Message()
	}
	return "error: " + err.Error()
}

func lastText(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Text != "" {
			if m.Role == RoleTool {
				return "tool result " + m.Text
			}
			return string(m.Role) + ": " + m.Text
		}
	}
	return ""
}

// traceToolCall reports a finished call to the task's tool call tracer
// (the worker's GenAI spans), if it has one. It records nothing in history.
func traceToolCall(ctx workflow.Context, tool Tool, call ToolCall, gate gateOutcome, started time.Time, result Message) {
	tracer := wire.ToolCallTracerOf(ctx)
	if tracer == nil {
		return
	}
	c := wire.ToolCallTrace{Tool: call.Name, CallID: call.ID, Type: tool.toolType(), Gated: tool.gate != nil,
		Decision: gate.decision, ApprovalID: gate.approvalID, PolicyVersion: gate.policyVersion, Arguments: call.Arguments, Start: started, End: workflow.Now(ctx)}
	if c.Decision == "" {
		c.Decision = decisionNone // refused before its gate: arguments that do not fit
	}
	if result.IsError {
		c.Error = result.Text
	} else {
		c.Result = result.Text
	}
	tracer.TraceToolCall(ctx, c)
}

// parallelToolCallsChange is the workflow.GetVersion change of running a
// turn's tool calls at once: loops recorded before ran them one by one.
const parallelToolCallsChange = "a2aflow.parallel-tool-calls"

// callTools runs the calls of one turn and returns their results in the
// model's order, or the error that ends the loop.
func callTools(ctx workflow.Context, o *callOptions, byName map[string]Tool, calls []ToolCall, reason string) ([]Message, error) {
	logger := workflow.GetLogger(ctx)
	results := make([]Message, len(calls))
	one := func(ctx workflow.Context, i int) error {
		call := calls[i]
		result := Message{Role: RoleTool, ToolCallID: call.ID}
		tool, ok := byName[call.Name]
		if !ok {
			result.Text, result.IsError = fmt.Sprintf("there is no tool named %q", call.Name), true
			results[i] = result
			return nil
		}
		started := workflow.Now(ctx)
		out, gate, err := tool.run(ctx, call, reason)
		if err != nil {
			if stop := loopEnding(ctx, err); stop != nil {
				return stop
			}
			logger.Info("tool failed", "tool", call.Name, "error", err)
			out, result.IsError = toolErrorText(err), true
		}
		result.Text = out
		results[i] = result
		traceToolCall(ctx, tool, call, gate, started, result)
		return nil
	}
	concurrent := len(calls) > 1 && o.parallel > 1
	for _, call := range calls {
		if t, ok := byName[call.Name]; ok && !t.concurrent() {
			concurrent = false
		}
	}
	if !concurrent || workflow.GetVersion(ctx, parallelToolCallsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		for i := range calls {
			if err := one(ctx, i); err != nil {
				return nil, err
			}
		}
		return results, nil
	}
	var stop error
	running, finished := 0, 0
	for i := range calls {
		if err := workflow.Await(ctx, func() bool { return running < o.parallel }); err != nil {
			return nil, err
		}
		running++
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { running--; finished++ }()
			if err := one(ctx, i); err != nil && stop == nil {
				stop = err
			}
		})
	}
	if err := workflow.Await(ctx, func() bool { return finished == len(calls) }); err != nil {
		return nil, err
	}
	if stop != nil {
		return nil, stop
	}
	return results, nil
}
