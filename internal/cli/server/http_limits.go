package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// httpConfig holds the HTTP hardening flags of the A2A API (serve, api):
// the server's timeouts and the limits of guard.Limits.
type httpConfig struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxStreams        int
	RateLimit         float64
	RateBurst         int
	AllowedHosts      []string
}

// Defaults of the HTTP hardening flags.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	// defaultReadTimeout bounds receiving a request; net/http lifts it once
	// the body is read, so it never cuts a slow answer.
	defaultReadTimeout = time.Minute
	// defaultWriteTimeout bounds answering a request, streams excepted: well
	// above the default --wait-timeout of a blocking SendMessage.
	defaultWriteTimeout = 2 * time.Minute
	defaultIdleTimeout  = 2 * time.Minute
)

func (c *httpConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.Duration(&c.ReadHeaderTimeout, "http-read-header-timeout", "A2AFLOW_HTTP_READ_HEADER_TIMEOUT", defaultReadHeaderTimeout,
		"how long a client may take to send a request's headers; 0: no limit")
	b.Duration(&c.ReadTimeout, "http-read-timeout", "A2AFLOW_HTTP_READ_TIMEOUT", defaultReadTimeout,
		"how long a client may take to send a whole request, body included; 0: no limit")
	b.Duration(&c.WriteTimeout, "http-write-timeout", "A2AFLOW_HTTP_WRITE_TIMEOUT", defaultWriteTimeout,
		"how long answering a request may take, streams excepted; must be longer than --wait-timeout; 0: no limit")
	b.Duration(&c.IdleTimeout, "http-idle-timeout", "A2AFLOW_HTTP_IDLE_TIMEOUT", defaultIdleTimeout,
		"how long an idle keep-alive connection stays open; 0: the read timeout")
	b.Int(&c.MaxStreams, "max-streams-per-principal", "A2AFLOW_MAX_STREAMS_PER_PRINCIPAL", guard.DefaultMaxStreamsPerPrincipal,
		"streams (SendStreamingMessage, SubscribeToTask) one principal, or one client IP without authentication, may have open at once; more get 429; 0: no cap")
	b.Float64(&c.RateLimit, "rate-limit", "A2AFLOW_RATE_LIMIT", 0,
		"requests per second one principal, or one client IP without authentication, may send over time (a token bucket); more get 429; 0: no limit")
	b.Int(&c.RateBurst, "rate-burst", "A2AFLOW_RATE_BURST", 0,
		"requests a principal may send at once under --rate-limit; 0: twice the rate")
	b.StringSlice(&c.AllowedHosts, "allowed-hosts", "A2AFLOW_ALLOWED_HOSTS", nil,
		"host names the API answers to in the Host header, name or name:port, repeatable; others get 421 (DNS rebinding); IP addresses always pass; empty: any")
}

// check reports flags that cannot work: negative values, a host that is
// not a host, or a write timeout that would cut a blocking SendMessage
// waiting its --wait-timeout.
func (c *httpConfig) check(waitTimeout time.Duration) error {
	var errs []error
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--http-read-header-timeout", c.ReadHeaderTimeout}, {"--http-read-timeout", c.ReadTimeout},
		{"--http-write-timeout", c.WriteTimeout}, {"--http-idle-timeout", c.IdleTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %s: must not be negative (0: no limit)", d.flag, d.v))
		}
	}
	if c.WriteTimeout > 0 && c.WriteTimeout <= waitTimeout {
		errs = append(errs, fmt.Errorf("--http-write-timeout %s must be longer than --wait-timeout %s: a blocking SendMessage answers only after waiting that long", c.WriteTimeout, waitTimeout))
	}
	if c.MaxStreams < 0 {
		errs = append(errs, fmt.Errorf("--max-streams-per-principal %d: must not be negative (0: no cap)", c.MaxStreams))
	}
	if c.RateLimit < 0 || c.RateBurst < 0 {
		errs = append(errs, fmt.Errorf("--rate-limit %g, --rate-burst %d: must not be negative (0: no limit, default burst)", c.RateLimit, c.RateBurst))
	}
	for _, h := range c.AllowedHosts {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "/?#@ ") {
			errs = append(errs, fmt.Errorf("--allowed-hosts %q: want a host name or name:port, not a URL", h))
		}
	}
	return errors.Join(errs...)
}

// apply gives srv the timeouts, after checking all flags.
func (c *httpConfig) apply(srv *http.Server, waitTimeout time.Duration) error {
	if err := c.check(waitTimeout); err != nil {
		return err
	}
	srv.ReadHeaderTimeout = c.ReadHeaderTimeout
	srv.ReadTimeout = c.ReadTimeout
	srv.WriteTimeout = c.WriteTimeout
	srv.IdleTimeout = c.IdleTimeout
	return nil
}

// limits is the API's guard.Limits from the flags.
func (c *httpConfig) limits() guard.Limits {
	streams := c.MaxStreams
	if streams == 0 {
		streams = -1 // the flag's 0 is no cap; the API's is its default
	}
	return guard.Limits{AllowedHosts: c.AllowedHosts, MaxStreamsPerPrincipal: streams, RatePerSecond: c.RateLimit, RateBurst: c.RateBurst}
}
