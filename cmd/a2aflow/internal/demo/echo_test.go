package demo_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/wire"
)

func TestEcho(t *testing.T) {
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"one part", []string{"hello"}, "hello"},
		{"text parts joined by newlines", []string{"hello", "world"}, "hello\nworld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv()
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "echo", Message: userText(tt.parts...)})

			final := finalTask(t, env)
			want := statusView{State: a2a.TaskStateCompleted, Message: agent(tt.want)}
			if diff := cmp.Diff(want, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]messageView{user(tt.want), agent(tt.want)}, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			if len(final.Artifacts) != 0 {
				t.Errorf("echo made %d artifacts, want none", len(final.Artifacts))
			}
		})
	}
}
