package guard

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Refusal is why the guard refuses a call that comes another way than
// HTTP (AdmitCall).
type Refusal struct {
	// Err is the refusal, an A2A error.
	Err error
	// RetryAfter is how long the client should wait before it retries; 0:
	// no wait is asked.
	RetryAfter time.Duration
	// Challenges are the WWW-Authenticate challenges of a refused
	// credential, one per accepted scheme.
	Challenges []string
}

// AdmitCall does for a call that comes another way than HTTP (a gRPC call,
// whose metadata r carries as headers, with its peer and authority) what
// LimitRefused, Authenticate and LimitRate do for an HTTP request, in
// order. It returns r's context with the caller, or why the call is
// refused.
func (g *Guard) AdmitCall(r *http.Request) (context.Context, *Refusal) {
	ctx := r.Context()
	auth, rates := g.cfg.Auth, g.limits.rates
	if auth.Enabled() {
		id, err := auth.authenticateHeaders(r.Header)
		if err != nil {
			ip := ipKey(r)
			if rates != nil {
				if wait := rates.wait(ip, time.Now()); wait > 0 {
					return ctx, &Refusal{Err: tooManyRequests("too many requests refused authentication from this address; retry later"), RetryAfter: wait}
				}
				rates.charge(ip, time.Now())
			}
			auth.logger.Debug("refused gRPC call", "method", r.URL.Path, "error", err)
			return ctx, &Refusal{Err: a2a.NewError(a2a.ErrUnauthenticated, unauthenticatedMessage(err)), Challenges: auth.challenges(err)}
		}
		ctx = withCaller(ctx, id, auth)
		r = r.WithContext(ctx)
	}
	if rates != nil {
		if wait := rates.take(clientKey(r), time.Now()); wait > 0 {
			return ctx, &Refusal{Err: tooManyRequests(fmt.Sprintf("over the rate limit of %g requests per second; retry later", float64(rates.limit))), RetryAfter: wait}
		}
	}
	return ctx, nil
}
