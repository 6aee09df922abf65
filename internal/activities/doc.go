// Package activities holds a2aflow's Temporal activities: every piece of I/O
// a task does (bookings in the database, and later LLM calls, remote A2A
// agents and webhooks). Activities that need dependencies are methods on one
// struct, registered with worker.RegisterActivity(&Bookings{...}); workflow
// code calls them through a typed nil pointer, e.g.
// workflow.ExecuteActivity(ctx, (*activities.Bookings)(nil).BookTrip, in).
//
// Activities are retried by Temporal; each one here is idempotent, keyed by
// its workflow and activity ID, so a retry after a crash never repeats a side
// effect. Invalid input is a non-retryable application error.
package activities

// ErrTypeInvalidInput is the application error type of input an activity
// refuses; it is not retried.
const ErrTypeInvalidInput = "InvalidInput"
