package mcpserver

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPTaskResult: how a call answers with a task in each state.
func TestMCPTaskResult(t *testing.T) {
	status := func(state a2a.TaskState, parts ...*a2a.Part) a2a.TaskStatus {
		st := a2a.TaskStatus{State: state}
		if len(parts) > 0 {
			st.Message = a2a.NewMessage(a2a.MessageRoleAgent, parts...)
		}
		return st
	}
	approval := a2a.NewDataPart(map[string]any{"approvalId": "t-1-approval-1", "title": "Pay?"})
	png := []byte("\x89PNG\r\n\x1a\nfake")
	for _, c := range []struct {
		name     string
		task     *a2a.Task
		canceled bool // a2aflow_cancel_task
		isError  bool
		text     []string // in the text content
		view     mcpTaskView
		content  []string // content types
	}{
		{name: "completed", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateCompleted, a2a.NewTextPart("Done."))},
			text: []string{"Done."}, view: mcpTaskView{State: "completed", Message: "Done."}, content: []string{"*mcp.TextContent"}},
		{name: "question", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Where to?"))},
			text: []string{"Where to?", `task_id "t-1"`, "a2aflow_reply"}, view: mcpTaskView{State: "input-required", Message: "Where to?", Question: "Where to?"}},
		{name: "question without a message", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateInputRequired)},
			text: []string{"waits for your answer"}, view: mcpTaskView{State: "input-required", Question: "The task waits for your answer."}},
		{name: "credential", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateAuthRequired, a2a.NewTextPart("Your GitHub token?"),
			a2a.NewDataPart(map[string]any{"service": "github"}))},
			text: []string{"Your GitHub token?", "a2aflow_reply", "sealed"},
			view: mcpTaskView{State: "auth-required", Message: "Your GitHub token?", Question: "Your GitHub token?", Credential: true}},
		{name: "waiting for approvers", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Waiting for approval."), approval)},
			text: []string{"Waiting for approval.", "waits for others", "a2aflow_get_task"},
			view: mcpTaskView{State: "input-required", Message: "Waiting for approval.", Awaiting: true}},
		{name: "failed", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateFailed, a2a.NewTextPart("The booking system is down."))}, isError: true,
			text: []string{"Task t-1 of travel failed: The booking system is down."}, view: mcpTaskView{State: "failed", Message: "The booking system is down."}},
		{name: "rejected", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateRejected)}, isError: true,
			text: []string{"was rejected"}, view: mcpTaskView{State: "rejected"}},
		{name: "canceled", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateCanceled)}, isError: true,
			text: []string{"was canceled"}, view: mcpTaskView{State: "canceled"}},
		{name: "canceled as asked", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateCanceled)}, canceled: true,
			text: []string{"is canceled"}, view: mcpTaskView{State: "canceled"}},
		{name: "working", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateWorking, a2a.NewTextPart("Booking..."))},
			text: []string{"still working: Booking...", "a2aflow_get_task"}, view: mcpTaskView{State: "working", Message: "Booking..."}},
		{name: "files", task: &a2a.Task{ID: "t-1", Status: status(a2a.TaskStateCompleted), Artifacts: []*a2a.Artifact{{ID: "a-1", Name: "chart",
			Parts: a2a.ContentParts{{Content: a2a.Raw(png), MediaType: "image/png"}, {Content: a2a.Raw("%PDF"), Filename: "r.pdf", MediaType: "application/pdf"}}}}},
			text:    []string{"Task t-1 completed.", "[file r.pdf: application/pdf, 4 bytes, not included"},
			content: []string{"*mcp.TextContent", "*mcp.ImageContent", "*mcp.TextContent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := taskResult("travel", c.task, c.canceled)
			var text []string
			var kinds []string
			for _, content := range res.Content {
				switch x := content.(type) {
				case *mcp.TextContent:
					text = append(text, x.Text)
					kinds = append(kinds, "*mcp.TextContent")
				case *mcp.ImageContent:
					kinds = append(kinds, "*mcp.ImageContent")
					if string(x.Data) != string(png) || x.MIMEType != "image/png" {
						t.Errorf("image %q %s", x.Data, x.MIMEType)
					}
				default:
					kinds = append(kinds, "other")
				}
			}
			all := strings.Join(text, "\n")
			if res.IsError != c.isError {
				t.Errorf("isError %v, want %v: %s", res.IsError, c.isError, all)
			}
			for _, want := range c.text {
				if !strings.Contains(all, want) {
					t.Errorf("the text %q lacks %q", all, want)
				}
			}
			if c.content != nil && strings.Join(kinds, " ") != strings.Join(c.content, " ") {
				t.Errorf("content %v, want %v", kinds, c.content)
			}
			view := res.StructuredContent.(mcpTaskView)
			if view.TaskID != "t-1" || view.Agent != "travel" {
				t.Errorf("view %+v names another task or agent", view)
			}
			if c.name != "files" {
				view.TaskID, view.Agent = "", ""
				if diff := cmp.Diff(c.view, view); diff != "" {
					t.Errorf("structured content (-want +got):\n%s", diff)
				}
			} else if len(view.Artifacts) != 1 || len(view.Artifacts[0].Parts) != 2 || view.Artifacts[0].Parts[1].Bytes != 4 {
				t.Errorf("the artifact in structured content: %+v", view.Artifacts)
			}
		})
	}
}
