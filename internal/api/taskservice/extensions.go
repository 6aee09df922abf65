package taskservice

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

// LegacyExtensionsHeader is the 0.3 name of the A2A-Extensions header.
const LegacyExtensionsHeader = "X-" + a2a.SvcParamExtensions

// maxRequestedExtensions bounds how many URIs a request may list.
const maxRequestedExtensions = 32

// Negotiated is the outcome of an A2A-Extensions header against an agent.
type Negotiated struct {
	// activated are the URIs of the agent's extensions the caller asked
	// for, in the order the agent declares them.
	Activated []string
	// missing are the agent's required extensions the caller did not ask for.
	Missing []string
}

type negotiatedKey struct{}

// requestedExtensions returns the URIs r lists in its A2A-Extensions (or
// X-A2A-Extensions) headers: comma-separated values, in one header line or
// several, trimmed, without duplicates.
func requestedExtensions(h http.Header) []string {
	var out []string
	for _, name := range []string{a2a.SvcParamExtensions, LegacyExtensionsHeader} {
		for _, v := range h.Values(name) {
			for uri := range strings.SplitSeq(v, ",") {
				uri = strings.TrimSpace(uri)
				if uri != "" && !slices.Contains(out, uri) && len(out) < maxRequestedExtensions {
					out = append(out, uri)
				}
			}
		}
	}
	return out
}

// Negotiate matches the extensions h requests against agent's.
func Negotiate(h http.Header, agent *workflows.Agent) Negotiated {
	requested := requestedExtensions(h)
	var n Negotiated
	for _, ext := range agent.Extensions {
		switch {
		case slices.Contains(requested, ext.URI):
			n.Activated = append(n.Activated, ext.URI)
		case ext.Required:
			n.Missing = append(n.Missing, ext.URI)
		}
	}
	// a2aflow's own, which every card declares after the agent's (the
	// fork extension needs no activation).
	if slices.Contains(requested, LiveExtensionURI) {
		n.Activated = append(n.Activated, LiveExtensionURI)
	}
	return n
}

// WithNegotiated records the outcome of a negotiation in ctx for the
// service (gatedService, TaskService.send).
func WithNegotiated(ctx context.Context, n Negotiated) context.Context {
	return context.WithValue(ctx, negotiatedKey{}, n)
}

// activatedExtensions returns the extensions the request in ctx activated.
func activatedExtensions(ctx context.Context) []string {
	n, _ := ctx.Value(negotiatedKey{}).(Negotiated)
	return n.Activated
}

// CheckRequiredExtensions refuses a request that did not activate one of
// the agent's required extensions.
func CheckRequiredExtensions(ctx context.Context, agent string) error {
	n, _ := ctx.Value(negotiatedKey{}).(Negotiated)
	if len(n.Missing) == 0 {
		return nil
	}
	return a2a.NewError(a2a.ErrExtensionSupportRequired, fmt.Sprintf(
		"agent %s requires the extension %s: list it in the %s header", agent, strings.Join(n.Missing, ", "), a2a.SvcParamExtensions))
}
