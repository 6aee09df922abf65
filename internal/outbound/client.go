package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Errors of the client besides the policy's. Retrying does not change them.
var (
	// ErrRedirectRefused: a redirect to another host, from https to http, or
	// past MaxRedirects, was not followed.
	ErrRedirectRefused = errors.New("redirect refused")
	// ErrBodyTooLarge: a response body passed its use's MaxBody; reading it
	// fails past the limit.
	ErrBodyTooLarge = errors.New("response body too large")
	// ErrHeaderTimeout: the server sent no response headers within its use's
	// HeaderTimeout.
	ErrHeaderTimeout = errors.New("no response headers in time")
)

// MaxRedirects is how many redirects a request follows, each to the same
// host and checked again at dial time.
const MaxRedirects = 3

// Refused reports whether err is a request the outbound policy refused: an
// address it forbids, a host that does not resolve, an invalid URL, a
// redirect it would not follow or a secret it would not send in the clear
// (ErrSecretRefused). Such a request never reached its server
// (or, for a redirect, never reached the redirect's target).
func Refused(err error) bool {
	return errors.Is(err, ErrForbiddenAddress) || errors.Is(err, ErrRedirectRefused) ||
		errors.Is(err, ErrInvalidURL) || errors.Is(err, ErrSecretRefused)
}

// Options configure a Client. The zero value allows public addresses only,
// with the default timeouts.
type Options struct {
	// Policy says which non-public addresses requests may reach; nil allows
	// public addresses only.
	Policy *Policy
	// DialTimeout bounds connecting to one address, after DNS; default 10 s.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake; default 10 s.
	TLSHandshakeTimeout time.Duration
}

// Client makes a2aflow's outbound HTTP requests: agent cards, delegation to
// remote agents, OAuth2 token fetches, push and approval webhooks. Every
// connection's address is checked against the policy at dial time, after
// DNS resolution, so neither a DNS answer that changes (rebinding) nor a
// redirect reaches a forbidden address; no proxy is used (through one, the
// dialed address would be the proxy's). Hosts that a Use trusts (agents the
// operator configured) are dialed without the address check, and only
// requests to exactly those hosts.
//
// A Client is safe for concurrent use and keeps its connections: make one
// per policy and share it. HTTPClient gives the *http.Client of one use.
type Client struct {
	policy  *Policy
	guarded *http.Transport // dials through the policy's Control
	trusted *http.Transport // dials hosts the operator configured, unchecked

	// The transports above with a client span each request and its W3C
	// traceparent (tracing.go).
	guardedTraced, trustedTraced http.RoundTripper
}

// New returns a client dialing with opts.
func New(opts Options) *Client {
	dial := opts.DialTimeout
	if dial <= 0 {
		dial = 10 * time.Second
	}
	tlsTimeout := opts.TLSHandshakeTimeout
	if tlsTimeout <= 0 {
		tlsTimeout = 10 * time.Second
	}
	transport := func(control func(string, string, syscall.RawConn) error) *http.Transport {
		dialer := &net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second, Control: control}
		return &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   tlsTimeout,
			ExpectContinueTimeout: time.Second,
		}
	}
	c := &Client{
		policy:  opts.Policy,
		guarded: transport(opts.Policy.Control),
		trusted: transport(nil),
	}
	c.guardedTraced, c.trustedTraced = traced(c.guarded), traced(c.trusted)
	return c
}

// Policy returns the client's address policy (nil: public addresses only).
func (c *Client) Policy() *Policy { return c.policy }

// Use is one kind of outbound request and its bounds. The predefined uses
// (AgentCard, A2A, OAuth2Token, Webhook) are the ones a2aflow makes.
type Use struct {
	// Name says what the requests are for, in errors: "agent card".
	Name string
	// MaxBody bounds each response body, in bytes: a body announced
	// larger is refused before it is read, and reading past the limit fails
	// with ErrBodyTooLarge. 0 means no bound.
	MaxBody int64
	// HeaderTimeout bounds the wait for the response headers once the
	// request is sent; 0 means no bound of its own.
	HeaderTimeout time.Duration
	// Timeout bounds each request from dialing to the body's last byte,
	// redirects included; 0 leaves it to the request's context (streams).
	Timeout time.Duration
	// TrustedHosts are the hosts ("host:port", the port explicit) that the
	// operator configured: the address policy does not apply to requests to
	// them. Use Trusting to add URLs' hosts.
	TrustedHosts []string
}

// The uses of a2aflow's outbound requests.
var (
	// AgentCard fetches an agent card: 1 MiB, 20 s.
	AgentCard = Use{Name: "agent card", MaxBody: 1 << 20, HeaderTimeout: 20 * time.Second, Timeout: 20 * time.Second}
	// A2A calls a remote agent (send, get, cancel, subscribe): 64 MiB per
	// response (a task with 32 MiB of artifacts, in JSON); headers within 2
	// minutes; no overall bound, since a follow streams for up to an hour:
	// the activity's context bounds each call.
	A2A = Use{Name: "A2A", MaxBody: 64 << 20, HeaderTimeout: 2 * time.Minute}
	// OAuth2Token fetches an OAuth2 access token: 64 KiB, 30 s.
	OAuth2Token = Use{Name: "OAuth2 token", MaxBody: 64 << 10, HeaderTimeout: 30 * time.Second, Timeout: 30 * time.Second}
	// MCP calls an MCP server over streamable HTTP: 16 MiB per response,
	// headers within 2 minutes; no overall bound, since a response may
	// stream: the activity's context bounds each call.
	MCP = Use{Name: "MCP server", MaxBody: 16 << 20, HeaderTimeout: 2 * time.Minute}
	// Webhook delivers a push notification or an approval notice: the
	// answer is read up to 64 KiB (and dropped), 10 s.
	Webhook = Use{Name: "webhook", MaxBody: 64 << 10, HeaderTimeout: 10 * time.Second, Timeout: 10 * time.Second}
)

// Trusting returns u trusting, besides its own, the hosts of rawURLs: the
// operator configured them, so the address policy does not apply to them.
// URLs that do not parse are ignored.
func (u Use) Trusting(rawURLs ...string) Use {
	hosts := append([]string(nil), u.TrustedHosts...)
	for _, raw := range rawURLs {
		if p, err := url.Parse(raw); err == nil && p.Host != "" {
			hosts = append(hosts, HostKey(p))
		}
	}
	u.TrustedHosts = hosts
	return u
}

// HostKey is u's host as "host:port", lower case, with the scheme's default
// port when u names none: the key of TrustedHosts and of "the same host".
func HostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// HTTPClient returns the HTTP client of one use: its requests dial through
// the policy (but to u's trusted hosts), follow at most MaxRedirects
// redirects and only to the same host, and are bounded by u. The clients
// share c's connections.
func (c *Client) HTTPClient(u Use) *http.Client {
	trusted := make(map[string]bool, len(u.TrustedHosts))
	for _, h := range u.TrustedHosts {
		trusted[strings.ToLower(h)] = true
	}
	return &http.Client{
		Transport:     &useTransport{client: c, use: u, trusted: trusted},
		CheckRedirect: checkRedirect,
		Timeout:       u.Timeout,
	}
}

// checkRedirect follows a redirect only to the same host and port (or from
// http to https on the same host name, default ports), never from https to
// http, and at most MaxRedirects times. The dial of the new location is
// checked by the policy again.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirectRefused, MaxRedirects)
	}
	first := via[0].URL
	switch {
	case first.Scheme == "https" && req.URL.Scheme != "https":
		return fmt.Errorf("%w: from https to http", ErrRedirectRefused)
	case HostKey(req.URL) == HostKey(first):
		return nil
	case first.Scheme == "http" && req.URL.Scheme == "https" && first.Port() == "" && req.URL.Port() == "" &&
		strings.EqualFold(first.Hostname(), req.URL.Hostname()):
		return nil
	}
	return fmt.Errorf("%w: to another host (%s)", ErrRedirectRefused, req.URL.Hostname())
}

// useTransport sends a use's requests through the guarded or the trusted
// transport and bounds their answers.
type useTransport struct {
	client  *Client
	use     Use
	trusted map[string]bool
}

func (t *useTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.checkSecret(req); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	base := t.client.guardedTraced
	if t.trusted[HostKey(req.URL)] {
		base = t.client.trustedTraced
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	req = req.WithContext(ctx)
	var timer *time.Timer
	if d := t.use.HeaderTimeout; d > 0 {
		timer = time.AfterFunc(d, func() {
			cancel(fmt.Errorf("%w: the %s request had no answer within %s", ErrHeaderTimeout, t.use.Name, d))
		})
	}
	resp, err := base.RoundTrip(req)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrHeaderTimeout) {
			err = cause
		}
		cancel(nil)
		return nil, err
	}
	if max := t.use.MaxBody; max > 0 && resp.ContentLength > max {
		_ = resp.Body.Close()
		cancel(nil)
		return nil, fmt.Errorf("%w: the %s response announces %d bytes, more than the limit of %s", ErrBodyTooLarge, t.use.Name, resp.ContentLength, formatBytes(max))
	}
	resp.Body = &boundedBody{body: resp.Body, left: t.use.MaxBody, use: t.use, cancel: cancel}
	return resp, nil
}

// boundedBody fails a read past its use's MaxBody, and releases the
// request's context when closed.
type boundedBody struct {
	body   io.ReadCloser
	left   int64 // bytes still allowed; unbounded when the use has no MaxBody
	use    Use
	cancel context.CancelCauseFunc
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.use.MaxBody <= 0 {
		return b.body.Read(p)
	}
	if b.left <= 0 {
		// At the limit: the body may end here, or go on.
		var probe [1]byte
		n, err := b.body.Read(probe[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: the %s response is larger than the limit of %s", ErrBodyTooLarge, b.use.Name, formatBytes(b.use.MaxBody))
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error {
	err := b.body.Close()
	b.cancel(nil)
	return err
}

// formatBytes writes n as "64 KiB" or "1 MiB" when it is a round number of
// them, else in bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
