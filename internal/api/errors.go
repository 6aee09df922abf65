package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// binding is the shape of an error answer.
type binding int

const (
	// bindingJSONRPC is a JSON-RPC 2.0 response holding an error object,
	// the google.rpc.ErrorInfo naming the A2A error in its data.
	bindingJSONRPC binding = iota
	// bindingJSONRPCCodeOnly is a JSON-RPC error object without data: the
	// refusals of authentication and of an A2A version, which clients read
	// by their code, have always been written so.
	bindingJSONRPCCodeOnly
	// bindingREST is the HTTP+JSON binding's google.rpc.Status body, the
	// ErrorInfo in its details.
	bindingREST
	// bindingPlain is {"error": "message"}: the approvals API, and the
	// answers outside any agent's binding (no such agent, a panic).
	bindingPlain
)

// bindingOf is the binding of a request to an agent's endpoint.
func bindingOf(jsonRPC bool) binding {
	if jsonRPC {
		return bindingJSONRPC
	}
	return bindingREST
}

// errorCode is how one error reads on each binding.
type errorCode struct {
	sentinel error
	rpcCode  int    // JSON-RPC error code
	status   int    // HTTP status over HTTP+JSON and on the approvals API
	grpc     string // google.rpc code name over HTTP+JSON
	// fixesA2AGo marks the errors whose HTTP status a2a-go's HTTP+JSON
	// transport writes otherwise (400, 400, 500; internal/rest/rest.go
	// ToRESTError in a2a-go v2.4.0): restResponseGuard corrects its
	// answers (correctStatus, a2agofixes.go, which names their canaries).
	fixesA2AGo bool
	// reason and domain name a2aflow's own errors in their ErrorInfo; an
	// A2A error's are a2a.ErrorReason and a2a.ProtocolDomain.
	reason, domain string
}

// errDecisionRefused is the error of an approval decision the approval no
// longer takes: it is settled, its task ended, or the approver decided
// otherwise already. a2aflow's own; a2a has no conflict.
var errDecisionRefused = errors.New("decision refused")

// errorCodes are the codes of every error the server answers, keyed by
// a2a's sentinels, the first a given error wraps winning (an error that
// wraps none reads as ErrInternalError). They are a2a-go's own (its
// transports' tables, the order of its HTTP+JSON one), but for the statuses
// the A2A 1.0 specification gives otherwise (fixesA2AGo) and SERVER_ERROR —
// which toA2AError uses only for Temporal being unavailable or too slow —
// answering 503, so that clients retry. a2aflow's own codes follow
// -31401's rule: -31000 minus the HTTP status.
var errorCodes = []errorCode{
	{sentinel: a2a.ErrParseError, rpcCode: -32700, status: http.StatusBadRequest, grpc: "INVALID_ARGUMENT"},
	{sentinel: a2a.ErrInvalidRequest, rpcCode: -32600, status: http.StatusBadRequest, grpc: "INVALID_ARGUMENT"},
	{sentinel: a2a.ErrMethodNotFound, rpcCode: -32601, status: http.StatusNotImplemented, grpc: "UNIMPLEMENTED"},
	{sentinel: a2a.ErrInvalidParams, rpcCode: -32602, status: http.StatusBadRequest, grpc: "INVALID_ARGUMENT"},
	{sentinel: a2a.ErrInternalError, rpcCode: -32603, status: http.StatusInternalServerError, grpc: "INTERNAL"},
	{sentinel: a2a.ErrServerError, rpcCode: -32000, status: http.StatusServiceUnavailable, grpc: "UNAVAILABLE", fixesA2AGo: true},
	{sentinel: a2a.ErrTaskNotFound, rpcCode: -32001, status: http.StatusNotFound, grpc: "NOT_FOUND"},
	{sentinel: a2a.ErrTaskNotCancelable, rpcCode: -32002, status: http.StatusConflict, grpc: "FAILED_PRECONDITION", fixesA2AGo: true},
	{sentinel: a2a.ErrPushNotificationNotSupported, rpcCode: -32003, status: http.StatusBadRequest, grpc: "FAILED_PRECONDITION"},
	{sentinel: a2a.ErrUnsupportedOperation, rpcCode: -32004, status: http.StatusBadRequest, grpc: "FAILED_PRECONDITION"},
	{sentinel: a2a.ErrUnsupportedContentType, rpcCode: -32005, status: http.StatusUnsupportedMediaType, grpc: "INVALID_ARGUMENT", fixesA2AGo: true},
	{sentinel: a2a.ErrInvalidAgentResponse, rpcCode: -32006, status: http.StatusInternalServerError, grpc: "INTERNAL"},
	{sentinel: a2a.ErrExtendedCardNotConfigured, rpcCode: -32007, status: http.StatusBadRequest, grpc: "FAILED_PRECONDITION"},
	{sentinel: a2a.ErrExtensionSupportRequired, rpcCode: -32008, status: http.StatusBadRequest, grpc: "FAILED_PRECONDITION"},
	// UNIMPLEMENTED as A2A 1.0's table gives (a2a-go v2.4.0 says
	// FAILED_PRECONDITION; its clients never send another version).
	{sentinel: a2a.ErrVersionNotSupported, rpcCode: -32009, status: http.StatusBadRequest, grpc: "UNIMPLEMENTED", fixesA2AGo: true},
	{sentinel: a2a.ErrUnauthenticated, rpcCode: -31401, status: http.StatusUnauthorized, grpc: "UNAUTHENTICATED"},
	{sentinel: a2a.ErrUnauthorized, rpcCode: -31403, status: http.StatusForbidden, grpc: "PERMISSION_DENIED"},
	{sentinel: errDecisionRefused, rpcCode: -31409, status: http.StatusConflict, grpc: "FAILED_PRECONDITION",
		reason: "DECISION_REFUSED", domain: refusalDomain},
	{sentinel: errForkRefused, rpcCode: -31409, status: http.StatusConflict, grpc: "FAILED_PRECONDITION",
		reason: "FORK_REFUSED", domain: refusalDomain},
	{sentinel: errTooManyRequests, rpcCode: CodeTooManyRequests, status: http.StatusTooManyRequests, grpc: "RESOURCE_EXHAUSTED",
		reason: "RATE_LIMITED", domain: refusalDomain},
	{sentinel: errMisdirectedRequest, rpcCode: CodeMisdirectedRequest, status: http.StatusMisdirectedRequest, grpc: "FAILED_PRECONDITION",
		reason: "MISDIRECTED_REQUEST", domain: refusalDomain},
}

// errorCodeOf returns the code of err: that of the first sentinel it wraps,
// else ErrInternalError's.
func errorCodeOf(err error) errorCode {
	for _, c := range errorCodes {
		if errors.Is(err, c.sentinel) {
			return c
		}
	}
	return errorCodeOf(a2a.ErrInternalError)
}

// info is the google.rpc.ErrorInfo naming the error.
func (c errorCode) info() *errordetails.Typed {
	if c.reason != "" {
		return errordetails.NewErrorInfo(c.reason, c.domain, nil)
	}
	return errordetails.NewErrorInfo(a2a.ErrorReason(c.sentinel), a2a.ProtocolDomain, nil)
}

// httpStatusOf is the HTTP status of err over HTTP+JSON and on the
// approvals API.
func httpStatusOf(err error) int { return errorCodeOf(err).status }

// grpcStatusOf names the google.rpc code of an HTTP status: that of the
// first error answering with it, UNIMPLEMENTED for 405 (a method the path
// does not take), and otherwise INTERNAL for 5xx, INVALID_ARGUMENT for the
// rest.
func grpcStatusOf(status int) string {
	for _, c := range errorCodes {
		if c.status == status {
			return c.grpc
		}
	}
	switch {
	case status == http.StatusMethodNotAllowed:
		return "UNIMPLEMENTED"
	case status >= 500:
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// a2aErrorBody returns the HTTP status and the body answering err in
// binding b: the code, status and ErrorInfo of err's sentinel
// (errorCodeOf), its message (errorMessage) and, after the ErrorInfo, the
// typed details of the a2a.Error it is (a RetryInfo). id is the JSON-RPC
// request's id, null when unknown. status, when not 0, is the HTTP status
// to answer with instead: a request refused before its binding read it (a
// body too large or not JSON, an unknown path or method) or the 401 of
// authentication; over HTTP+JSON the google.rpc code then follows it
// (grpcStatusOf). Otherwise a JSON-RPC error answers 200, as JSON-RPC over
// HTTP has it.
func a2aErrorBody(b binding, id json.RawMessage, status int, err error) (int, any) {
	code, msg := errorCodeOf(err), errorMessage(err)
	details := []any{code.info()}
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		for _, d := range a2aErr.TypedDetails {
			if d.TypeURL != errordetails.ErrorInfoType {
				details = append(details, d)
			}
		}
	}
	switch b {
	case bindingJSONRPC, bindingJSONRPCCodeOnly:
		if status == 0 {
			status = http.StatusOK
		}
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		obj := map[string]any{"code": code.rpcCode, "message": msg}
		if b == bindingJSONRPC {
			obj["data"] = details
		}
		return status, map[string]any{"jsonrpc": "2.0", "id": id, "error": obj}
	case bindingREST:
		grpc := code.grpc
		if status == 0 {
			status = code.status
		} else {
			grpc = grpcStatusOf(status)
		}
		return status, map[string]any{"error": map[string]any{
			"code": status, "status": grpc, "message": msg, "details": details,
		}}
	default:
		if status == 0 {
			status = code.status
		}
		return status, map[string]any{"error": msg}
	}
}

// writeA2AError answers err on w in binding b (a2aErrorBody).
func writeA2AError(w http.ResponseWriter, b binding, id json.RawMessage, status int, err error) {
	status, body := a2aErrorBody(b, id, status, err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// abortWithA2AError answers err in binding b through Gin (a2aErrorBody in
// Gin's JSON) and stops the request's handlers.
func abortWithA2AError(c *gin.Context, b binding, status int, err error) {
	c.AbortWithStatusJSON(a2aErrorBody(b, nil, status, err))
}

// errorMessage is the message an A2A error carries to the client.
func errorMessage(err error) string {
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) && a2aErr.Message != "" {
		return a2aErr.Message
	}
	return err.Error()
}

// taskNotFound is the one answer for a task the caller may not see: one
// that does not exist and one of another owner read the same, message
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
		case wire.ErrTypeUnsupportedOperation:
			return a2a.NewError(a2a.ErrUnsupportedOperation, appErr.Message())
		case wire.ErrTypeTaskNotCancelable:
			return a2a.NewError(a2a.ErrTaskNotCancelable, appErr.Message())
		case wire.ErrTypeInvalidParams:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case wire.ErrTypeTaskNotFound, wire.ErrTypeApprovalNotFound:
			return taskNotFound()
		case wire.ErrTypeApprovalRefused:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		case wire.ErrTypeContinuing:
			return retryableError(appErr.Message(), "CONTINUING_AS_NEW")
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
	var notReady *serviceerror.WorkflowNotReady
	if errors.As(err, &notReady) {
		// An update that reached a workflow task which then failed: nothing
		// of it was recorded, and the same request may be sent again.
		return retryableError("the task did not take the request (its workflow task failed): "+notReady.Error(), "WORKFLOW_TASK_FAILED")
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
	case wire.ErrTypeUnsupportedOperation, wire.ErrTypeTaskNotCancelable, wire.ErrTypeInvalidParams,
		wire.ErrTypeTaskNotFound, wire.ErrTypeDuplicateMessage, wire.ErrTypeContinuing, wire.ErrTypeApprovalRefused,
		wire.ErrTypeApprovalNotFound, wire.ErrTypeCredentialRequired:
		return true
	}
	return false
}
