package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Travel returns the travel agent: slot filling without a state machine.
// Each question is one Ask call; the task waits, durably, for the answer.
func Travel() *workflows.Agent {
	return &workflows.Agent{
		Name:        "travel",
		Description: "Books flights. Asks for the destination, the date and the number of travellers, then books the trip.",
		Skills: []a2a.AgentSkill{{
			ID:          "book-flight",
			Name:        "Book a flight",
			Description: "Books a flight after asking where to, when, and for how many travellers.",
			Tags:        []string{"travel", "booking"},
			Examples:    []string{"Book a flight", "I need a flight to Lisbon"},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		Handle: bookFlight,
		// The booking activity, registered on the worker under its name:
		// the agent brings it, as any program's agent brings its own.
		Activities: []any{workflows.Activity(ActivityBookTrip, BookTrip)},
	}
}

// TravelBooking is the travel agent's artifact.
type TravelBooking struct {
	Reference   string `json:"reference"`
	Destination string `json:"destination"`
	Date        string `json:"date"`
	Travellers  int    `json:"travellers"`
}

// travelSlots are the travel agent's answers so far: its state when the
// task continues as new (a conversation of thousands of invalid dates).
type travelSlots struct {
	Destination string `json:"destination,omitempty"`
	Date        string `json:"date,omitempty"`
	Travellers  int    `json:"travellers,omitempty"`
}

func bookFlight(ctx workflow.Context, t *workflows.Task) error {
	var st slotState[travelSlots]
	t.Resume(&st)
	s := &st.Slots
	var err error
	if s.Destination == "" {
		if s.Destination, err = askUntil(ctx, t, &st, "destination", "Where to?", func(s string) (string, error) {
			if s == "" {
				return "", fmt.Errorf("Please name a destination.")
			}
			return s, nil
		}); err != nil {
			return err
		}
	}
	if s.Date == "" {
		if s.Date, err = askUntil(ctx, t, &st, "date", "On which date? (YYYY-MM-DD)", func(s string) (string, error) {
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return "", fmt.Errorf("%q is not a date like 2026-12-24.", s)
			}
			return s, nil
		}); err != nil {
			return err
		}
	}
	if s.Travellers == 0 {
		if s.Travellers, err = askUntil(ctx, t, &st, "travellers", "How many travellers?", func(s string) (int, error) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 9 {
				return 0, fmt.Errorf("Please give a number of travellers from 1 to 9.")
			}
			return n, nil
		}); err != nil {
			return err
		}
	}
	destination, date, travellers := s.Destination, s.Date, s.Travellers

	t.Progress(ctx, fmt.Sprintf("Booking %d traveller(s) to %s on %s...", travellers, destination, date))
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
		Summary:             fmt.Sprintf("book %d traveller(s) to %s on %s", travellers, destination, date),
	})
	var booking Booking
	err = workflow.ExecuteActivity(actx, ActivityBookTrip, BookTripInput{
		Destination: destination, Date: date, Travellers: travellers,
	}).Get(ctx, &booking)
	if err != nil {
		return fmt.Errorf("the booking system did not confirm the trip: %w", err)
	}
	t.Artifact(ctx, workflows.JSONArtifact("booking", TravelBooking{
		Reference: booking.Reference, Destination: booking.Destination, Date: booking.Date, Travellers: booking.Travellers,
	}))
	t.Reply(fmt.Sprintf("Booked: %d traveller(s) to %s on %s, reference %s.", travellers, destination, date, booking.Reference))
	return nil
}

// slotState is the state of a slot-filling skill that may continue as new:
// the answers so far (Slots) and the question being asked, which after an
// invalid answer says what was wrong.
type slotState[S any] struct {
	Slots    S      `json:"slots"`
	Question string `json:"question,omitempty"`
}

// askUntil asks for slot until parse accepts the answer, telling the user
// what was wrong each time. Each question is a resumable wait: however many
// answers it takes, the task continues as new when its history grows, and
// the skill comes back to the same question with st.
func askUntil[S, T any](ctx workflow.Context, t *workflows.Task, st *slotState[S], slot, prompt string, parse func(string) (T, error)) (T, error) {
	question := prompt
	if st.Question != "" {
		question = st.Question // the question asked before the task continued as new
	}
	for {
		st.Question = question
		answer, err := t.Ask(ctx, slot, question, workflows.Resumable(st))
		if err != nil {
			var zero T
			return zero, err
		}
		v, perr := parse(strings.TrimSpace(workflows.MessageText(answer)))
		if perr == nil {
			st.Question = ""
			return v, nil
		}
		question = perr.Error() + " " + prompt
	}
}
