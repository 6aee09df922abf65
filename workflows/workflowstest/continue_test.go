package workflowstest_test

import (
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// TestCallAgentContinuesContext: a second call continues the remote
// conversation of the first (CallRequest.ContextID), names its task
// (ReferenceTaskIDs) and carries metadata; the first call sends none of
// them, and only a call's first message carries the references.
func TestCallAgentContinuesContext(t *testing.T) {
	agent := &workflows.Agent{
		Name: "planner",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			first, err := t.CallAgent(ctx, workflows.CallRequest{Agent: "hotels", Text: "Rooms in Lisbon?"})
			if err != nil {
				return err
			}
			second, err := t.CallAgent(ctx, workflows.CallRequest{Agent: "hotels", Text: "The cheapest, please.",
				ContextID: first.ContextID, ReferenceTaskIDs: []a2a.TaskID{first.TaskID},
				Metadata: map[string]any{"example.org/trip": "t-7"}})
			if err != nil {
				return err
			}
			t.Reply(workflows.MessageText(second.Message))
			return nil
		},
	}
	var got []*a2a.Message
	env := workflowstest.New(t, agent)
	env.RemoteAgent("hotels", func(m *a2a.Message) *a2a.Task {
		got = append(got, m)
		ctxID := m.ContextID
		if ctxID == "" {
			ctxID = "hotels-ctx-1"
		}
		return &a2a.Task{ID: a2a.TaskID(fmt.Sprintf("hotel-task-%d", len(got))), ContextID: ctxID, Status: a2a.TaskStatus{
			State: a2a.TaskStateCompleted, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("answer "+fmt.Sprint(len(got))))}}
	})
	task := env.RunText("planner", "Plan a trip")
	if task.Status.State != a2a.TaskStateCompleted || workflows.MessageText(task.Status.Message) != "answer 2" {
		t.Fatalf("task %s %q", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	if len(got) != 2 {
		t.Fatalf("the remote agent got %d messages, want 2", len(got))
	}
	if m := got[0]; m.ContextID != "" || len(m.ReferenceTasks) != 0 || m.Metadata != nil {
		t.Errorf("first call: context %q, references %v, metadata %v; want none", m.ContextID, m.ReferenceTasks, m.Metadata)
	}
	m := got[1]
	if m.ContextID != "hotels-ctx-1" || len(m.ReferenceTasks) != 1 || m.ReferenceTasks[0] != "hotel-task-1" || m.Metadata["example.org/trip"] != "t-7" {
		t.Errorf("second call: context %q, references %v, metadata %v; want hotels-ctx-1, [hotel-task-1], the trip", m.ContextID, m.ReferenceTasks, m.Metadata)
	}
	if m.TaskID != "" {
		t.Errorf("second call: task %q, want a new remote task", m.TaskID)
	}
}
