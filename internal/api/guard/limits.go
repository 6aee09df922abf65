package guard

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// The HTTP hardening of the API: which Host headers it answers, how many
// streams and requests one client may have, the CSRF guard of decisions, and
// deadlines that fit streams. Each refusal has the shape of its route: a
// JSON-RPC error on a JSON-RPC endpoint, {"error": "..."} on the approvals
// API, a google.rpc.Status anywhere else.

// DefaultMaxStreamsPerPrincipal is Limits.MaxStreamsPerPrincipal's default:
// above a client following 100 tasks at once (as `make bench` does), low
// enough that one client cannot hold thousands of goroutines and their
// workflow queries.
const DefaultMaxStreamsPerPrincipal = 200

// StreamRetryAfter is the Retry-After of a stream refused for the cap: a
// stream ends when its task next waits or ends, often within seconds.
const StreamRetryAfter = 5 * time.Second

// Limits bound what one client may ask of the API, and the host names it
// answers to. The zero value caps streams at DefaultMaxStreamsPerPrincipal
// and limits nothing else.
//
// A client is its principal when authentication is on and the request
// carries a valid credential; otherwise its IP address (an IPv6 address by
// its /64), the connection's peer: behind a reverse proxy, that is the
// proxy, whose clients then share one budget.
type Limits struct {
	// AllowedHosts lists the names the API may be addressed by in a
	// request's Host header, as "name" (any port) or "name:port"; any other
	// name gets 421 Misdirected Request. It defends an API on loopback or a
	// private address from DNS rebinding, in which a web page's own name is
	// pointed at that address so that the browser lets the page read the
	// API. IP addresses are always accepted, since rebinding needs a name.
	// Default: any host.
	AllowedHosts []string

	// MaxStreamsPerPrincipal caps the streams (SendStreamingMessage and
	// SubscribeToTask, on both bindings and in both versions) a client has
	// open at once; another gets 429 with Retry-After. Default
	// DefaultMaxStreamsPerPrincipal; negative: no cap.
	MaxStreamsPerPrincipal int

	// RatePerSecond is how many requests per second a client may send
	// over time, a token bucket refilled at this rate; a request finding
	// the bucket empty gets 429 with Retry-After. Requests refused
	// authentication count against their IP address, so that guessing
	// credentials is limited too. /healthz and /readyz are never limited. Default 0: no
	// rate limit.
	RatePerSecond float64

	// RateBurst is the bucket's size: how many requests a client may send
	// at once after a quiet spell. Default twice RatePerSecond, at least 1.
	RateBurst int
}

// requestLimits is Limits made ready: nil fields limit nothing.
type requestLimits struct {
	hosts   *hostList
	streams *streamSlots
	rates   *rateBuckets
}

func newRequestLimits(l Limits) requestLimits {
	var out requestLimits
	if len(l.AllowedHosts) > 0 {
		out.hosts = newHostList(l.AllowedHosts)
	}
	switch {
	case l.MaxStreamsPerPrincipal == 0:
		out.streams = &streamSlots{max: DefaultMaxStreamsPerPrincipal, open: map[string]int{}}
	case l.MaxStreamsPerPrincipal > 0:
		out.streams = &streamSlots{max: l.MaxStreamsPerPrincipal, open: map[string]int{}}
	}
	if l.RatePerSecond > 0 {
		burst := l.RateBurst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(2*l.RatePerSecond)))
		}
		out.rates = &rateBuckets{limit: rate.Limit(l.RatePerSecond), burst: burst, buckets: map[string]*rate.Limiter{}}
	}
	return out
}

// refuse answers r with err, one of this file's refusals, in the shape of
// its route and with its HTTP status on every binding; rpcID is the
// JSON-RPC request's id when known. retryAfter, when not 0, is the wait it
// gives: Retry-After, and a google.rpc.RetryInfo beside the ErrorInfo.
func refuse(w http.ResponseWriter, r *http.Request, rpcID json.RawMessage, err error, retryAfter time.Duration) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(apierror.RetrySeconds(retryAfter)))
		err = apierror.WithRetryDelay(err, retryAfter)
	}
	b := apierror.HTTPJSON
	switch {
	case r.Method == http.MethodPost && jsonRPCPath(r.URL.Path):
		b = apierror.JSONRPC
	case approvalsPath(r.URL.Path):
		b = apierror.Plain
	}
	apierror.Write(w, b, rpcID, apierror.HTTPStatus(err), err)
}

// tooManyRequests is the refusal of a request over a limit (429).
func tooManyRequests(msg string) error { return a2a.NewError(apierror.ErrTooManyRequests, msg) }

// clientKey names the client of r for the limits: its principal, or its IP
// address without one.
func clientKey(r *http.Request) string {
	if p := Principal(r.Context()); p != "" {
		return "principal:" + p
	}
	return ipKey(r)
}

// ipKey names the IP address of r's peer; an IPv6 address by its /64, which
// one host usually holds whole.
func ipKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "addr:" + host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.WithZone("").Prefix(64); err == nil {
			return "ip:" + p.String()
		}
	}
	return "ip:" + ip.String()
}

// hostList is Limits.AllowedHosts: names allowed on any port, and
// name:port pairs.
type hostList struct {
	anyPort map[string]bool
	exact   map[string]bool
}

func newHostList(hosts []string) *hostList {
	l := &hostList{anyPort: map[string]bool{}, exact: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if name, port, err := net.SplitHostPort(h); err == nil {
			l.exact[net.JoinHostPort(strings.TrimSuffix(name, "."), port)] = true
		} else if h != "" {
			l.anyPort[strings.TrimSuffix(strings.Trim(h, "[]"), ".")] = true
		}
	}
	return l
}

// allows reports whether a request with this Host header may be served.
func (l *hostList) allows(hostHeader string) bool {
	if l == nil {
		return true
	}
	h := strings.ToLower(hostHeader)
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = strings.Trim(h, "[]"), ""
	}
	name = strings.TrimSuffix(name, ".")
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return l.anyPort[name] || (port != "" && l.exact[net.JoinHostPort(name, port)])
}

// CheckHost answers 421 to a request addressed to a name not in
// Limits.AllowedHosts, before anything reads it.
func (g *Guard) CheckHost(c *gin.Context) {
	if g.limits.hosts.allows(c.Request.Host) {
		c.Next()
		return
	}
	refuse(c.Writer, c.Request, nil, a2a.NewError(apierror.ErrMisdirectedRequest,
		fmt.Sprintf("this server does not answer to the host %q", c.Request.Host)), 0)
	c.Abort()
}

// rateBuckets are the token buckets of the clients, by clientKey.
type rateBuckets struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

// sweepAbove is how many buckets may exist before full ones, which hold no
// state a new bucket would not, are dropped (at most once a minute).
const sweepAbove = 1024

func (b *rateBuckets) bucket(key string, now time.Time) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buckets) > sweepAbove && now.Sub(b.swept) > time.Minute {
		b.swept = now
		for k, l := range b.buckets {
			if l.TokensAt(now) >= float64(b.burst) {
				delete(b.buckets, k)
			}
		}
	}
	l, ok := b.buckets[key]
	if !ok {
		l = rate.NewLimiter(b.limit, b.burst)
		b.buckets[key] = l
	}
	return l
}

// take spends a token of key's bucket and returns 0, or, when it is empty,
// spends nothing and returns how long until it holds one.
func (b *rateBuckets) take(key string, now time.Time) time.Duration {
	res := b.bucket(key, now).ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return wait
	}
	return 0
}

// wait returns how long until key's bucket holds a token, spending none.
func (b *rateBuckets) wait(key string, now time.Time) time.Duration {
	tokens := b.bucket(key, now).TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.limit) * float64(time.Second))
}

// charge spends a token of key's bucket, or goes into debt when it is
// empty.
func (b *rateBuckets) charge(key string, now time.Time) {
	b.bucket(key, now).ReserveN(now, 1)
}

// LimitRefused counts requests refused authentication against their IP
// address, and once that address has spent its budget answers 429 to its
// requests that would be refused, before the authentication middleware
// answers 401: guessing credentials is rate-limited too. It lets a valid
// credential through: clients sharing the address are not locked out.
func (g *Guard) LimitRefused(c *gin.Context) {
	rates := g.limits.rates
	if rates == nil || !g.cfg.Auth.Enabled() || publicRoute(c.Request) {
		c.Next()
		return
	}
	key := ipKey(c.Request)
	if wait := rates.wait(key, time.Now()); wait > 0 {
		if _, err := g.cfg.Auth.Authenticate(c.Request); err != nil {
			refuse(c.Writer, c.Request, nil, tooManyRequests("too many requests refused authentication from this address; retry later"), wait)
			c.Abort()
			return
		}
	}
	c.Next()
	if c.Writer.Status() == http.StatusUnauthorized {
		rates.charge(key, time.Now())
	}
}

// LimitRate answers 429 to a client whose bucket is empty (after
// authentication, which names the client).
func (g *Guard) LimitRate(c *gin.Context) {
	rates := g.limits.rates
	if rates == nil || c.Request.URL.Path == "/healthz" || c.Request.URL.Path == "/readyz" {
		c.Next()
		return
	}
	if wait := rates.take(clientKey(c.Request), time.Now()); wait > 0 {
		refuse(c.Writer, c.Request, nil, tooManyRequests(
			fmt.Sprintf("over the rate limit of %g requests per second; retry later", float64(rates.limit))), wait)
		c.Abort()
		return
	}
	c.Next()
}

// RequireJSONDecision answers 415 to a decision whose Content-Type is not
// application/json. A cross-site HTML form can only send form and text
// types, and a script on another origin cannot send JSON without a CORS
// preflight, which the API never grants: so a page the approver happens to
// visit cannot decide in their name.
func RequireJSONDecision(c *gin.Context) {
	if c.Request.Method != http.MethodPost || c.FullPath() != DecisionRoute {
		c.Next()
		return
	}
	ct := c.GetHeader("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		apierror.AbortMediaType(c, fmt.Sprintf("Content-Type %q is not accepted: a decision is sent as application/json", ct))
		return
	}
	c.Next()
}

// streamSlots counts each client's open streams.
type streamSlots struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

// acquire takes one of key's slots, and returns the function giving it
// back, or false when key has max streams open.
func (s *streamSlots) acquire(key string) (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= s.max {
		return nil, false
	}
	s.open[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.open[key]--; s.open[key] <= 0 {
				delete(s.open, key)
			}
		})
	}, true
}

// TakeStreamSlot takes one of the client of r's stream slots and returns
// the function giving it back, or the refusal when the client has its
// limit of streams open (429; the client retries after StreamRetryAfter).
func (g *Guard) TakeStreamSlot(r *http.Request) (release func(), err error) {
	release, ok := g.limits.streams.acquire(clientKey(r))
	if !ok {
		return nil, tooManyRequests(fmt.Sprintf("too many open streams: at most %d at once; close one or retry later", g.limits.streams.max))
	}
	return release, nil
}

// OpenStream prepares r, which opens a stream (rpcID is its JSON-RPC id,
// when it has one), for it: it takes one of the client's stream slots,
// answering 429 itself when none is free, and lifts the server's write
// deadline, which a stream lasting as long as its task would otherwise
// pass. It returns whether to serve r, and the function to call when r is
// served.
func (g *Guard) OpenStream(w http.ResponseWriter, r *http.Request, rpcID json.RawMessage) (done func(), serve bool) {
	release, err := g.TakeStreamSlot(r)
	if err != nil {
		refuse(w, r, rpcID, err, StreamRetryAfter)
		return nil, false
	}
	// The read deadline needs no lifting: net/http lifts it itself once
	// the body is read, as guardBinding has.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	return release, true
}
