package apierror

import (
	"errors"
	"net/http"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// How each error reads on each binding: one table (errorCodes), keyed by
// a2a's sentinels and a2aflow's own, which every answer goes through
// (answer.go, grpc.go).

// a2aflow's own refusals. a2a has no conflict, no rate limit and no
// misdirected request; their JSON-RPC codes follow -31401's rule
// (unauthenticated): -31000 minus the HTTP status.
var (
	// ErrDecisionRefused is the error of an approval decision the approval
	// no longer takes: it is settled, its task ended, or the approver
	// decided otherwise already.
	ErrDecisionRefused = errors.New("decision refused")
	// ErrForkRefused: the agent changed since the original ran, or a retry
	// of a task that did not fail.
	ErrForkRefused = errors.New("fork refused")
	// ErrTooManyRequests is a request over the rate limit or a stream over
	// the stream cap (CodeTooManyRequests).
	ErrTooManyRequests = errors.New("too many requests")
	// ErrMisdirectedRequest is a request to a host name not in
	// Limits.AllowedHosts (CodeMisdirectedRequest).
	ErrMisdirectedRequest = errors.New("misdirected request")
	// ErrTaskGenerationMismatch is A2A 1.1's TaskGenerationMismatchError
	// (dev-1.1 branch): a SendMessage's ifGenerationMatch is not the task's
	// generation. a2a-go (v2.4.0, A2A 1.0) has no sentinel for it; the 1.1
	// layer of the bindings writes its code (a2abinding/v11.go).
	ErrTaskGenerationMismatch = errors.New("task generation mismatch")
)

// GenerationMismatchReason is the ErrorInfo reason of
// ErrTaskGenerationMismatch, in A2A's domain (the dev-1.1 specification's
// §11.6 example).
const GenerationMismatchReason = "TASK_GENERATION_MISMATCH"

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

// Code is how one error reads on each binding.
type Code struct {
	Sentinel error
	RPCCode  int    // JSON-RPC error code
	Status   int    // HTTP status over HTTP+JSON and on the approvals API
	GRPC     string // google.rpc code name over HTTP+JSON
	// fixesA2AGo marks the errors whose HTTP status a2a-go's HTTP+JSON
	// transport writes otherwise (ServerError's 500; internal/rest/rest.go
	// ToRESTError in a2a-go v2.4.0): restResponseGuard corrects its
	// answers (correctStatus, a2abinding/a2agofixes.go, which names their canaries).
	FixesA2AGo bool
	// reason and domain name a2aflow's own errors in their ErrorInfo; an
	// A2A error's are a2a.ErrorReason and a2a.ProtocolDomain.
	Reason, Domain string
}

// errorCodes are the codes of every error the server answers, keyed by
// a2a's sentinels, the first a given error wraps winning (an error that
// wraps none reads as ErrInternalError). They are a2a-go's own (its
// transports' tables, the order of its HTTP+JSON one), but for the statuses
// the A2A 1.0 specification gives otherwise (fixesA2AGo) and SERVER_ERROR —
// which FromTemporal uses only for Temporal being unavailable or too slow —
// answering 503, so that clients retry. a2aflow's own codes follow
// -31401's rule: -31000 minus the HTTP status.
//
// The gRPC column is A2A 1.0.1's §5.4 table (that of the specification's
// main and dev-1.1 branches too): FAILED_PRECONDITION for
// TaskNotCancelable, PushNotificationNotSupported, UnsupportedOperation,
// ExtendedAgentCardNotConfigured, ExtensionSupportRequired and
// VersionNotSupported. A2A 1.0.0's table said UNIMPLEMENTED for three of
// them; 1.0.1 (a2aproject/A2A#1627) made them FAILED_PRECONDITION, as
// a2a-go's transports have them, and a2a-go's gRPC client types an error
// only when both its code and its ErrorInfo reason are the ones its table
// pairs (internal/grpcutil FromGRPCError): UNIMPLEMENTED with
// UNSUPPORTED_OPERATION reads as an internal error. TestGRPCErrorsTyped
// (internal/api) holds both. The HTTP column is 1.0.1's too: 400 for
// TaskNotCancelable and ContentTypeNotSupported (1.0.0: 409 and 415), 500
// for InvalidAgentResponse (1.0.0: 502); "All A2A-specific errors ... MUST
// be mapped" as §5.4's table has them. A request body of another media
// type than JSON is no A2A error (ContentTypeNotSupported is about a
// message's parts, §3.3.2): it stays HTTP's own 415 with reason
// INVALID_REQUEST. See docs/conformance.md.
var errorCodes = []Code{
	{Sentinel: a2a.ErrParseError, RPCCode: -32700, Status: http.StatusBadRequest, GRPC: "INVALID_ARGUMENT"},
	{Sentinel: a2a.ErrInvalidRequest, RPCCode: -32600, Status: http.StatusBadRequest, GRPC: "INVALID_ARGUMENT"},
	{Sentinel: a2a.ErrMethodNotFound, RPCCode: -32601, Status: http.StatusNotImplemented, GRPC: "UNIMPLEMENTED"},
	{Sentinel: a2a.ErrInvalidParams, RPCCode: -32602, Status: http.StatusBadRequest, GRPC: "INVALID_ARGUMENT"},
	{Sentinel: a2a.ErrInternalError, RPCCode: -32603, Status: http.StatusInternalServerError, GRPC: "INTERNAL"},
	{Sentinel: a2a.ErrServerError, RPCCode: -32000, Status: http.StatusServiceUnavailable, GRPC: "UNAVAILABLE", FixesA2AGo: true},
	{Sentinel: a2a.ErrTaskNotFound, RPCCode: -32001, Status: http.StatusNotFound, GRPC: "NOT_FOUND"},
	{Sentinel: a2a.ErrTaskNotCancelable, RPCCode: -32002, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrPushNotificationNotSupported, RPCCode: -32003, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrUnsupportedOperation, RPCCode: -32004, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrUnsupportedContentType, RPCCode: -32005, Status: http.StatusBadRequest, GRPC: "INVALID_ARGUMENT"},
	{Sentinel: a2a.ErrInvalidAgentResponse, RPCCode: -32006, Status: http.StatusInternalServerError, GRPC: "INTERNAL"},
	{Sentinel: a2a.ErrExtendedCardNotConfigured, RPCCode: -32007, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrExtensionSupportRequired, RPCCode: -32008, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrVersionNotSupported, RPCCode: -32009, Status: http.StatusBadRequest, GRPC: "FAILED_PRECONDITION"},
	{Sentinel: a2a.ErrUnauthenticated, RPCCode: -31401, Status: http.StatusUnauthorized, GRPC: "UNAUTHENTICATED"},
	{Sentinel: a2a.ErrUnauthorized, RPCCode: -31403, Status: http.StatusForbidden, GRPC: "PERMISSION_DENIED"},
	{Sentinel: ErrDecisionRefused, RPCCode: -31409, Status: http.StatusConflict, GRPC: "FAILED_PRECONDITION",
		Reason: "DECISION_REFUSED", Domain: refusalDomain},
	{Sentinel: ErrForkRefused, RPCCode: -31409, Status: http.StatusConflict, GRPC: "FAILED_PRECONDITION",
		Reason: "FORK_REFUSED", Domain: refusalDomain},
	{Sentinel: ErrTooManyRequests, RPCCode: CodeTooManyRequests, Status: http.StatusTooManyRequests, GRPC: "RESOURCE_EXHAUSTED",
		Reason: "RATE_LIMITED", Domain: refusalDomain},
	{Sentinel: ErrMisdirectedRequest, RPCCode: CodeMisdirectedRequest, Status: http.StatusMisdirectedRequest, GRPC: "FAILED_PRECONDITION",
		Reason: "MISDIRECTED_REQUEST", Domain: refusalDomain},
	// A2A 1.1 (dev-1.1 §5.4): -32010, ABORTED, 409 Conflict. The pull
	// request that added it (a2aproject/A2A#1810) says 412 in its
	// description; the specification's table, its §11.6 example and the
	// proto's comment say 409, which this follows (docs/conformance.md).
	// Last: a bare 409 (GRPCCodeName) stays FAILED_PRECONDITION, that of
	// a2aflow's own conflicts, now that TaskNotCancelable answers 400.
	{Sentinel: ErrTaskGenerationMismatch, RPCCode: -32010, Status: http.StatusConflict, GRPC: "ABORTED",
		Reason: GenerationMismatchReason, Domain: a2a.ProtocolDomain},
}

// Codes are the codes of every error the server answers, in the order
// CodeOf tries them.
func Codes() []Code { return slices.Clone(errorCodes) }

// CodeOf returns the code of err: that of the first sentinel it wraps,
// else ErrInternalError's.
func CodeOf(err error) Code {
	for _, c := range errorCodes {
		if errors.Is(err, c.Sentinel) {
			return c
		}
	}
	return CodeOf(a2a.ErrInternalError)
}

// Info is the google.rpc.ErrorInfo naming the error.
func (c Code) Info() *errordetails.Typed {
	if c.Reason != "" {
		return errordetails.NewErrorInfo(c.Reason, c.Domain, nil)
	}
	return errordetails.NewErrorInfo(a2a.ErrorReason(c.Sentinel), a2a.ProtocolDomain, nil)
}

// HTTPStatus is the HTTP status of err over HTTP+JSON and on the
// approvals API.
func HTTPStatus(err error) int { return CodeOf(err).Status }

// GRPCCodeName names the google.rpc code of an HTTP status: that of the
// first error answering with it, UNIMPLEMENTED for 405 (a method the path
// does not take), and otherwise INTERNAL for 5xx, INVALID_ARGUMENT for the
// rest.
func GRPCCodeName(status int) string {
	for _, c := range errorCodes {
		if c.Status == status {
			return c.GRPC
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

// CodeOfInfo returns the code of the error a google.rpc.ErrorInfo
// names: an A2A error by its reason in A2A's domain, one of a2aflow's by
// its reason and domain.
func CodeOfInfo(reason, domain string) (Code, bool) {
	for _, c := range errorCodes {
		if c.Reason == "" && domain == a2a.ProtocolDomain && a2a.ErrorReason(c.Sentinel) == reason ||
			c.Reason != "" && c.Reason == reason && c.Domain == domain {
			return c, true
		}
	}
	return Code{}, false
}
