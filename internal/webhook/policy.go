package webhook

import (
	"errors"
	"net/url"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// Policy decides which addresses webhooks may reach: the outbound address
// policy (outbound.Policy) built from --push-allow-hosts. Public unicast
// addresses are always allowed; loopback, private, shared (CGNAT),
// link-local, unspecified, multicast, reserved and cloud metadata addresses
// are refused unless the allow-list permits them. A nil *Policy allows no
// such address.
type Policy = outbound.Policy

// Errors of the address policy, the outbound package's own: the API
// answers each with InvalidParams; the delivery activity does not retry them.
var (
	// ErrInvalidURL: the webhook URL is not an absolute http or https URL.
	ErrInvalidURL = outbound.ErrInvalidURL
	// ErrForbiddenAddress: the webhook resolves to an address the policy refuses.
	ErrForbiddenAddress = outbound.ErrForbiddenAddress
	// ErrUnresolvableHost: the webhook's host name has no address.
	ErrUnresolvableHost = outbound.ErrUnresolvableHost
)

// MaxURLLength is the longest webhook URL accepted.
const MaxURLLength = outbound.MaxURLLength

// ParsePolicy returns the policy allowing, besides public addresses, each
// entry of allow: "loopback", "private" (RFC 1918, ULA and CGNAT ranges),
// "link-local", a CIDR such as "10.1.0.0/16", a single IP address, or "all"
// (no guard at all: only for trusted networks). See outbound.ParsePolicy.
func ParsePolicy(allow []string) (*Policy, error) { return outbound.ParsePolicy(allow) }

// ParseURL checks that raw is an absolute http or https URL without user
// info, and returns it parsed. Its errors match ErrInvalidURL and read
// "invalid webhook URL: ...".
func ParseURL(raw string) (*url.URL, error) {
	u, err := outbound.ParseURL(raw)
	var urlErr *outbound.URLError
	if errors.As(err, &urlErr) {
		return nil, &invalidURLError{urlErr.Reason}
	}
	return u, err
}

// invalidURLError is an outbound.URLError worded for a webhook.
type invalidURLError struct{ reason string }

func (e *invalidURLError) Error() string { return "invalid webhook URL: " + e.reason }
func (e *invalidURLError) Unwrap() error { return ErrInvalidURL }

// Redact returns raw without its query, fragment and user info, which may
// carry secrets, for error messages and logs.
func Redact(raw string) string { return outbound.Redact(raw) }
