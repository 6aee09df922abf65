package agents

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/activities"
	"github.com/a2aflow/a2aflow/models"
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
	}
}

// TravelBooking is the travel agent's artifact.
type TravelBooking struct {
	Reference   string `json:"reference"`
	Destination string `json:"destination"`
	Date        string `json:"date"`
	Travellers  int    `json:"travellers"`
}

func bookFlight(ctx workflow.Context, t *workflows.Task) error {
	destination, err := askUntil(ctx, t, "destination", "Where to?", func(s string) (string, error) {
		if s == "" {
			return "", fmt.Errorf("Please name a destination.")
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	date, err := askUntil(ctx, t, "date", "On which date? (YYYY-MM-DD)", func(s string) (string, error) {
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "", fmt.Errorf("%q is not a date like 2026-12-24.", s)
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	travellers, err := askUntil(ctx, t, "travellers", "How many travellers?", func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 9 {
			return 0, fmt.Errorf("Please give a number of travellers from 1 to 9.")
		}
		return n, nil
	})
	if err != nil {
		return err
	}

	t.Progress(ctx, fmt.Sprintf("Booking %d traveller(s) to %s on %s...", travellers, destination, date))
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	var booking models.Booking
	err = workflow.ExecuteActivity(actx, (*activities.Bookings)(nil).BookTrip, activities.BookTripInput{
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

// askUntil asks for slot until parse accepts the answer, telling the user
// what was wrong each time.
func askUntil[T any](ctx workflow.Context, t *workflows.Task, slot, prompt string, parse func(string) (T, error)) (T, error) {
	question := prompt
	for {
		answer, err := t.Ask(ctx, slot, question)
		if err != nil {
			var zero T
			return zero, err
		}
		v, perr := parse(strings.TrimSpace(workflows.MessageText(answer)))
		if perr == nil {
			return v, nil
		}
		question = perr.Error() + " " + prompt
	}
}
