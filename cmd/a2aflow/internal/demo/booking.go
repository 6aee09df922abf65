package demo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// ActivityBookTrip is the name of the travel agent's booking activity, in
// the history of every travel task: it never changes.
const ActivityBookTrip = "BookTrip"

// Booking is a booked trip, as the workflow gets it: plain data, the same
// JSON as the stored bookingRow (without its idempotency key), so that
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

// errTypeInvalidInput is the application error type of input the demo's
// activities refuse; it is not retried.
const errTypeInvalidInput = "InvalidInput"

// bookingRow is a reservation as the travel agent keeps it, in the
// "bookings" table of the worker's database (the one a2aflow keeps its
// directory in): every worker of a deployment sees the same bookings, so a
// retry on another worker finds the booking the first attempt made.
type bookingRow struct {
	// IdempotencyKey identifies the request that made the booking (the
	// task ID and the activity's ID), so an activity retried after a crash
	// finds its booking instead of booking twice.
	IdempotencyKey string `gorm:"primaryKey"`
	// Reference is the confirmation code shown to the traveller.
	Reference   string `gorm:"uniqueIndex;not null"`
	Destination string
	Date        string
	Travellers  int
	CreatedAt   time.Time
}

func (bookingRow) TableName() string { return "bookings" }

// BeforeCreate keeps microseconds of a given CreatedAt, as PostgreSQL does.
func (b *bookingRow) BeforeCreate(*gorm.DB) error {
	b.CreatedAt = b.CreatedAt.Truncate(time.Microsecond)
	return nil
}

// bookingTables remembers the databases whose bookings table exists.
var bookingTables sync.Map // *gorm.DB -> struct{}

// bookings returns the worker's database with the bookings table created.
func bookings(ctx context.Context) (*gorm.DB, error) {
	env, err := workerenv.From(ctx)
	if err != nil {
		return nil, err
	}
	if env.DB == nil {
		return nil, errors.New("this worker has no database")
	}
	db := env.DB.WithContext(ctx)
	if _, ok := bookingTables.Load(env.DB); !ok {
		// Two workers creating the table at once: one fails, and Temporal
		// retries its activity, which then finds the table.
		if err := db.AutoMigrate(&bookingRow{}); err != nil {
			return nil, fmt.Errorf("create the bookings table: %w", err)
		}
		bookingTables.Store(env.DB, struct{}{})
	}
	return db, nil
}

// BookTrip books a trip once per calling task: a retry of the same activity
// returns the booking already made.
func BookTrip(ctx context.Context, in BookTripInput) (*Booking, error) {
	if err := validate.Struct(in); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("invalid booking: %v", err), errTypeInvalidInput, err)
	}
	db, err := bookings(ctx)
	if err != nil {
		return nil, err
	}
	info := activity.GetInfo(ctx)
	ref, err := bookingReference()
	if err != nil {
		return nil, err
	}
	row := &bookingRow{
		IdempotencyKey: info.WorkflowExecution.ID + "/" + info.ActivityID,
		Reference:      ref,
		Destination:    in.Destination,
		Date:           in.Date,
		Travellers:     in.Travellers,
	}
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error; err != nil {
		return nil, fmt.Errorf("book trip: %w", err)
	}
	var b bookingRow
	if err := db.First(&b, "idempotency_key = ?", row.IdempotencyKey).Error; err != nil {
		return nil, fmt.Errorf("book trip: read the booking back: %w", err)
	}
	activity.GetLogger(ctx).Info("trip booked", "reference", b.Reference, "destination", b.Destination)
	return &Booking{Reference: b.Reference, Destination: b.Destination, Date: b.Date,
		Travellers: b.Travellers, CreatedAt: b.CreatedAt}, nil
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
