package demo

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Echo returns the echo agent: it completes at once, answering with the text
// it was sent. The benchmarks use it to measure a2aflow's own overhead.
func Echo() *workflows.Agent {
	return &workflows.Agent{
		Name:        "echo",
		Description: "Answers with the text it is sent. Useful to test a client or measure overhead.",
		Skills: []a2a.AgentSkill{{
			ID:          "echo",
			Name:        "Echo",
			Description: "Repeats the message text.",
			Tags:        []string{"test"},
			Examples:    []string{"hello"},
		}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			t.Reply(t.Text())
			return nil
		},
	}
}
