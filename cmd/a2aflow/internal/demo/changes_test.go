package demo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/cmd/a2aflow/internal/demo"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// changeRecord reads the changes agent's artifact.
func changeRecord(t *testing.T, task *a2a.Task) demo.ChangeRecord {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("artifacts = %+v, want one change record", task.Artifacts)
	}
	raw, err := json.Marshal(task.Artifacts[0].Parts[0].Data())
	if err != nil {
		t.Fatal(err)
	}
	var rec demo.ChangeRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func refusedAs(t *testing.T, typ, contains string) func(error) {
	return func(err error) {
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != typ || !strings.Contains(appErr.Message(), contains) {
			t.Errorf("refusal = %v, want %s containing %q", err, typ, contains)
		}
	}
}

// TestChangesWaitpoint: the task waits input-required with its waitpoint's
// ID and schema; a payload the schema refuses and an unknown waitpoint are
// refused before history; the first valid completion wins, a second one is
// refused as settled; the task completes with the ticket.
func TestChangesWaitpoint(t *testing.T) {
	env := workflowstest.New(t, demo.Changes(demo.ChangesConfig{}))
	id := workflowstest.WaitpointID(1)
	env.Look(time.Minute, func(task *a2a.Task) {
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("state = %s, want input-required", task.Status.State)
			return
		}
		var data map[string]any
		for _, p := range task.Status.Message.Parts {
			if d, ok := p.Data().(map[string]any); ok {
				data = d
			}
		}
		if data["waitpointId"] != id || data["name"] != "ticket" || data["schema"] == nil || data["deadline"] == nil {
			t.Errorf("status data part = %v, want the waitpoint's ID, name, schema and deadline", data)
		}
	})
	env.CompleteWaitpointRefused(2*time.Minute, id, map[string]any{"approved": "yes"},
		refusedAs(t, wire.ErrTypeInvalidParams, "ticket_id"))
	env.CompleteWaitpointRefused(3*time.Minute, workflowstest.WaitpointID(2), map[string]any{"ticket_id": "CHG-1", "approved": true},
		refusedAs(t, wire.ErrTypeWaitpointNotFound, "not found"))
	env.CompleteWaitpoint(time.Hour, id, map[string]any{"ticket_id": "CHG-42", "approved": true, "comment": "go"})
	env.CompleteWaitpointRefused(time.Hour+time.Second, id, map[string]any{"ticket_id": "CHG-43", "approved": false},
		refusedAs(t, wire.ErrTypeWaitpointSettled, "already completed"))
	task := env.RunText("changes", "Restart the payments database")
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s (%s), want completed", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	rec := changeRecord(t, task)
	if rec.Ticket != (demo.Ticket{TicketID: "CHG-42", Approved: true, Comment: "go"}) || rec.Waitpoint != id || rec.Via != "test" || rec.By != "token" {
		t.Errorf("record = %+v", rec)
	}
}

// TestChangesWaitpointByMessage: the owner completes the waitpoint with a
// message's data part; a refused ticket rejects the task.
func TestChangesWaitpointByMessage(t *testing.T) {
	env := workflowstest.New(t, demo.Changes(demo.ChangesConfig{}))
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"waitpointId": workflowstest.WaitpointID(1),
		"payload":     map[string]any{"ticket_id": "CHG-7", "approved": false, "comment": "freeze week"},
	}))
	env.AnswerMessage(time.Hour, m)
	task := env.RunText("changes", "Deploy on Friday")
	if task.Status.State != a2a.TaskStateRejected || !strings.Contains(workflows.MessageText(task.Status.Message), "freeze week") {
		t.Fatalf("state = %s (%s), want rejected saying why", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	if rec := changeRecord(t, task); rec.Via != "a2a" || rec.Ticket.TicketID != "CHG-7" {
		t.Errorf("record = %+v, want CHG-7 via a2a", rec)
	}
}

// TestChangesWaitpointDeadline: nothing completes the waitpoint within its
// timeout; the task fails saying so, and a late completion is refused.
func TestChangesWaitpointDeadline(t *testing.T) {
	env := workflowstest.New(t, demo.Changes(demo.ChangesConfig{TicketTimeout: 2 * time.Hour}))
	task := env.RunText("changes", "Rotate the TLS certificates")
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(workflows.MessageText(task.Status.Message), "deadline passed") {
		t.Fatalf("state = %s (%s), want failed at the deadline", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	v, err := env.QueryWorkflow(wire.QueryWaitpoints, wire.WaitpointsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var wps []workflows.Waitpoint
	if err := v.Get(&wps); err != nil {
		t.Fatal(err)
	}
	if len(wps) != 1 || wps[0].State != workflows.WaitpointExpired {
		t.Errorf("waitpoints = %+v, want one expired", wps)
	}
}

// TestWaitForDefaultAtDeadline: a waitpoint that says DefaultAtDeadline
// completes with its default payload; a default its schema refuses, and a
// schema that does not compile or refers to another document, are the
// skill's errors.
func TestWaitForDefaultAtDeadline(t *testing.T) {
	schema := `{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`
	var got *workflows.Waitpoint
	var errs []string
	agent := &workflows.Agent{Name: "waiter", Handle: func(ctx workflow.Context, task *workflows.Task) error {
		for _, bad := range []workflows.WaitpointRequest{
			{Name: "bad-default", Schema: schema, Timeout: time.Hour, OnTimeout: workflows.DefaultAtDeadline, Default: map[string]any{"approved": "no"}},
			{Name: "bad-schema", Schema: `{"type": 12}`},
			{Name: "remote-ref", Schema: `{"$ref": "https://example.com/s.json"}`},
			{Name: "not-json", Schema: `{"type":`},
		} {
			_, err := task.WaitFor(ctx, bad)
			errs = append(errs, bad.Name+": "+errString(err))
		}
		var err error
		got, err = task.WaitFor(ctx, workflows.WaitpointRequest{Name: "verdict", Schema: schema, Timeout: time.Hour,
			OnTimeout: workflows.DefaultAtDeadline, Default: map[string]any{"approved": false}})
		return err
	}}
	env := workflowstest.New(t, agent)
	task := env.RunText("waiter", "go")
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s (%s)", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	for _, e := range errs {
		if strings.HasSuffix(e, ": <nil>") {
			t.Errorf("WaitFor %s, want an error", e)
		}
	}
	if got == nil || got.State != workflows.WaitpointCompleted || got.Via != "deadline" || string(got.Payload) != `{"approved":false}` {
		t.Errorf("waitpoint = %+v, want completed by the deadline with the default", got)
	}
	// The waitpoint of a bad request was never created: the good one is the first.
	if got != nil && got.ID != workflowstest.WaitpointID(1) {
		t.Errorf("ID = %s, want %s", got.ID, workflowstest.WaitpointID(1))
	}
}

func errString(err error) string { return fmt.Sprint(err) }
