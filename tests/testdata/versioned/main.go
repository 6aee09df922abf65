// Command versioned is one agent program built twice, as v1 and v2 of the
// same deployment (go build -ldflags "-X main.build=v2"), for the Worker
// Versioning test (tests/versioning_test.go):
//
//   - orders (pinned, the default): v2 adds a first step (a timer) before
//     asking, a change that cannot replay a task parked on v1;
//   - notes (auto-upgrade): v2 only changes the reply, a change that does.
package main

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/workflows"
)

// build is the program's version, set at link time.
var build = "v1"

func orders() *workflows.Agent {
	return &workflows.Agent{
		Name:        "orders",
		Description: "Takes an order.",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			if build == "v2" {
				if err := workflow.Sleep(ctx, time.Millisecond); err != nil { // v2's new first step
					return err
				}
			}
			item, err := t.Ask(ctx, "item", "What should we order?")
			if err != nil {
				return err
			}
			t.Reply(build + " ordered " + workflows.MessageText(item))
			return nil
		},
	}
}

func notes() *workflows.Agent {
	return &workflows.Agent{
		Name:        "notes",
		Description: "Takes a note.",
		Versioning:  workflows.AutoUpgrade,
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			note, err := t.Ask(ctx, "note", "What should I note?")
			if err != nil {
				return err
			}
			t.Reply(build + " noted " + workflows.MessageText(note))
			return nil
		},
	}
}

func main() { a2aflow.Main(orders(), notes()) }
