package outbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// ErrSecretRefused: a request carrying a user's secret was about to go over
// plain http to a host its use does not trust; it was not sent.
var ErrSecretRefused = errors.New("a secret is sent only over https or to a host the operator configured")

type secretKey struct{}

// WithSecret returns ctx marking the requests made with it as carrying a
// secret a user gave (a credential a remote agent asked for, which a2aflow
// forwards in the message body). The client sends such a request only over
// https, or to a host its use trusts (an agent the operator configured:
// [Use.Trusting]); any other fails with an error wrapping ErrSecretRefused
// before a connection is made. The check applies to every hop: a redirect
// to plain http is refused too.
func WithSecret(ctx context.Context) context.Context {
	return context.WithValue(ctx, secretKey{}, true)
}

// carriesSecret reports whether req was made with a WithSecret context.
func carriesSecret(req *http.Request) bool {
	v, _ := req.Context().Value(secretKey{}).(bool)
	return v
}

// checkSecret refuses a request carrying a secret that would leave over
// plain http for a host the use does not trust.
func (t *useTransport) checkSecret(req *http.Request) error {
	if !carriesSecret(req) || req.URL.Scheme == "https" || t.trusted[HostKey(req.URL)] {
		return nil
	}
	return fmt.Errorf("%w: %s is plain http and not an agent the operator configured", ErrSecretRefused, Redact(req.URL.String()))
}
