package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// How each error reads on each binding: one table (errorCodes), keyed by
// a2a's sentinels and a2aflow's own, which every answer goes through
// (answer.go, grpcerrors.go).

// a2aflow's own refusals. a2a has no conflict, no rate limit and no
// misdirected request; their JSON-RPC codes follow -31401's rule
// (unauthenticated): -31000 minus the HTTP status.
var (
	// errDecisionRefused is the error of an approval decision the approval
	// no longer takes: it is settled, its task ended, or the approver
	// decided otherwise already.
	errDecisionRefused = errors.New("decision refused")
	// errForkRefused: the agent changed since the original ran, or a retry
	// of a task that did not fail.
	errForkRefused = errors.New("fork refused")
	// errTooManyRequests is a request over the rate limit or a stream over
	// the stream cap (CodeTooManyRequests).
	errTooManyRequests = errors.New("too many requests")
	// errMisdirectedRequest is a request to a host name not in
	// Limits.AllowedHosts (CodeMisdirectedRequest).
	errMisdirectedRequest = errors.New("misdirected request")
)

// JSON-RPC codes of a2aflow's own refusals.
const (
	// CodeTooManyRequests answers a request over the rate limit or a stream
	// over the stream cap (HTTP 429).
	CodeTooManyRequests = -31429
	// CodeMisdirectedRequest answers a request to a host name not in
	// Limits.AllowedHosts (HTTP 421).
	CodeMisdirectedRequest = -31421
)

// refusalDomain is the ErrorInfo domain of a2aflow's own refusals.
const refusalDomain = "a2aflow"

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

// allCodes are the codes of every error the server answers, in the order
// errorCodeOf tries them.
func allCodes() []errorCode { return slices.Clone(errorCodes) }

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

// errorCodeOfInfo returns the code of the error a google.rpc.ErrorInfo
// names: an A2A error by its reason in A2A's domain, one of a2aflow's by
// its reason and domain.
func errorCodeOfInfo(reason, domain string) (errorCode, bool) {
	for _, c := range errorCodes {
		if c.reason == "" && domain == a2a.ProtocolDomain && a2a.ErrorReason(c.sentinel) == reason ||
			c.reason != "" && c.reason == reason && c.domain == domain {
			return c, true
		}
	}
	return errorCode{}, false
}
