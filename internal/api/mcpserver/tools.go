package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// MCP's tools (mcp.go serves them). Each agent is a tool of its name: a
// call sends its message to a new task of the agent (or, with task_id, to
// that task of the caller's) through the agent's TaskService, the code path
// of A2A's SendMessage (TaskService.send; the workflow's validators check
// the caller), and follows the task's events (TaskService.follow) until it
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

// mcpAnswerKey names the answer in an elicitation's schema and in the
// input requests of a result.
const mcpAnswerKey = "answer"

// mcpMaxQuestions bounds the questions one call asks by elicitation; past
// it, the call answers with the task and its question.
const mcpMaxQuestions = 50

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
// tools of agents the caller may use (permissions.go); the helper tools
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
	if err := guard.PermitAgent(ctx, svc.Agent().Name); err != nil { // permissions.go
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
	// The caller's own task, of an agent it may not use (permissions.go).
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

// converse delivers msg and answers with its task once it stops, asking
// the task's questions on the way while the client can show them.
func (m *Server) converse(ctx context.Context, req *mcp.CallToolRequest, svc *taskservice.TaskService, msg *a2a.Message) (*mcp.CallToolResult, error) {
	p := newMCPProgress(ctx, req)
	out, err := m.deliver(ctx, svc, msg, p)
	if err != nil {
		return nil, err
	}
	if out.decision != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: workflows.MessageText(out.decision)}}}, nil
	}
	return m.ask(ctx, req, svc, out.snap, p)
}

// resume is a call again with the answer to the input request of its
// previous result (protocol 2026-07-28, SEP-2322): the answer goes to the
// task, and the call goes on as converse.
func (m *Server) resume(ctx context.Context, req *mcp.CallToolRequest, svc *taskservice.TaskService) (*mcp.CallToolResult, error) {
	st, err := decodeMCPState(req.Params.RequestState)
	if err != nil {
		return nil, err
	}
	guard.NoteTask(ctx, a2a.TaskID(st.Task), "")
	p := newMCPProgress(ctx, req)
	resp, ok := req.Params.InputResponses[mcpAnswerKey].(*mcp.ElicitResult)
	if !ok {
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("inputResponses lack the elicitation result %q the previous result asked for", mcpAnswerKey))
	}
	var snap *wire.TaskSnapshot
	if answer, ok := elicitedAnswer(resp); ok {
		snap, err = m.answer(ctx, svc, a2a.TaskID(st.Task), st.Seq, answer, p)
	} else {
		snap, err = svc.LoadTask(ctx, a2a.TaskID(st.Task), new(int))
		if err == nil {
			return taskResult(svc.Agent().Name, snap.Task, false), nil // declined
		}
	}
	if err != nil {
		return nil, err
	}
	return m.ask(ctx, req, svc, snap, p)
}

// ask answers with the task of snap, after asking the user its questions
// while the client can show them (elicitation): over a session with a
// request to the client, which the call waits for; without one
// (2026-07-28) with an input request in the result, which the client
// answers by calling again (resume).
func (m *Server) ask(ctx context.Context, req *mcp.CallToolRequest, svc *taskservice.TaskService, snap *wire.TaskSnapshot, p *mcpProgress) (*mcp.CallToolResult, error) {
	for range mcpMaxQuestions {
		question, ok := userQuestion(snap.Task)
		if !ok || !canElicit(req) {
			break
		}
		params := elicitParams(svc.Agent().Name, question)
		if req.ProtocolVersion() >= mcpStatelessSince {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{mcpAnswerKey: params},
				RequestState:  encodeMCPState(mcpState{Task: string(snap.ID), Seq: snap.EventSeq}),
			}, nil
		}
		// The user may take their time; a shutdown ends the wait.
		ectx, stop := m.untilShutdown(ctx)
		res, err := req.Session.Elicit(ectx, params)
		stop()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", a2a.ErrServerError, ctx.Err())
			}
			// The client could not ask, or the server is shutting down:
			// the caller answers with a2aflow_reply.
			select {
			case <-m.cfg.ShuttingDown:
			default:
				m.cfg.Logger.InfoContext(ctx, "MCP elicitation failed; answering with the question", "task_id", snap.ID, "error", err)
			}
			break
		}
		answer, ok := elicitedAnswer(res)
		if !ok {
			break // declined or canceled
		}
		if snap, err = m.answer(ctx, svc, snap.ID, snap.EventSeq, answer, p); err != nil {
			return nil, err
		}
	}
	return taskResult(svc.Agent().Name, snap.Task, false), nil
}

// untilShutdown returns ctx, ended also when the server shuts down.
func (m *Server) untilShutdown(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if m.cfg.ShuttingDown != nil {
		go func() {
			select {
			case <-m.cfg.ShuttingDown:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// answer sends the user's answer to the question task asked at event seq,
// unless the task has moved on since (another client answered it, or it
// ended): then the answer is dropped and the task is answered as it is.
// The message's ID is derived from the question, so that the same answer
// sent again (a client calling again with the same input response) is
// recorded once.
func (m *Server) answer(ctx context.Context, svc *taskservice.TaskService, task a2a.TaskID, seq int64, answer string, p *mcpProgress) (*wire.TaskSnapshot, error) {
	now, err := svc.LoadTask(ctx, task, new(int))
	if err != nil {
		return nil, err
	}
	if now.EventSeq != seq {
		return now, nil
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(answer))
	msg.TaskID = task
	msg.ID = uuid.NewSHA1(taskservice.TaskIDSpace, fmt.Appendf(nil, "mcp-answer\x00%s\x00%d", task, seq)).String()
	out, err := m.deliver(ctx, svc, msg, p)
	if err != nil {
		return nil, err
	}
	if out.snap == nil {
		return svc.LoadTask(ctx, task, new(int))
	}
	return out.snap, nil
}

// delivered is what delivering a message came to: the task once it
// stopped, or the answer to an approver's decision on a task of another
// owner (which is no task of the caller's).
type delivered struct {
	snap     *wire.TaskSnapshot
	decision *a2a.Message
}

// deliver sends msg through the agent's SendMessage path (TaskService.send)
// and follows the task's events until it is interrupted after working on
// the message, or ends; each status change is a progress notification.
func (m *Server) deliver(ctx context.Context, svc *taskservice.TaskService, msg *a2a.Message, p *mcpProgress) (delivered, error) {
	guard.NoteTask(ctx, msg.TaskID, msg.ContextID)
	res, err := svc.Send(ctx, &a2a.SendMessageRequest{Message: msg}, true, nil)
	if err != nil {
		return delivered{}, err
	}
	if res.Decision != nil {
		return delivered{decision: taskservice.DecisionMessage(msg, res.Decision)}, nil
	}
	guard.NoteTask(ctx, res.TaskID, "")
	seq, worked := res.EventSeq, false
	if res.Status == nil {
		// The task had this message already (a retry), or took it too
		// late to say when: from the task as it is now.
		snap, err := svc.LoadTask(ctx, res.TaskID, new(int))
		if err != nil {
			return delivered{}, err
		}
		if snap.Status.State.Terminal() || taskservice.Interrupted(snap.Status.State) {
			return delivered{snap: snap}, nil
		}
		seq, worked = snap.EventSeq, true
	}
	var failed error
	svc.Follow(ctx, res.TaskID, seq, "", func(e wire.Event) bool { return taskservice.Settles(true)(e, &worked) },
		func(e a2a.Event, err error) bool {
			if err != nil {
				failed = err
				return false
			}
			p.event(e)
			return true
		})
	if failed != nil {
		return delivered{}, failed
	}
	if err := ctx.Err(); err != nil {
		return delivered{}, fmt.Errorf("%w: %w", a2a.ErrServerError, err)
	}
	// The task as it stopped (or, at shutdown, as it is): its reply and
	// artifacts.
	snap, err := svc.LoadTask(ctx, res.TaskID, new(int))
	if err != nil {
		return delivered{}, err
	}
	return delivered{snap: snap}, nil
}

// mcpProgress sends a call's progress notifications: one per status
// change of its task, when the call asked for them (a progress token).
type mcpProgress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	n       int
}

func newMCPProgress(ctx context.Context, req *mcp.CallToolRequest) *mcpProgress {
	return &mcpProgress{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken()}
}

func (p *mcpProgress) event(e a2a.Event) {
	st, ok := e.(*a2a.TaskStatusUpdateEvent)
	if !ok || p.token == nil || p.session == nil {
		return
	}
	text := ""
	if st.Status.Message != nil {
		text = workflows.MessageText(st.Status.Message)
	}
	if text == "" {
		text = "The task is " + stateName(st.Status.State) + "."
	}
	p.n++
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: float64(p.n), Message: text})
}

// mcpState is the request state of a result asking for an answer
// (protocol 2026-07-28): the task and the event at which it asked. It
// carries nothing the server trusts: the call it comes back with acts as
// its own caller, who may answer only its own tasks, as with a2aflow_reply.
type mcpState struct {
	Task string `json:"task"`
	Seq  int64  `json:"seq"`
}

func encodeMCPState(st mcpState) string {
	b, _ := json.Marshal(st)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeMCPState(s string) (mcpState, error) {
	var st mcpState
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || st.Task == "" || st.Seq < 0 {
		return mcpState{}, a2a.NewError(a2a.ErrInvalidParams, "requestState is not one this server gave")
	}
	return st, nil
}

// canElicit reports whether the client of req can show a form.
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// {} (no mode named) is a form, as before modes existed.
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// elicitParams asks agent's question, for one line of text.
func elicitParams(agent, question string) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: question,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{mcpAnswerKey: map[string]any{
				"type": "string", "title": "Answer", "description": "Your answer to " + agent + ".",
			}},
			"required": []string{mcpAnswerKey},
		},
	}
}

// elicitedAnswer returns the answer of an accepted elicitation.
func elicitedAnswer(res *mcp.ElicitResult) (string, bool) {
	if res == nil || res.Action != "accept" {
		return "", false
	}
	answer, ok := res.Content[mcpAnswerKey].(string)
	if !ok || strings.TrimSpace(answer) == "" {
		return "", false
	}
	return answer, true
}

// userQuestion returns the question t waits for its user to answer: an
// input-required task asking (not one waiting for approvers or a
// waitpoint, whose status names them in data parts). A credential request
// (auth-required) is no such question: it is never asked in a form.
func userQuestion(t *a2a.Task) (string, bool) {
	if t.Status.State != a2a.TaskStateInputRequired {
		return "", false
	}
	if othersAwaited(t) {
		return "", false
	}
	q := ""
	if t.Status.Message != nil {
		q = workflows.MessageText(t.Status.Message)
	}
	if strings.TrimSpace(q) == "" {
		q = "The task waits for your answer."
	}
	return q, true
}

// othersAwaited reports whether t's status says it waits for approvers or
// a waitpoint rather than its user.
func othersAwaited(t *a2a.Task) bool {
	if t.Status.Message == nil {
		return false
	}
	for _, p := range t.Status.Message.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if _, ok := data["approvalId"]; ok {
				return true
			}
			if _, ok := data["waitpointId"]; ok {
				return true
			}
		}
	}
	return false
}

// stateName is an A2A task state as MCP results name it: "completed",
// "input-required"...
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// mcpTaskView is a task in a result's structured content.
type mcpTaskView struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id,omitempty"`
	Agent     string `json:"agent"`
	State     string `json:"state"`
	// Message is the text of the task's status message: its reply, its
	// question, why it failed.
	Message string `json:"message,omitempty"`
	// Question is set when the task waits for the caller's answer
	// (a2aflow_reply); Credential when that answer is a credential.
	Question   string `json:"question,omitempty"`
	Credential bool   `json:"credential,omitempty"`
	// Awaiting is set when the task waits for others (approvers, a
	// waitpoint).
	Awaiting  bool              `json:"awaiting_others,omitempty"`
	Artifacts []mcpArtifactView `json:"artifacts,omitempty"`
}

type mcpArtifactView struct {
	ID          string        `json:"artifact_id"`
	Name        string        `json:"name,omitempty"`
	Description string        `json:"description,omitempty"`
	Parts       []mcpPartView `json:"parts"`
}

// mcpPartView is one part of an artifact: text, data, a file by URL, or a
// file's inline bytes, whose size it gives (an image's are in the content).
type mcpPartView struct {
	Text      *string `json:"text,omitempty"`
	Data      any     `json:"data,omitempty"`
	URL       string  `json:"url,omitempty"`
	Filename  string  `json:"filename,omitempty"`
	MediaType string  `json:"media_type,omitempty"`
	Bytes     int     `json:"bytes,omitempty"`
}

// maxMCPImageBytes bounds the images a result carries inline.
const maxMCPImageBytes = 1 << 20

// taskResult answers a call with task t of agent. canceled says a canceled
// task is what the call asked for (a2aflow_cancel_task).
func taskResult(agent string, t *a2a.Task, canceled bool) *mcp.CallToolResult {
	view := mcpTaskView{TaskID: string(t.ID), ContextID: t.ContextID, Agent: agent, State: stateName(t.Status.State)}
	if t.Status.Message != nil {
		view.Message = workflows.MessageText(t.Status.Message)
	}
	res := &mcp.CallToolResult{}
	text := func(s string) { res.Content = append(res.Content, &mcp.TextContent{Text: s}) }
	state := t.Status.State
	switch {
	case state == a2a.TaskStateCompleted:
		if view.Message != "" {
			text(view.Message)
		} else {
			text(fmt.Sprintf("Task %s completed.", t.ID))
		}
	case state == a2a.TaskStateInputRequired && othersAwaited(t):
		view.Awaiting = true
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for others (an approval or an event), not for you: "+
			"read it later with %s (task_id %q).", orDefault(view.Message, "The task waits."), t.ID, agent, mcpToolGet, t.ID))
	case state == a2a.TaskStateInputRequired:
		view.Question, _ = userQuestion(t)
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for your answer: call %s with task_id %q and the answer as message.",
			view.Question, t.ID, agent, mcpToolReply, t.ID))
	case state == a2a.TaskStateAuthRequired:
		view.Question, view.Credential = orDefault(view.Message, "The task needs a credential."), true
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for a credential: call %s with task_id %q and the credential as message. "+
			"a2aflow stores it sealed and gives the task a reference to it, never the secret.",
			view.Question, t.ID, agent, mcpToolReply, t.ID))
	case state == a2a.TaskStateCanceled && canceled:
		text(fmt.Sprintf("Task %s is canceled.", t.ID))
	case state.Terminal(): // failed, rejected, canceled
		res.IsError = true
		why := ""
		if view.Message != "" {
			why = ": " + view.Message
		}
		text(fmt.Sprintf("Task %s of %s %s%s", t.ID, agent, stateVerb(state), why))
	default: // submitted, working
		text(fmt.Sprintf("Task %s of %s is still %s%s. Read it later with %s (task_id %q).",
			t.ID, agent, view.State, colonText(view.Message), mcpToolGet, t.ID))
	}
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		av := mcpArtifactView{ID: string(a.ID), Name: a.Name, Description: a.Description, Parts: []mcpPartView{}}
		for _, p := range a.Parts {
			if p == nil {
				continue
			}
			pv, content := artifactPart(a, p)
			av.Parts = append(av.Parts, pv)
			if content != nil {
				res.Content = append(res.Content, content)
			}
		}
		view.Artifacts = append(view.Artifacts, av)
	}
	res.StructuredContent = view
	return res
}

// artifactPart is part p of artifact a in structured content, and as
// content.
func artifactPart(a *a2a.Artifact, p *a2a.Part) (mcpPartView, mcp.Content) {
	pv := mcpPartView{Filename: p.Filename, MediaType: p.MediaType}
	switch c := p.Content.(type) {
	case a2a.Text:
		s := string(c)
		pv.Text = &s
		return pv, &mcp.TextContent{Text: s}
	case a2a.Data:
		pv.Data = c.Value
		b, err := json.Marshal(c.Value)
		if err != nil {
			return pv, nil
		}
		return pv, &mcp.TextContent{Text: string(b)}
	case a2a.URL:
		pv.URL = string(c)
		name := orDefault(p.Filename, orDefault(a.Name, "file"))
		return pv, &mcp.ResourceLink{URI: string(c), Name: name, MIMEType: p.MediaType, Description: a.Description}
	case a2a.Raw:
		pv.Bytes = len(c)
		if strings.HasPrefix(p.MediaType, "image/") && len(c) <= maxMCPImageBytes {
			return pv, &mcp.ImageContent{Data: c, MIMEType: p.MediaType}
		}
		return pv, &mcp.TextContent{Text: fmt.Sprintf("[file %s: %s, %d bytes, not included; read the task over A2A for it]",
			orDefault(p.Filename, orDefault(a.Name, "file")), orDefault(p.MediaType, "application/octet-stream"), len(c))}
	}
	return pv, nil
}

func stateVerb(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateFailed:
		return "failed"
	case a2a.TaskStateRejected:
		return "was rejected"
	case a2a.TaskStateCanceled:
		return "was canceled"
	}
	return "is " + stateName(s)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func colonText(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
