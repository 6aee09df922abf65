package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"strconv"
	"syscall"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// errorMeanings names each A2A error the way a user reads it, in the order
// they are checked, and says whether trying again may change the answer.
var errorMeanings = []struct {
	err       error
	meaning   string
	retryable bool
}{
	{a2a.ErrTaskNotFound, "task not found", false},
	{a2a.ErrTaskNotCancelable, "task not cancelable", false},
	{a2a.ErrUnsupportedOperation, "unsupported operation", false},
	{a2a.ErrPushNotificationNotSupported, "push notifications not supported", false},
	{a2a.ErrUnsupportedContentType, "unsupported content type", false},
	{a2a.ErrInvalidAgentResponse, "invalid agent response", false},
	{a2a.ErrExtendedCardNotConfigured, "extended card not configured", false},
	{a2a.ErrExtensionSupportRequired, "extension support required", false},
	{a2a.ErrVersionNotSupported, "protocol version not supported", false},
	{a2a.ErrUnauthenticated, "authentication required", false},
	{a2a.ErrUnauthorized, "permission denied", false},
	{a2a.ErrInvalidParams, "invalid params", false},
	{a2a.ErrInvalidRequest, "invalid request", false},
	{a2a.ErrMethodNotFound, "method not supported by the agent", false},
	{a2a.ErrParseError, "parse error", false},
	// An internal error may be the agent starting up or a dependency
	// briefly down: worth another try.
	{a2a.ErrInternalError, "agent internal error", true},
	{a2a.ErrServerError, "agent server error", true},
}

// Meaning returns what an A2A error means to a user ("task not found",
// "authentication required"...), or "" when err is not an A2A error.
func Meaning(err error) string {
	for _, m := range errorMeanings {
		if errors.Is(err, m.err) {
			return m.meaning
		}
	}
	if code := httpStatus(err); code == 401 {
		return "authentication required"
	} else if code == 403 {
		return "permission denied"
	}
	return ""
}

// Retryable reports whether calling again may succeed where err failed: a
// network error, a timeout, an HTTP 408, 429 or 5xx, or an A2A internal
// error. An A2A error about the request itself (task not found, invalid
// params, unauthenticated, HTTP 4xx...) is not.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, ErrLoginRequired) {
		return false
	}
	for _, m := range errorMeanings {
		if errors.Is(err, m.err) {
			return m.retryable
		}
	}
	if code := httpStatus(err); code >= 400 && code < 500 {
		return code == 408 || code == 429
	}
	return true
}

// unexpectedStatus matches how a2a-go's JSON-RPC transport reports a non-200
// HTTP answer ("unexpected HTTP status: 401 Unauthorized"); it keeps no
// status code of its own to test.
var unexpectedStatus = regexp.MustCompile(`unexpected HTTP status: (\d{3})`)

func httpStatus(err error) int {
	m := unexpectedStatus.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	code, _ := strconv.Atoi(m[1])
	return code
}

// Words of Reason: why a call to a remote agent failed, for whom its answers
// and the network are not to be shown.
const (
	ReasonRefused       = "refused by the outbound policy"
	ReasonSecretRefused = "a credential is sent to it only over https or when the operator configured the agent"
	ReasonTooLarge      = "its answer is larger than a2aflow accepts"
	ReasonCredentials   = "its credentials are registered for another host, so none are sent"
	ReasonUnreachable   = "unreachable"
	ReasonNotAnA2AAgent = "not an A2A agent"
)

// Reason says why a call to a remote agent failed in words that are safe to
// give to a model or to a tenant: ReasonSecretRefused (a user's credential
// was not sent over plain http to an agent the operator did not configure),
// ReasonRefused (the outbound policy refused the address or a redirect, so
// nothing reached the server), ReasonTooLarge,
// ReasonCredentials, an OAuth login to make again (LoginRequiredError: its
// name and the command), the A2A meaning of an A2A error ("task not found",
// "authentication required"...), ReasonUnreachable (network errors,
// timeouts, 408, 429 and 5xx), or ReasonNotAnA2AAgent (any other answer).
// Never a status code, a body, an address or a message of the server: the
// full error belongs in the worker's log.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, outbound.ErrSecretRefused):
		return ReasonSecretRefused
	case outbound.Refused(err):
		return ReasonRefused
	case errors.Is(err, outbound.ErrBodyTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrCredentialsHost):
		return ReasonCredentials
	case errors.Is(err, ErrInvalidCard):
		return ReasonNotAnA2AAgent
	}
	var login *LoginRequiredError
	if errors.As(err, &login) {
		return login.Error() // names the login and what to run, no token
	}
	if m := Meaning(err); m != "" {
		return m
	}
	code := httpStatus(err)
	var notOK *agentcard.ErrStatusNotOK
	if errors.As(err, &notOK) {
		code = notOK.StatusCode
	}
	switch {
	case code == 401:
		return "authentication required"
	case code == 403:
		return "permission denied"
	case code == 408 || code == 429 || code >= 500:
		return ReasonUnreachable
	case code != 0:
		return ReasonNotAnA2AAgent
	}
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &netErr) || errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, outbound.ErrHeaderTimeout) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return ReasonUnreachable
	}
	return ReasonNotAnA2AAgent
}
