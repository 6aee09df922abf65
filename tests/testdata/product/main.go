// Command product is a program built on a2aflow.Main as a product would be,
// for the end-to-end tests. It is v1 and v2 of the same deployment, for the
// Worker Versioning test (tests/versioning_test.go): built once, it runs as
// v2 when its file is named product-v2 (a link to the one build: linking
// the embedded Temporal server again for -ldflags "-X main.build=v2" took a
// minute of every CI run), else as v1; -X main.build=... still sets it:
//
//   - orders (pinned, the default): v2 adds a first step (a timer) before
//     asking, a change that cannot replay a task parked on v1;
//   - notes (auto-upgrade): v2 only changes the reply, a change that does.
//
// Its other agents are the same in both builds:
//
//   - tickets waits for a ticket (a waitpoint), talks until told "done"
//     (each turn a point to continue as new from) and waits for a second
//     ticket: the waitpoint test across continue-as-new (tests/product_test.go);
//   - slow works for the time it is told (the schedules test);
//   - trips books a trip with an activity of its own named BookTrip, the
//     name the a2aflow command's demo activity has: a program's names are
//     its own (tests/product_test.go);
//   - council asks two approvers of its group (a quorum), then records the
//     decision with an activity (the fork tests, tests/fork_test.go);
//   - pause asks two questions with a local activity and a durable sleep of
//     the duration its first message gives between them (the fork tests).
//
// The activities of council and pause append a line to the file
// PRODUCT_CALLS names, when set: the tests count the runs.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/workflows"
)

// build is the program's version: set at link time, else by the program's
// file name (main).
var build = ""

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

// ticketsState is what the tickets agent carries across continue-as-new.
type ticketsState struct {
	First string `json:"first,omitempty"`
	Turns int    `json:"turns"`
}

func tickets() *workflows.Agent {
	return &workflows.Agent{
		Name:        "tickets",
		Description: "Waits for a ticket, talks, waits for another ticket.",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			var s ticketsState
			t.Resume(&s)
			if s.First == "" {
				wp, err := t.WaitFor(ctx, workflows.WaitpointRequest{Name: "ticket"}, workflows.Resumable(&s))
				if err != nil {
					return err
				}
				s.First = wp.ID
			}
			for {
				m, err := t.Ask(ctx, "chat", fmt.Sprintf("Turn %d: say anything, or done.", s.Turns), workflows.Resumable(&s))
				if err != nil {
					return err
				}
				if strings.TrimSpace(workflows.MessageText(m)) == "done" {
					break
				}
				s.Turns++
			}
			wp, err := t.WaitFor(ctx, workflows.WaitpointRequest{Name: "ticket"}, workflows.Resumable(&s))
			if err != nil {
				return err
			}
			t.Reply(s.First + " then " + wp.ID + ": " + string(wp.Payload))
			return nil
		},
	}
}

// BookTrip is the trips agent's own activity, registered under the name
// the a2aflow command's demo gives its own.
func BookTrip(_ context.Context, destination string) (string, error) {
	return "product booked " + destination, nil
}

func trips() *workflows.Agent {
	return &workflows.Agent{
		Name:        "trips",
		Description: "Books a trip with an activity of its own.",
		Activities:  []any{workflows.Activity("BookTrip", BookTrip)},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			var booked string
			if err := workflow.ExecuteActivity(actx, "BookTrip", t.Text()).Get(ctx, &booked); err != nil {
				return err
			}
			t.Reply(booked)
			return nil
		},
	}
}

// slow works for the duration its message's text gives ("3s"), a
// durable timer, and answers with when it started and ended: the schedule
// test (tests/schedules_test.go) checks that runs never overlap.
func slow() *workflows.Agent {
	return &workflows.Agent{
		Name:        "slow",
		Description: "Works for the duration it is sent, then says when it started and ended.",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			d, err := time.ParseDuration(strings.TrimSpace(t.Text()))
			if err != nil {
				return err
			}
			began := workflow.Now(ctx)
			if err := workflow.Sleep(ctx, d); err != nil {
				return err
			}
			t.Reply(began.UTC().Format(time.RFC3339Nano) + " " + workflow.Now(ctx).UTC().Format(time.RFC3339Nano))
			return nil
		},
	}
}

// logCall appends a line to the file PRODUCT_CALLS names, when set.
func logCall(line string) error {
	path := os.Getenv("PRODUCT_CALLS")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}

// RecordDecision is council's activity: it records who approved.
func RecordDecision(_ context.Context, approvers string) (string, error) {
	return "recorded " + approvers, logCall("RecordDecision " + approvers)
}

func council() *workflows.Agent {
	return &workflows.Agent{
		Name:        "council",
		Description: "Asks two approvers of the council, then records their decision.",
		Activities:  []any{workflows.Activity("RecordDecision", RecordDecision)},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Approve " + t.Text() + "?", Groups: []string{"council"}, Required: 2})
			if err != nil {
				return err
			}
			if !a.Approved() {
				t.Reply("rejected")
				return nil
			}
			var who []string
			for _, d := range a.Decisions {
				who = append(who, d.Approver)
			}
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			var recorded string
			if err := workflow.ExecuteActivity(actx, "RecordDecision", strings.Join(who, "+")).Get(ctx, &recorded); err != nil {
				return err
			}
			t.Reply(recorded)
			return nil
		},
	}
}

// Stamp is pause's local activity.
func Stamp(_ context.Context, answer string) (string, error) {
	return "stamped " + answer, logCall("Stamp " + answer)
}

func pause() *workflows.Agent {
	return &workflows.Agent{
		Name:        "pause",
		Description: "Asks, stamps the answer, sleeps the duration it was sent, asks again.",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			d, err := time.ParseDuration(strings.TrimSpace(t.Text()))
			if err != nil {
				return err
			}
			first, err := t.Ask(ctx, "first", "First?")
			if err != nil {
				return err
			}
			lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
			var stamped string
			if err := workflow.ExecuteLocalActivity(lctx, Stamp, workflows.MessageText(first)).Get(ctx, &stamped); err != nil {
				return err
			}
			if err := workflow.Sleep(ctx, d); err != nil {
				return err
			}
			second, err := t.Ask(ctx, "second", "Second?")
			if err != nil {
				return err
			}
			t.Reply(stamped + ", then " + workflows.MessageText(second))
			return nil
		},
	}
}

func main() {
	if build == "" {
		build = "v1"
		if strings.HasSuffix(filepath.Base(os.Args[0]), "-v2") {
			build = "v2"
		}
	}
	a2aflow.Main(orders(), notes(), tickets(), trips(), slow(), council(), pause())
}
