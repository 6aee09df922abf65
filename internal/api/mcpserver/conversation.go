package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// A call's conversation with its task: the message delivered through the
// agent's TaskService (TaskService.Send), the task's events followed until
// it stops, and its questions asked of the user by elicitation while the
// client can show them: a request to the client over a session (up to
// protocol 2025-11-25), an input request of the result from 2026-07-28
// (SEP-2322), which the client answers by calling again (resume).

// mcpAnswerKey names the answer in an elicitation's schema and in the
// input requests of a result.
const mcpAnswerKey = "answer"

// mcpMaxQuestions bounds the questions one call asks by elicitation; past
// it, the call answers with the task and its question.
const mcpMaxQuestions = 50

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
