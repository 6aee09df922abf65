package workflows_test

import (
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestScheduledRun: a task started by a schedule (its first message in the
// input, wire.TaskInput.Schedule set) names the schedule in its metadata,
// across the skill's own metadata, and its first message takes the task's
// ID as its own; a task started with a message but no schedule keeps the
// message's ID and has no schedule metadata (the path recorded histories
// take).
func TestScheduledRun(t *testing.T) {
	echo := &workflows.Agent{Name: "echo", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		t.SetMetadata(ctx, "mine", "kept")
		t.Reply(t.Text())
		return nil
	}}
	for _, tt := range []struct {
		name, schedule string
	}{{"scheduled", "sched-1"}, {"not scheduled", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, echo)
			msg := userText("weekly report")
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "echo", ContextID: testContextID, Message: msg, Recording: wire.LongTasks,
				Schedule: tt.schedule})
			task := finalTask(t, env)
			if got := workflows.MessageText(task.Status.Message); got != "weekly report" {
				t.Errorf("reply %q", got)
			}
			wantID := msg.ID
			if tt.schedule != "" {
				wantID = testTaskID
			}
			if len(task.History) == 0 || task.History[0].ID != wantID {
				t.Errorf("first message %+v, want ID %s", task.History, wantID)
			}
			got, has := task.Metadata[wire.ScheduleMetadataKey]
			if tt.schedule != "" && got != tt.schedule || tt.schedule == "" && has {
				t.Errorf("metadata %v, want schedule %q", task.Metadata, tt.schedule)
			}
			if task.Metadata["mine"] != "kept" {
				t.Errorf("metadata %v lost the skill's own", task.Metadata)
			}
		})
	}
}
