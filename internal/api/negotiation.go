package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// legacyExtensionsHeader is the 0.3 name of the A2A-Extensions header.
const legacyExtensionsHeader = "X-" + a2a.SvcParamExtensions

// maxRequestedExtensions bounds how many URIs a request may list.
const maxRequestedExtensions = 32

// negotiated is the outcome of an A2A-Extensions header against an agent.
type negotiated struct {
	// activated are the URIs of the agent's extensions the caller asked
	// for, in the order the agent declares them.
	activated []string
	// missing are the agent's required extensions the caller did not ask for.
	missing []string
}

type negotiatedKey struct{}

// requestedExtensions returns the URIs r lists in its A2A-Extensions (or
// X-A2A-Extensions) headers: comma-separated values, in one header line or
// several, trimmed, without duplicates.
func requestedExtensions(h http.Header) []string {
	var out []string
	for _, name := range []string{a2a.SvcParamExtensions, legacyExtensionsHeader} {
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

// negotiate matches the extensions h requests against agent's.
func negotiate(h http.Header, agent *workflows.Agent) negotiated {
	requested := requestedExtensions(h)
	var n negotiated
	for _, ext := range agent.Extensions {
		switch {
		case slices.Contains(requested, ext.URI):
			n.activated = append(n.activated, ext.URI)
		case ext.Required:
			n.missing = append(n.missing, ext.URI)
		}
	}
	return n
}

// withNegotiated records the outcome of a negotiation in ctx for the
// service (gatedService, TaskService.send).
func withNegotiated(ctx context.Context, n negotiated) context.Context {
	return context.WithValue(ctx, negotiatedKey{}, n)
}

// activatedExtensions returns the extensions the request in ctx activated.
func activatedExtensions(ctx context.Context) []string {
	n, _ := ctx.Value(negotiatedKey{}).(negotiated)
	return n.activated
}

// checkRequiredExtensions refuses a request that did not activate one of
// the agent's required extensions.
func checkRequiredExtensions(ctx context.Context, agent string) error {
	n, _ := ctx.Value(negotiatedKey{}).(negotiated)
	if len(n.missing) == 0 {
		return nil
	}
	return a2a.NewError(a2a.ErrExtensionSupportRequired, fmt.Sprintf(
		"agent %s requires the extension %s: list it in the %s header", agent, strings.Join(n.missing, ", "), a2a.SvcParamExtensions))
}
