package apierror

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// The refusals of the REST resources (approvals, waitpoints, schedules,
// usage), answered {"error": "..."} with their status (Plain), and
// the mapping of what their Temporal calls and the task workflow's
// validators refuse.

// NotFound is a resource the caller may not see, which reads as one that
// does not exist (404).
func NotFound(format string, args ...any) error {
	return a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf(format, args...))
}

// ResourceError keys an error of the approvals API by its sentinel, its
// message unchanged: the API's refusals are keyed already; Temporal
// unavailable or too slow reads as ErrServerError (503), anything else as
// ErrInternalError (500).
func ResourceError(err error) error {
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		return err
	}
	var unavailable *serviceerror.Unavailable
	if errors.As(err, &unavailable) || errors.Is(err, context.DeadlineExceeded) {
		return a2a.NewError(a2a.ErrServerError, err.Error())
	}
	return err
}

// AbortMediaType answers a request of a resource route (approvals,
// policies) whose body is of another media type than JSON: HTTP's own 415,
// {"error": msg}. It is no A2A error: ContentTypeNotSupported is about a
// message's parts (A2A §3.3.2) and answers 400 (§5.4).
func AbortMediaType(c *gin.Context, msg string) {
	Abort(c, Plain, http.StatusUnsupportedMediaType, a2a.NewError(a2a.ErrInvalidRequest, msg))
}

// AbortResource answers an error of the approvals API: {"error": "..."}
// with its status.
func AbortResource(c *gin.Context, err error) {
	Abort(c, Plain, 0, ResourceError(err))
}

// FromSchedules maps Temporal's answers about schedules: a spec the server
// refuses (a cron expression it cannot read) is a bad request.
func FromSchedules(err error) error {
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		return BadRequest("the schedule was refused: " + invalid.Message)
	}
	return ResourceError(FromTemporal(err))
}

// TokenRefused is the answer to a token that does not open the resource
// (kind "waitpoint"): malformed, of another key, or minted for another
// resource of that ID.
func TokenRefused(kind, id string) error {
	return a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("the token does not open %s %s", kind, id))
}

// Conflict is a decision or a completion the resource no longer takes
// (ErrDecisionRefused, 409).
func Conflict(format string, args ...any) error {
	return a2a.NewError(ErrDecisionRefused, fmt.Sprintf(format, args...))
}

// BadRequest is a malformed request (InvalidParams, 400).
func BadRequest(msg string) error { return a2a.NewError(a2a.ErrInvalidParams, msg) }

// FromResourceUpdate maps the refusal of an update a REST route sent about
// one of its resources (kind "approval" or "waitpoint", id its ID) to the
// route's answer; Temporal's NotFound and a settled waitpoint the route
// reads first (the resource may still be seen, or hold the same payload):
//   - the resource or its task does not exist for the caller: 404 naming
//     the resource;
//   - a decision the approval no longer takes: 409, the validator's
//     message;
//   - what the validator finds invalid (arguments, a payload its schema
//     does not take): 400, its message;
//   - a token that does not open the resource: 403;
//   - anything else as it is (ResourceError answers it).
func FromResourceUpdate(kind, id string, err error) error {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return err
	}
	switch appErr.Type() {
	case wire.ErrTypeApprovalNotFound, wire.ErrTypeWaitpointNotFound, wire.ErrTypeTaskNotFound:
		return NotFound("%s %q does not exist", kind, id)
	case wire.ErrTypeApprovalRefused:
		return Conflict("%s", appErr.Message())
	case wire.ErrTypeInvalidParams:
		return BadRequest(appErr.Message())
	case wire.ErrTypeWaitpointTokenRefused:
		return TokenRefused(kind, id)
	}
	return err
}
