package workflows_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestSearchTextBackfill: a task started without A2AText (before the API
// set it, or by an old schedule) writes it, the start of its first
// message's text, in its first upsert, once; a task started with it (as
// the API starts tasks now) never writes it.
func TestSearchTextBackfill(t *testing.T) {
	long := "Book a flight " + strings.Repeat("é", 200)
	for _, tt := range []struct {
		name    string
		onStart bool
		want    []string
	}{
		{"started without it", false, []string{wire.SearchText(long)}},
		{"started with it", true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, counter())
			if tt.onStart {
				if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(wire.TextKey.ValueSet(wire.SearchText(long)))); err != nil {
					t.Fatal(err)
				}
			}
			var texts []string
			env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
				if v, ok := args.Get(0).(temporal.SearchAttributes).GetString(wire.TextKey); ok {
					texts = append(texts, v)
				}
			})
			env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("a")}) }, time.Minute)
			env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("done")}) }, 2*time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter", ContextID: testContextID,
				Message: userText(long), Recording: wire.CurrentRecording})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if len(texts) != len(tt.want) || (len(texts) == 1 && texts[0] != tt.want[0]) {
				t.Errorf("A2AText upserts %q, want %q", texts, tt.want)
			}
			if len(tt.want) == 1 && (len(tt.want[0]) > wire.SearchTextBytes+len("…") || !strings.HasSuffix(tt.want[0], "…")) {
				t.Errorf("SearchText = %q (%d bytes)", tt.want[0], len(tt.want[0]))
			}
		})
	}
}
