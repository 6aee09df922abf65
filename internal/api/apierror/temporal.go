package apierror

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TaskNotFound is the one answer for a task the caller may not see: one
// that does not exist and one of another owner read the same, message
// included, so that an answer never tells that a task exists. A new error
// each time: a2a-go adds details to the errors it writes.
func TaskNotFound() error { return a2a.NewError(a2a.ErrTaskNotFound, "task not found") }

// FromTemporal maps an error from a Temporal call to the A2A error a client
// gets. It is the one place where that mapping lives; a2a-go's transports
// turn the A2A error into its JSON-RPC code or HTTP status.
func FromTemporal(err error) error {
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
		case wire.ErrTypeUnsupportedOperation:
			return a2a.NewError(a2a.ErrUnsupportedOperation, appErr.Message())
		case wire.ErrTypeTaskNotCancelable:
			return a2a.NewError(a2a.ErrTaskNotCancelable, appErr.Message())
		case wire.ErrTypeInvalidParams:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case wire.ErrTypeTaskNotFound, wire.ErrTypeApprovalNotFound:
			return TaskNotFound()
		case wire.ErrTypePushConfigNotFound:
			return a2a.NewError(a2a.ErrTaskNotFound, appErr.Message())
		case wire.ErrTypeApprovalRefused:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case wire.ErrTypeContinuing:
			return Retryable(appErr.Message(), "CONTINUING_AS_NEW")
		case wire.ErrTypeGenerationMismatch:
			return generationMismatch(appErr)
		}
	}
	var queryFailed *serviceerror.QueryFailed
	if errors.As(err, &queryFailed) {
		// A query handler's error arrives as a failure, not an ApplicationError.
		// A query answered inside a workflow task (the workflow had one
		// pending, e.g. a refused update) carries only the error's text,
		// which names its type.
		if queryFailed.Failure.GetApplicationFailureInfo().GetType() == wire.ErrTypeTaskNotFound ||
			strings.Contains(queryFailed.Message, "(type: "+wire.ErrTypeTaskNotFound+",") {
			return TaskNotFound()
		}
		return fmt.Errorf("%w: query failed: %s", a2a.ErrInternalError, queryFailed.Message)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return TaskNotFound()
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		return a2a.NewError(a2a.ErrInvalidParams, invalid.Error())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", a2a.ErrServerError, err)
	}
	if IsResourceExhausted(err) {
		return Retryable("Temporal is over a limit: "+err.Error(), "RESOURCE_EXHAUSTED")
	}
	var notReady *serviceerror.WorkflowNotReady
	if errors.As(err, &notReady) {
		// An update that reached a workflow task which then failed: nothing
		// of it was recorded, and the same request may be sent again.
		return Retryable("the task did not take the request (its workflow task failed): "+notReady.Error(), "WORKFLOW_TASK_FAILED")
	}
	var unavailable *serviceerror.Unavailable
	if errors.As(err, &unavailable) {
		return a2a.NewError(a2a.ErrServerError, "Temporal is unavailable: "+unavailable.Error())
	}
	return fmt.Errorf("%w: %w", a2a.ErrInternalError, err)
}

// IsAppErrorType reports whether err carries an application error of typ,
// as update validators return them.
func IsAppErrorType(err error, typ string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == typ
}

// IsResourceExhausted reports whether Temporal refused a call for a limit,
// such as its 10 updates in flight per workflow.
func IsResourceExhausted(err error) bool {
	var exhausted *serviceerror.ResourceExhausted
	return errors.As(err, &exhausted)
}

// RetryAfter is what a retryable error tells the client to wait.
const RetryAfter = 5 * time.Second

// Retryable is the answer to a request that may succeed if sent again
// unchanged: JSON-RPC -32603 (internal error) whose data says so, HTTP+JSON
// 503 with Retry-After (restResponseGuard). reason names the cause in the
// data (NO_WORKER, TOO_MANY_UPDATES).
func Retryable(msg, reason string) error {
	return a2a.NewError(a2a.ErrInternalError, msg).WithDetails(map[string]any{
		"retryable": true, "reason": reason, "retryAfterSeconds": int(RetryAfter / time.Second),
	})
}

// BoundPassed reports whether err is a call's deadline passing — our wait
// bound, or Temporal's server cutting the call a moment before it — while
// the request itself (ctx) is still alive: no worker answered in time.
func BoundPassed(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline) || status.Code(err) == codes.DeadlineExceeded
}

// IsValidatorRefusal reports whether err, from an update's Get, is the
// refusal of the workflow's validator (an application error the validators
// return) rather than a failure after the update was accepted.
func IsValidatorRefusal(err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	switch appErr.Type() {
	case wire.ErrTypeUnsupportedOperation, wire.ErrTypeTaskNotCancelable, wire.ErrTypeInvalidParams,
		wire.ErrTypeTaskNotFound, wire.ErrTypeDuplicateMessage, wire.ErrTypeContinuing, wire.ErrTypeApprovalRefused,
		wire.ErrTypeApprovalNotFound, wire.ErrTypeCredentialRequired, wire.ErrTypeGenerationMismatch,
		wire.ErrTypePushConfigNotFound:
		return true
	}
	return false
}

// IsNotFound reports whether err is Temporal's NotFound.
func IsNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// ErrBadPageToken is the cause of the InvalidParams error a ListTasks request
// gets for a page token this API did not issue for the same filters.
var ErrBadPageToken = errors.New("pageToken is not valid for this listing")

// FromVisibility maps the error of a visibility call. A page token that passed
// our checksum but that Temporal still refuses is the client's (it was
// forged), not a server failure.
func FromVisibility(err error, withToken bool) error {
	var unavailable *serviceerror.Unavailable
	if withToken && !errors.As(err, &unavailable) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("%v: Temporal refused it: %v", ErrBadPageToken, err))
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		// Our own query is malformed: a bug, not the client's fault.
		return fmt.Errorf("%w: visibility query refused: %w", a2a.ErrInternalError, err)
	}
	return FromTemporal(err)
}

// FromWrite maps the error of a write (an update) on task taskID, but for
// Temporal's NotFound, which the writer reads first (a task whose workflow
// has closed is terminal, not missing: TaskService.writeError): Temporal's
// limit of updates in flight is retryable (TOO_MANY_UPDATES), the rest as
// FromTemporal.
func FromWrite(taskID string, err error) error {
	if IsResourceExhausted(err) {
		return Retryable(fmt.Sprintf("task %s has too many requests in flight; try again in a moment", taskID), "TOO_MANY_UPDATES")
	}
	return FromTemporal(err)
}

// NotTaken reports whether a write was refused because its task could not
// take it at that moment, with nothing of it recorded, so that sending it
// again is safe: the task was continuing as new, or the update reached a
// workflow task that then failed (Temporal does not retry such an update).
func NotTaken(err error) bool {
	var notReady *serviceerror.WorkflowNotReady
	return IsAppErrorType(err, wire.ErrTypeContinuing) || errors.As(err, &notReady)
}

// generationMismatch is the A2A error of the validator's refusal of a
// conditional message (workflows/generation.go), whose details are the
// expected and the current generation: they go in the ErrorInfo's
// metadata, as the dev-1.1 specification's §11.6 example has them.
func generationMismatch(appErr *temporal.ApplicationError) error {
	var want, current int64
	meta := map[string]string{}
	if appErr.Details(&want, &current) == nil {
		meta["expectedGeneration"] = strconv.FormatInt(want, 10)
		meta["currentGeneration"] = strconv.FormatInt(current, 10)
	}
	return a2a.NewError(ErrTaskGenerationMismatch, appErr.Message()).WithErrorInfoMeta(meta)
}
