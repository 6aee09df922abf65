package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func TestPrintTaskNamesPendingApproval(t *testing.T) {
	waiting := &a2a.Task{ID: "t-1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Approve?"),
			a2a.NewDataPart(map[string]any{"approvalId": "t-1-approval-1", "title": "Expense"}))}}
	var out bytes.Buffer
	printTask(&out, waiting, "http://x")
	if !strings.Contains(out.String(), "approve t-1-approval-1 --as NAME") || strings.Contains(out.String(), "Answer with") {
		t.Errorf("printTask of a task waiting for an approval:\n%s", out.String())
	}
	waiting.Status.Message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Where to?"))
	out.Reset()
	printTask(&out, waiting, "http://x")
	if !strings.Contains(out.String(), "send --agent http://x --task t-1") {
		t.Errorf("printTask of a task asking a question:\n%s", out.String())
	}
}

// TestFollowEventsNamesPendingApproval: a streamed send that ends waiting
// for an approval says how to decide it (approve/reject, the inbox), not
// how to answer a question.
func TestFollowEventsNamesPendingApproval(t *testing.T) {
	status := &a2a.TaskStatusUpdateEvent{TaskID: "t-1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Approve?"),
			a2a.NewDataPart(map[string]any{"approvalId": "t-1-approval-1"}))}}
	var out bytes.Buffer
	_ = followEvents(&out, &Flags{agent: "http://h:8080/agents/expenses"}, "send", func(yield func(a2a.Event, error) bool) {
		yield(status, nil)
	})
	for _, want := range []string{"approve t-1-approval-1 --as NAME --api http://h:8080", "reject t-1-approval-1", "http://h:8080/inbox"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stream output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Answer with") {
		t.Errorf("stream output tells to answer a question:\n%s", out.String())
	}
}
