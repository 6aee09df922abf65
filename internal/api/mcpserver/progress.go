package mcpserver

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/workflows"
)

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
