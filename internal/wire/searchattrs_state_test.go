package wire

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestTaskStateCondition pins the visibility conditions of ListTasks'
// status filter: with lean writes a run closed Completed whose A2ATaskState
// says working is a completed task, so working takes running runs only.
func TestTaskStateCondition(t *testing.T) {
	tests := []struct {
		state a2a.TaskState
		want  string
	}{
		{a2a.TaskStateWorking, "(A2ATaskState = 'TASK_STATE_WORKING' AND ExecutionStatus = 'Running')"},
		{a2a.TaskStateInputRequired, "(A2ATaskState = 'TASK_STATE_INPUT_REQUIRED' AND ExecutionStatus = 'Running')"},
		{a2a.TaskStateCompleted, "((A2ATaskState = 'TASK_STATE_COMPLETED' AND (ExecutionStatus = 'Running' OR ExecutionStatus = 'Completed'))" +
			" OR (A2ATaskState = 'TASK_STATE_WORKING' AND ExecutionStatus = 'Completed'))"},
		{a2a.TaskStateCanceled, "(A2ATaskState = 'TASK_STATE_CANCELED' AND (ExecutionStatus = 'Running' OR ExecutionStatus = 'Completed'))"},
		{a2a.TaskStateFailed, "((A2ATaskState = 'TASK_STATE_FAILED' AND (ExecutionStatus = 'Running' OR ExecutionStatus = 'Completed'))" +
			" OR ExecutionStatus = 'Terminated' OR ExecutionStatus = 'TimedOut' OR ExecutionStatus = 'Failed' OR ExecutionStatus = 'Canceled')"},
	}
	for _, tt := range tests {
		if got := TaskStateCondition(tt.state); got != tt.want {
			t.Errorf("TaskStateCondition(%s) =\n%s\nwant\n%s", tt.state, got, tt.want)
		}
	}
}
