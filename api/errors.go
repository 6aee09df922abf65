package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/workflows"
)

// taskNotFound is the one answer for a task the caller may not see: one
// that does not exist and one of another tenant read the same, message
// included, so that an answer never tells that a task exists. A new error
// each time: a2a-go adds details to the errors it writes.
func taskNotFound() error { return a2a.NewError(a2a.ErrTaskNotFound, "task not found") }

// toA2AError maps an error from a Temporal call to the A2A error a client
// gets. It is the one place where that mapping lives; a2a-go's transports
// turn the A2A error into its JSON-RPC code or HTTP status.
func toA2AError(err error) error {
	if err == nil {
		return nil
	}
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		return err
	}
	for _, sentinel := range []error{a2a.ErrTaskNotFound, a2a.ErrUnsupportedOperation, a2a.ErrTaskNotCancelable, a2a.ErrInvalidParams} {
		if errors.Is(err, sentinel) {
			return err
		}
	}

	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case workflows.ErrTypeUnsupportedOperation:
			return a2a.NewError(a2a.ErrUnsupportedOperation, appErr.Message())
		case workflows.ErrTypeTaskNotCancelable:
			return a2a.NewError(a2a.ErrTaskNotCancelable, appErr.Message())
		case workflows.ErrTypeInvalidParams:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case workflows.ErrTypeTaskNotFound, workflows.ErrTypeApprovalNotFound:
			return taskNotFound()
		case workflows.ErrTypeApprovalRefused:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case workflows.ErrTypeContinuing:
			return retryableError(appErr.Message(), "CONTINUING_AS_NEW")
		}
	}
	var queryFailed *serviceerror.QueryFailed
	if errors.As(err, &queryFailed) {
		// A query handler's error arrives as a failure, not an ApplicationError.
		// A query answered inside a workflow task (the workflow had one
		// pending, e.g. a refused update) carries only the error's text,
		// which names its type.
		if queryFailed.Failure.GetApplicationFailureInfo().GetType() == workflows.ErrTypeTaskNotFound ||
			strings.Contains(queryFailed.Message, "(type: "+workflows.ErrTypeTaskNotFound+",") {
			return taskNotFound()
		}
		return fmt.Errorf("%w: query failed: %s", a2a.ErrInternalError, queryFailed.Message)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return taskNotFound()
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		return a2a.NewError(a2a.ErrInvalidParams, invalid.Error())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", a2a.ErrServerError, err)
	}
	if isResourceExhausted(err) {
		return retryableError("Temporal is over a limit: "+err.Error(), "RESOURCE_EXHAUSTED")
	}
	var unavailable *serviceerror.Unavailable
	if errors.As(err, &unavailable) {
		return a2a.NewError(a2a.ErrServerError, "Temporal is unavailable: "+unavailable.Error())
	}
	return fmt.Errorf("%w: %w", a2a.ErrInternalError, err)
}

// isAppErrorType reports whether err carries an application error of typ,
// as update validators return them.
func isAppErrorType(err error, typ string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == typ
}

// isResourceExhausted reports whether Temporal refused a call for a limit,
// such as its 10 updates in flight per workflow.
func isResourceExhausted(err error) bool {
	var exhausted *serviceerror.ResourceExhausted
	return errors.As(err, &exhausted)
}

// retryAfter is what a retryable error tells the client to wait.
const retryAfter = 5 * time.Second

// retryableError is the answer to a request that may succeed if sent again
// unchanged: JSON-RPC -32603 (internal error) whose data says so, HTTP+JSON
// 503 with Retry-After (restResponseGuard). reason names the cause in the
// data (NO_WORKER, TOO_MANY_UPDATES).
func retryableError(msg, reason string) error {
	return a2a.NewError(a2a.ErrInternalError, msg).WithDetails(map[string]any{
		"retryable": true, "reason": reason, "retryAfterSeconds": int(retryAfter / time.Second),
	})
}

// boundPassed reports whether err is a call's deadline passing — our wait
// bound, or Temporal's server cutting the call a moment before it — while
// the request itself (ctx) is still alive: no worker answered in time.
func boundPassed(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline) || status.Code(err) == codes.DeadlineExceeded
}

// isValidatorRefusal reports whether err, from an update's Get, is the
// refusal of the workflow's validator (an application error the validators
// return) rather than a failure after the update was accepted.
func isValidatorRefusal(err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	switch appErr.Type() {
	case workflows.ErrTypeUnsupportedOperation, workflows.ErrTypeTaskNotCancelable, workflows.ErrTypeInvalidParams,
		workflows.ErrTypeTaskNotFound, workflows.ErrTypeDuplicateMessage, workflows.ErrTypeContinuing, workflows.ErrTypeApprovalRefused,
		workflows.ErrTypeApprovalNotFound, workflows.ErrTypeCredentialRequired:
		return true
	}
	return false
}
