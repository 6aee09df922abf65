package taskservice

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

// TestMessageOnlyAnswer: a message-only agent answers a new message with
// its reply once the task completed with one, and with the task otherwise
// (a message to a task, a task that asks or failed, no reply); another
// agent always with the task. An agent's MessageOnlyFor picks the new
// messages answered so.
func TestMessageOnlyAnswer(t *testing.T) {
	reply := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hi"))
	reply.TaskID = "t-1"
	task := func(state a2a.TaskState, status *a2a.Message, history ...*a2a.Message) *a2a.Task {
		return &a2a.Task{ID: "t-1", ContextID: "c-1", Status: a2a.TaskStatus{State: state, Message: status}, History: history}
	}
	user := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	newMessage := &a2a.SendMessageRequest{Message: user}
	hello := func(m *a2a.Message) bool { return m.Parts[0].Text() == "hello" }
	notHello := func(m *a2a.Message) bool { return !hello(m) }
	toTask := &a2a.SendMessageRequest{Message: &a2a.Message{ID: "m", Role: a2a.MessageRoleUser, TaskID: "t-1"}}
	for _, tc := range []struct {
		name        string
		messageOnly bool
		picks       func(*a2a.Message) bool
		req         *a2a.SendMessageRequest
		task        *a2a.Task
		wantReply   bool
	}{
		{"completed with a status message", true, nil, newMessage, task(a2a.TaskStateCompleted, reply, user), true},
		{"completed, the reply in the history", true, nil, newMessage, task(a2a.TaskStateCompleted, nil, user, reply), true},
		{"completed without a reply", true, nil, newMessage, task(a2a.TaskStateCompleted, nil, user), false},
		{"asking", true, nil, newMessage, task(a2a.TaskStateInputRequired, reply, user), false},
		{"failed", true, nil, newMessage, task(a2a.TaskStateFailed, reply, user), false},
		{"a message to a task", true, nil, toTask, task(a2a.TaskStateCompleted, reply, user), false},
		{"another agent", false, nil, newMessage, task(a2a.TaskStateCompleted, reply, user), false},
		{"picked by MessageOnlyFor", false, hello, newMessage, task(a2a.TaskStateCompleted, reply, user), true},
		{"not picked by MessageOnlyFor", false, notHello, newMessage, task(a2a.TaskStateCompleted, reply, user), false},
		{"MessageOnlyFor, a message to a task", false, hello, toTask, task(a2a.TaskStateCompleted, reply, user), false},
		{"MessageOnly whatever MessageOnlyFor says", true, notHello, newMessage, task(a2a.TaskStateCompleted, reply, user), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &TaskService{agent: &workflows.Agent{Name: "echo", MessageOnly: tc.messageOnly, MessageOnlyFor: tc.picks}}
			got := s.messageOnlyAnswer(tc.req, tc.task)
			m, isMessage := got.(*a2a.Message)
			switch {
			case tc.wantReply && (!isMessage || m.Parts[0].Text() != "hi" || m.TaskID != "" || m.ContextID != "c-1"):
				t.Errorf("answer %+v, want the reply in context c-1, naming no task", got)
			case !tc.wantReply && got != a2a.SendMessageResult(tc.task):
				t.Errorf("answer %+v, want the task", got)
			}
			if reply.TaskID != "t-1" {
				t.Error("the task's own message was changed")
			}
		})
	}
}
