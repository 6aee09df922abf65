package demo_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/cmd/a2aflow/internal/demo"
	"github.com/a2aflow/a2aflow/internal/wire"
)

const (
	askDestination = "Where to?"
	askDate        = "On which date? (YYYY-MM-DD)"
	askTravellers  = "How many travellers?"
)

// turn is one user message and the status the blocking send answers with.
type turn struct {
	say  string
	want statusView
}

func asks(slot, prompt string) statusView {
	return statusView{State: a2a.TaskStateInputRequired, Message: question(slot, prompt)}
}

func TestTravelConversation(t *testing.T) {
	booked := statusView{State: a2a.TaskStateCompleted, Message: agent("Booked: 2 traveller(s) to Lisbon on 2026-12-24, reference AF-TEST42.")}
	tests := []struct {
		name  string
		turns []turn
	}{
		{
			name: "happy path",
			turns: []turn{
				{"Book a flight", asks("destination", askDestination)},
				{"Lisbon", asks("date", askDate)},
				{"2026-12-24", asks("travellers", askTravellers)},
				{"2", booked},
			},
		},
		{
			name: "invalid answers are asked again with an explanation",
			turns: []turn{
				{"Book a flight", asks("destination", askDestination)},
				{"   ", asks("destination", "Please name a destination. "+askDestination)},
				{"  Lisbon ", asks("date", askDate)},
				{"tomorrow", asks("date", `"tomorrow" is not a date like 2026-12-24. `+askDate)},
				{"2026-02-30", asks("date", `"2026-02-30" is not a date like 2026-12-24. `+askDate)},
				{"2026-12-24", asks("travellers", askTravellers)},
				{"ten", asks("travellers", "Please give a number of travellers from 1 to 9. "+askTravellers)},
				{"0", asks("travellers", "Please give a number of travellers from 1 to 9. "+askTravellers)},
				{"10", asks("travellers", "Please give a number of travellers from 1 to 9. "+askTravellers)},
				{"2", booked},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv()
			env.OnActivity(demo.ActivityBookTrip, mock.Anything, demo.BookTripInput{
				Destination: "Lisbon", Date: "2026-12-24", Travellers: 2,
			}).Return(&demo.Booking{
				Reference: "AF-TEST42", Destination: "Lisbon", Date: "2026-12-24", Travellers: 2,
			}, nil).Once()
			start := env.Now()
			results := make([]*sent, len(tt.turns))
			for i, turn := range tt.turns {
				env.RegisterDelayedCallback(func() {
					results[i] = sendMessage(env, userText(turn.say))
				}, time.Duration(i+1)*time.Minute)
			}

			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "travel", ContextID: "ctx-1"})

			var wantHistory []messageView
			for i, turn := range tt.turns {
				r := results[i]
				switch {
				case r == nil:
					t.Fatalf("turn %d %q: never sent", i, turn.say)
				case r.rejected != nil || r.err != nil || !r.done || r.task == nil:
					t.Fatalf("turn %d %q: rejected %v, completed %v, error %v", i, turn.say, r.rejected, r.done, r.err)
				}
				// A blocking send answers in the same minute, with the next question.
				if got, want := r.at.Sub(start), time.Duration(i+1)*time.Minute; got != want {
					t.Errorf("turn %d %q: answered after %v, want %v", i, turn.say, got, want)
				}
				if diff := cmp.Diff(turn.want, viewStatus(r.task)); diff != "" {
					t.Errorf("turn %d %q: status (-want +got):\n%s", i, turn.say, diff)
				}
				wantHistory = append(wantHistory, user(turn.say))
				if i == len(tt.turns)-1 {
					wantHistory = append(wantHistory, agent("Booking 2 traveller(s) to Lisbon on 2026-12-24..."))
				}
				wantHistory = append(wantHistory, turn.want.Message)
			}

			final := finalTask(t, env)
			if diff := cmp.Diff(booked, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantHistory, viewHistory(final.History)); diff != "" {
				t.Errorf("final history (-want +got):\n%s", diff)
			}
			wantBooking := demo.TravelBooking{Reference: "AF-TEST42", Destination: "Lisbon", Date: "2026-12-24", Travellers: 2}
			if len(final.Artifacts) != 1 {
				t.Fatalf("got %d artifacts, want 1", len(final.Artifacts))
			}
			checkBookingArtifact(t, final.Artifacts[0], wantBooking)
			env.AssertExpectations(t)
		})
	}
}

// checkBookingArtifact checks a is the JSON booking artifact holding want.
func checkBookingArtifact(t *testing.T, a *a2a.Artifact, want demo.TravelBooking) {
	t.Helper()
	if a.ID != testTaskID+"-artifact-1" || a.Name != "booking" {
		t.Errorf("artifact id %q name %q, want %q %q", a.ID, a.Name, testTaskID+"-artifact-1", "booking")
	}
	if diff := cmp.Diff(map[string]any{"version": float64(1)}, a.Metadata); diff != "" {
		t.Errorf("artifact metadata (-want +got):\n%s", diff)
	}
	if len(a.Parts) != 1 || a.Parts[0].MediaType != "application/json" {
		t.Fatalf("artifact parts = %+v, want one application/json part", a.Parts)
	}
	raw, err := json.Marshal(a.Parts[0].Data())
	if err != nil {
		t.Fatalf("artifact data: %v", err)
	}
	var got demo.TravelBooking
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("artifact data %s: %v", raw, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("booking artifact (-want +got):\n%s", diff)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("artifact data %s: %v", raw, err)
	}
	if len(fields) != 4 {
		t.Errorf("artifact data %s has %d fields, want reference, destination, date, travellers", raw, len(fields))
	}
}

func TestTravelBookingFailure(t *testing.T) {
	env := newTaskEnv()
	env.OnActivity(demo.ActivityBookTrip, mock.Anything, demo.BookTripInput{
		Destination: "Atlantis", Date: "2026-12-24", Travellers: 1,
	}).Return(nil, temporal.NewNonRetryableApplicationError("invalid booking: no such destination", "InvalidInput", nil)).Once()
	for i, say := range []string{"Atlantis", "2026-12-24", "1"} {
		env.RegisterDelayedCallback(func() { sendMessage(env, userText(say)) }, time.Duration(i+1)*time.Minute)
	}

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "travel", Message: userText("Book a flight")})

	final := finalTask(t, env)
	// The activity's own message, without Temporal's activity wrapping.
	want := statusView{State: a2a.TaskStateFailed, Message: agent("the booking system did not confirm the trip: invalid booking: no such destination")}
	if diff := cmp.Diff(want, viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if len(final.Artifacts) != 0 {
		t.Errorf("a failed booking left %d artifacts", len(final.Artifacts))
	}
	env.AssertExpectations(t) // a non-retryable failure is tried once
}

func TestTravelCanceledWhileAsking(t *testing.T) {
	env := newTaskEnv()
	var canceled *a2a.Task
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(wire.UpdateCancelTask, "cancel-1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("cancel rejected: %v", err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("cancel: %v", err)
				}
				canceled = resultTask(env, v)
			},
		}, wire.CancelTaskInput{})
	}, time.Minute)

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "travel", Message: userText("Book a flight")})

	want := statusView{State: a2a.TaskStateCanceled, Message: agent("The task was canceled.")}
	if canceled == nil {
		t.Fatal("cancel did not return a task")
	}
	if diff := cmp.Diff(want, viewStatus(canceled)); diff != "" {
		t.Errorf("cancel result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, viewStatus(finalTask(t, env))); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
}

func TestBuiltin(t *testing.T) {
	reg := demo.Builtin()
	if diff := cmp.Diff([]string{"travel", "assistant", "changes", "echo", "expenses", "issues", "report", "router"}, reg.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got := reg.Default().Name; got != "travel" {
		t.Errorf("default agent = %q, want travel", got)
	}
	if got := reg.Default().DefaultSkill(); got != "book-flight" {
		t.Errorf("travel default skill = %q, want book-flight", got)
	}
	if echo, ok := reg.Get("echo"); !ok || echo.DefaultSkill() != "echo" {
		t.Errorf("Get(echo) = %v, %v; want the echo agent", echo, ok)
	}
}
