package activities

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"time"

	"github.com/go-playground/validator/v10"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/models"
)

// Bookings makes the travel agent's reservations, stored in the models database.
type Bookings struct {
	// Store is where bookings are recorded; required.
	Store *models.Store
}

// Booking is a booked trip, as the workflow gets it: plain data, the same
// JSON as the stored models.Booking (without its idempotency key), so that
// workflow code never holds a database model.
type Booking struct {
	// Reference is the confirmation code shown to the traveller.
	Reference   string    `json:"reference"`
	Destination string    `json:"destination"`
	Date        string    `json:"date"`
	Travellers  int       `json:"travellers"`
	CreatedAt   time.Time `json:"createdAt"`
}

// BookTripInput is what a trip booking needs.
type BookTripInput struct {
	Destination string `json:"destination" validate:"required,max=200"`
	Date        string `json:"date" validate:"required,datetime=2006-01-02"`
	Travellers  int    `json:"travellers" validate:"min=1,max=9"`
}

var validate = validator.New(validator.WithRequiredStructEnabled())

// ErrTypeInvalidInput is the application error type of input an activity
// refuses; it is not retried.
const ErrTypeInvalidInput = "InvalidInput"

// BookTrip books a trip once per calling task: a retry of the same activity
// returns the booking already made.
func (b *Bookings) BookTrip(ctx context.Context, in BookTripInput) (*Booking, error) {
	if err := validate.Struct(in); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("invalid booking: %v", err), ErrTypeInvalidInput, err)
	}
	info := activity.GetInfo(ctx)
	ref, err := bookingReference()
	if err != nil {
		return nil, err
	}
	booking, err := b.Store.CreateBooking(&models.Booking{
		IdempotencyKey: info.WorkflowExecution.ID + "/" + info.ActivityID,
		Reference:      ref,
		Destination:    in.Destination,
		Date:           in.Date,
		Travellers:     in.Travellers,
	})
	if err != nil {
		return nil, fmt.Errorf("book trip: %w", err)
	}
	activity.GetLogger(ctx).Info("trip booked", "reference", booking.Reference, "destination", booking.Destination)
	return &Booking{Reference: booking.Reference, Destination: booking.Destination, Date: booking.Date,
		Travellers: booking.Travellers, CreatedAt: booking.CreatedAt}, nil
}

// bookingReference returns a confirmation code such as "AF-7KQ2M9".
func bookingReference() (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	code := make([]byte, 6)
	for i := range code {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("booking reference: %w", err)
		}
		code[i] = alphabet[n.Int64()]
	}
	return "AF-" + string(code), nil
}
