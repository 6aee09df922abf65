package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// MCP's tools (server.go serves them). Each agent is a tool of its name: a
// call sends its message to a new task of the agent (or, with task_id, to
// that task of the caller's) through the agent's TaskService, the code path
// of A2A's SendMessage (TaskService.Send; the workflow's validators check
// the caller), and follows the task's events (TaskService.Follow) until it
// completes, fails, is rejected or canceled, or waits for an answer. Then:
//
//   - completed: the reply's text and the artifacts as content (text parts
//     as text, data parts as JSON text, files as resource links, images as
//     images), the task in structured content;
//   - failed, rejected, canceled: a tool error (isError) saying so;
//   - a question for the caller (input-required): asked with an
//     elicitation when the client declared it can show one — a
//     server-to-client request up to protocol 2025-11-25, an input request
//     of the result from 2026-07-28 (SEP-2322) — the answer goes to the
//     task and the call goes on; otherwise (or when the user declines) the
//     result holds the task's ID and its question, which the caller answers
//     with a2aflow_reply;
//   - a credential request (auth-required): never elicited (MCP forbids
//     asking secrets in a form); the result holds the question, and the
//     credential sent with a2aflow_reply takes the path of an A2A answer: it
//     is stored sealed and the task gets a reference;
//   - waiting for others (approvers, a waitpoint), or still working when
//     the server shuts down: the task's ID and state, to read later with
//     a2aflow_get_task.
//
// While a call waits, each status change of the task is a progress
// notification when the call carries a progress token.
//
// a2aflow_reply, a2aflow_get_task and a2aflow_cancel_task act on a task by
// its ID, the caller's own only: a task of another owner, like one that
// does not exist, is not found. Errors a request can correct (a task not
// found, a task that ended, an invalid argument) are tool errors whose
// structured content names the A2A error and its JSON-RPC code, as MCP
// wants for errors a model may correct; the server's own (Temporal
// unavailable) are JSON-RPC errors, with the codes of A2A's JSON-RPC
// binding.

// The helper tools.
const (
	mcpToolReply  = "a2aflow_reply"
	mcpToolGet    = "a2aflow_get_task"
	mcpToolCancel = "a2aflow_cancel_task"
)

// agentToolInput is the arguments of an agent's tool.
type agentToolInput struct {
	Message   string `json:"message" jsonschema:"your message to the agent: a request, or the answer to the question of the task named by task_id"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"continue this task of yours (one that waits for your answer) instead of starting a new one"`
	ContextID string `json:"context_id,omitempty" jsonschema:"start the new task in this context, with earlier tasks of the same conversation"`
}

// replyInput is a2aflow_reply's arguments.
type replyInput struct {
	TaskID  string `json:"task_id" jsonschema:"the task that asked"`
	Message string `json:"message" jsonschema:"the answer to the task's question"`
}

// taskInput is the arguments of a2aflow_get_task and a2aflow_cancel_task.
type taskInput struct {
	TaskID string `json:"task_id" jsonschema:"the task's ID, as a call of an agent's tool answered it"`
}

// addTools adds a tool per agent and the helper tools.
func (m *Server) addTools() {
	for _, name := range m.agents.Names() {
		svc := m.services[name]
		mcp.AddTool(m.server, &mcp.Tool{Name: name, Title: name, Description: agentToolDescription(svc.Agent()),
			Annotations: &mcp.ToolAnnotations{Title: name, OpenWorldHint: new(true)}},
			func(ctx context.Context, req *mcp.CallToolRequest, in agentToolInput) (*mcp.CallToolResult, any, error) {
				return m.call(ctx, req, func(ctx context.Context) (*mcp.CallToolResult, error) {
					return m.callAgent(ctx, req, svc, in)
				})
			})
	}
	mcp.AddTool(m.server, &mcp.Tool{Name: mcpToolReply, Title: "Answer a task's question",
		Description: "Sends the answer to the question of a task of yours (state input-required or auth-required), " +
			"as an agent's tool answered it, and answers like that tool: when the task completes, fails or asks again. " +
			"A credential asked for (auth-required) is stored sealed; the task gets a reference to it.",
		Annotations: &mcp.ToolAnnotations{Title: "Answer a task's question", OpenWorldHint: new(true)}},
		func(ctx context.Context, req *mcp.CallToolRequest, in replyInput) (*mcp.CallToolResult, any, error) {
			return m.call(ctx, req, func(ctx context.Context) (*mcp.CallToolResult, error) { return m.reply(ctx, req, in) })
		})
	mcp.AddTool(m.server, &mcp.Tool{Name: mcpToolGet, Title: "Read a task",
		Description: "Reads a task of yours: its state, its question when it waits for your answer, its reply and artifacts when it completed.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a task", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}},
		func(ctx context.Context, req *mcp.CallToolRequest, in taskInput) (*mcp.CallToolResult, any, error) {
			return m.call(ctx, req, func(ctx context.Context) (*mcp.CallToolResult, error) { return m.getTask(ctx, in) })
		})
	mcp.AddTool(m.server, &mcp.Tool{Name: mcpToolCancel, Title: "Cancel a task",
		Description: "Cancels a task of yours that has not ended, and answers with the task.",
		Annotations: &mcp.ToolAnnotations{Title: "Cancel a task", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}},
		func(ctx context.Context, req *mcp.CallToolRequest, in taskInput) (*mcp.CallToolResult, any, error) {
			return m.call(ctx, req, func(ctx context.Context) (*mcp.CallToolResult, error) { return m.cancelTask(ctx, in) })
		})
}

// listPermittedTools is the middleware that lists, in tools/list, only the
// tools of agents the caller may use (guard/permissions.go); the helper tools
// are listed to all.
func (m *Server) listPermittedTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		var request context.Context
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			request, _ = extra.TokenInfo.Extra[mcpRequestKey].(context.Context)
		}
		if request == nil {
			return res, err
		}
		filtered := *list
		filtered.Tools = nil
		for _, tool := range list.Tools {
			if _, agent := m.services[tool.Name]; agent && !guard.MayUse(request, tool.Name) {
				continue
			}
			filtered.Tools = append(filtered.Tools, tool)
		}
		return &filtered, nil
	}
}

// agentToolDescription describes agent's tool from its card: what it does,
// its skills, and how a call goes.
func agentToolDescription(agent *workflows.Agent) string {
	card := taskservice.AgentCard(agent, "")
	var b strings.Builder
	b.WriteString(strings.TrimSpace(card.Description))
	if b.Len() == 0 {
		fmt.Fprintf(&b, "The agent %s.", agent.Name)
	}
	if len(card.Skills) > 0 {
		b.WriteString("\n\nSkills:")
		for _, sk := range card.Skills {
			fmt.Fprintf(&b, "\n- %s", sk.Name)
			if sk.Description != "" {
				fmt.Fprintf(&b, ": %s", sk.Description)
			}
			if len(sk.Examples) > 0 {
				fmt.Fprintf(&b, " (for example: %q)", strings.Join(sk.Examples, `", "`))
			}
		}
	}
	b.WriteString("\n\nThe call starts a task of this agent with your message (or continues one with task_id) and answers " +
		"when the task completes, fails or asks a question; a question your client cannot show you comes back with " +
		"the task's ID, to answer with a2aflow_reply.")
	return b.String()
}

// call runs one tool call as its caller (mcpCallContext) and turns an
// error into the call's answer (toolFailure). The SDK runs a call in a
// goroutine of its own, which no HTTP middleware guards: a panic is
// answered here as an internal error.
func (m *Server) call(ctx context.Context, req *mcp.CallToolRequest, run func(context.Context) (*mcp.CallToolResult, error)) (_ *mcp.CallToolResult, _ any, rpcErr error) {
	m.calls.Add(1)
	defer m.calls.Add(-1)
	defer func() {
		if r := recover(); r != nil {
			m.cfg.Logger.ErrorContext(ctx, "panic serving an MCP tool call", "tool", req.Params.Name, "panic", r)
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		}
	}()
	ctx, done, err := m.callContext(ctx, req)
	if err != nil {
		res, rpcErr := m.toolFailure(context.Background(), err)
		return res, nil, rpcErr
	}
	defer done()
	guard.NoteMethod(ctx, "tools/call "+req.Params.Name) // the access log's method
	res, err := run(ctx)
	if err != nil {
		res, rpcErr := m.toolFailure(ctx, err)
		return res, nil, rpcErr
	}
	return res, nil, nil
}

// toolFailure answers a call that failed with err (an A2A error): a
// JSON-RPC error for the server's own failures, a tool error for the rest.
func (m *Server) toolFailure(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	code := apierror.CodeOf(err)
	msg := apierror.Message(err)
	switch code.Sentinel {
	case a2a.ErrInternalError, a2a.ErrServerError, apierror.ErrTooManyRequests, a2a.ErrUnauthenticated:
		if ctx.Err() == nil && code.Sentinel == a2a.ErrInternalError {
			m.cfg.Logger.ErrorContext(ctx, "MCP tool call failed", "error", err)
		}
		rpcErr := &jsonrpc.Error{Code: int64(code.RPCCode), Message: msg}
		// The data of A2A's JSON-RPC binding: the ErrorInfo, and whether
		// sending again may succeed.
		_, body := apierror.Body(apierror.JSONRPC, nil, 0, err)
		if obj, ok := body.(map[string]any)["error"].(map[string]any); ok {
			if data, err := json.Marshal(obj["data"]); err == nil {
				rpcErr.Data = data
			}
		}
		return nil, rpcErr
	}
	reason := code.Reason
	if reason == "" {
		reason = a2a.ErrorReason(code.Sentinel)
	}
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: map[string]any{"error": map[string]any{
			"code": code.RPCCode, "reason": reason, "message": msg,
		}},
	}
	return res, nil
}

// callAgent is the tool of svc's agent.
func (m *Server) callAgent(ctx context.Context, req *mcp.CallToolRequest, svc *taskservice.TaskService, in agentToolInput) (*mcp.CallToolResult, error) {
	if err := guard.PermitAgent(ctx, svc.Agent().Name); err != nil { // guard/permissions.go
		return nil, err
	}
	ctx = taskservice.WithNegotiated(ctx, taskservice.Negotiate(requestHeader(req), svc.Agent()))
	if err := taskservice.CheckRequiredExtensions(ctx, svc.Agent().Name); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return m.resume(ctx, req, svc)
	}
	if strings.TrimSpace(in.Message) == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "message must not be empty")
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(in.Message))
	msg.TaskID, msg.ContextID = a2a.TaskID(strings.TrimSpace(in.TaskID)), strings.TrimSpace(in.ContextID)
	return m.converse(ctx, req, svc, msg)
}

// reply is a2aflow_reply: callAgent on the task's agent.
func (m *Server) reply(ctx context.Context, req *mcp.CallToolRequest, in replyInput) (*mcp.CallToolResult, error) {
	taskID := strings.TrimSpace(in.TaskID)
	if req.Params.RequestState != "" {
		st, err := decodeMCPState(req.Params.RequestState)
		if err != nil {
			return nil, err
		}
		taskID = st.Task
	}
	svc, err := m.serviceOf(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return m.callAgent(ctx, req, svc, agentToolInput{Message: in.Message, TaskID: taskID})
}

// getTask is a2aflow_get_task.
func (m *Server) getTask(ctx context.Context, in taskInput) (*mcp.CallToolResult, error) {
	taskID := strings.TrimSpace(in.TaskID)
	guard.NoteTask(ctx, a2a.TaskID(taskID), "")
	svc, err := m.serviceOf(ctx, taskID)
	if err != nil {
		return nil, err
	}
	snap, err := svc.LoadTask(ctx, a2a.TaskID(taskID), new(int))
	if err != nil {
		return nil, err
	}
	return taskResult(svc.Agent().Name, snap.Task, false), nil
}

// cancelTask is a2aflow_cancel_task.
func (m *Server) cancelTask(ctx context.Context, in taskInput) (*mcp.CallToolResult, error) {
	taskID := strings.TrimSpace(in.TaskID)
	guard.NoteTask(ctx, a2a.TaskID(taskID), "")
	svc, err := m.serviceOf(ctx, taskID)
	if err != nil {
		return nil, err
	}
	task, err := svc.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil {
		return nil, err
	}
	return taskResult(svc.Agent().Name, task, true), nil
}

// serviceOf returns the service of the agent whose task taskID is, when the
// caller may see it: the task's search attributes name its agent and
// owner (the rule of workflows/access.go, as TaskService.callerSees reads
// it), and the agent's service checks the caller again in the workflow.
// A task of another owner answers as one that does not exist.
func (m *Server) serviceOf(ctx context.Context, taskID string) (*taskservice.TaskService, error) {
	if taskID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "task_id is required")
	}
	if err := taskservice.CheckTaskID(taskID); err != nil {
		return nil, err
	}
	desc, err := m.temporal.DescribeWorkflowExecution(ctx, taskID, "")
	if err != nil {
		return nil, apierror.FromTemporal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	svc := m.services[taskservice.SearchKeyword(info, wire.AgentKey.GetName())]
	if svc == nil || !svc.CallerSees(ctx, info) {
		return nil, apierror.TaskNotFound()
	}
	// The caller's own task, of an agent it may not use (guard/permissions.go).
	if err := guard.PermitAgent(ctx, svc.Agent().Name); err != nil {
		return nil, err
	}
	return svc, nil
}

// requestHeader is the header of the HTTP request that carried req.
func requestHeader(req *mcp.CallToolRequest) map[string][]string {
	if req.Extra == nil {
		return nil
	}
	return req.Extra.Header
}
