package remote

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// ErrCredentialsHost: a request was about to carry credentials to a host
// they are not registered for; it was not sent.
var ErrCredentialsHost = errors.New("credentials are not sent to this host")

// HostMismatchError is a directory entry whose auth reference names
// credentials registered for other hosts (Credentials.Hosts): they are not
// sent to its agent. It matches ErrCredentialsHost.
type HostMismatchError struct {
	// Ref is the auth reference, Host the agent's host.
	Ref, Host string
	// Registered are the hosts the credentials are registered for.
	Registered []string
}

func (e *HostMismatchError) Error() string {
	return fmt.Sprintf("credentials %q are registered for %s, not for %s: none are sent to it",
		e.Ref, strings.Join(e.Registered, ", "), e.Host)
}

// Unwrap makes the error match ErrCredentialsHost.
func (e *HostMismatchError) Unwrap() error { return ErrCredentialsHost }

// Endpoint is one remote agent as a2aflow calls it: where it is, whether the
// operator vouched for its host, and what it is called with.
type Endpoint struct {
	// URL is the agent's base URL, where its card is.
	URL string
	// Trusted says the operator configured the agent (serve --peer,
	// a2aflow agents add): its host (host and port of URL) is reached
	// whatever the outbound policy says of its addresses. Every other host,
	// those its card names included, obeys the policy.
	Trusted bool
	// Credentials are sent to the agent; nil sends none.
	Credentials *Credentials
	// AuthRef names Credentials in errors.
	AuthRef string
}

// Clients are the HTTP clients of one Endpoint.
type Clients struct {
	// Card fetches the agent card (bounded as outbound.AgentCard).
	Card *http.Client
	// Calls makes the A2A calls (bounded as outbound.A2A).
	Calls *http.Client
}

// Clients returns e's HTTP clients, every request through out. e's
// credentials go only to the hosts they are registered for
// (Credentials.Hosts), or to e's own host when they name none; a request
// carrying them elsewhere (a card naming another host for its interface)
// fails with ErrCredentialsHost and is not sent. When e's host is not among
// the registered ones, Clients fails with a *HostMismatchError. Their OAuth2
// tokens are fetched through out too, the token endpoint's host trusted (the
// operator wrote it). Invalid credentials are their validation error.
func (e Endpoint) Clients(out *outbound.Client) (Clients, error) {
	hcs, err := e.clients(out, outbound.AgentCard, outbound.A2A)
	if err != nil {
		return Clients{}, err
	}
	return Clients{Card: hcs[0], Calls: hcs[1]}, nil
}

// Client returns one HTTP client of e for requests bounded as use (an MCP
// server's, say), with e's credentials as Clients gives them.
func (e Endpoint) Client(out *outbound.Client, use outbound.Use) (*http.Client, error) {
	hcs, err := e.clients(out, use)
	if err != nil {
		return nil, err
	}
	return hcs[0], nil
}

// clients returns e's HTTP clients for uses, in their order.
func (e Endpoint) clients(out *outbound.Client, uses ...outbound.Use) ([]*http.Client, error) {
	u, err := outbound.ParseURL(e.URL)
	if err != nil {
		return nil, err
	}
	cs := make([]*http.Client, len(uses))
	for i, use := range uses {
		if e.Trusted {
			use = use.Trusting(e.URL)
		}
		cs[i] = out.HTTPClient(use)
	}
	c := e.Credentials
	if c == nil {
		return cs, nil
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("credentials %q: %w", e.AuthRef, err)
	}
	hosts := c.registeredHosts()
	if hosts == nil {
		hosts = hostSet{{host: strings.ToLower(u.Hostname()), port: outboundPort(u)}}
	} else if !hosts.match(u) {
		return nil, &HostMismatchError{Ref: e.AuthRef, Host: u.Host, Registered: c.Hosts}
	}
	var tokens oauth2.TokenSource
	switch {
	case c.Login != nil:
		tokens = c.tokenSource(out.HTTPClient(outbound.OAuth2Token.Trusting(c.Login.TokenURL())))
	case c.OAuth2 != nil:
		tokens = c.tokenSource(out.HTTPClient(outbound.OAuth2Token.Trusting(c.OAuth2.TokenURL)))
	}
	for _, hc := range cs {
		hc.Transport = newCredentialTransport(c, hc.Transport, tokens, hosts)
	}
	return cs, nil
}

// hostPattern is one registered host: a host name or address, and a port
// ("" for any).
type hostPattern struct{ host, port string }

// hostSet is a list of registered hosts; nil means no restriction.
type hostSet []hostPattern

// match reports whether u's host is in the set.
func (s hostSet) match(u *url.URL) bool {
	host, port := strings.ToLower(u.Hostname()), outboundPort(u)
	for _, p := range s {
		if p.host == host && (p.port == "" || p.port == port) {
			return true
		}
	}
	return false
}

// parseHostPattern reads "host" or "host:port" ("[::1]:8443" for IPv6).
func parseHostPattern(s string) (hostPattern, error) {
	if s == "" || strings.ContainsAny(s, "/@?# \t") {
		return hostPattern{}, fmt.Errorf("%q is not a host or host:port", s)
	}
	if host, port, err := net.SplitHostPort(s); err == nil {
		if host == "" || port == "" {
			return hostPattern{}, fmt.Errorf("%q is not a host or host:port", s)
		}
		return hostPattern{host: strings.ToLower(host), port: port}, nil
	}
	if addr, err := netip.ParseAddr(s); err == nil && addr.Is6() { // a bare IPv6 address
		return hostPattern{host: strings.ToLower(s)}, nil
	}
	if strings.Contains(s, ":") || strings.ContainsAny(s, "[]") {
		return hostPattern{}, fmt.Errorf("%q is not a host or host:port", s)
	}
	return hostPattern{host: strings.ToLower(s)}, nil
}

// outboundPort is u's port, or its scheme's default.
func outboundPort(u *url.URL) string {
	_, port, _ := net.SplitHostPort(outbound.HostKey(u))
	return port
}
