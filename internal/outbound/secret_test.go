package outbound_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// TestClientSecretOnlyOverHTTPSOrToTrustedHosts: a request carrying a
// user's secret (outbound.WithSecret) goes over https, or to a host the
// operator configured; over plain http to any other host, even one the
// address policy allows, it is refused before a connection is made.
// Requests without a secret are not concerned.
func TestClientSecretOnlyOverHTTPSOrToTrustedHosts(t *testing.T) {
	srv := serveOn(t, "127.0.0.1:0", nil)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	allowLoopback := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	tests := []struct {
		name    string
		use     outbound.Use
		url     string
		secret  bool
		refused bool
	}{
		{"plain http to an allowed address", outbound.A2A, srv.URL + "/a2a", true, true},
		{"plain http to an allowed address, no secret", outbound.A2A, srv.URL + "/a2a", false, false},
		{"plain http to the operator's agent", outbound.A2A.Trusting(srv.URL + "/agents/issues"), srv.URL + "/a2a", true, false},
		{"plain http to another port of the operator's host", outbound.A2A.Trusting(tlsSrv.URL), srv.URL + "/a2a", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.hits.Load()
			ctx := context.Background()
			if tt.secret {
				ctx = outbound.WithSecret(ctx)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tt.url, strings.NewReader(`{"text":"ghp_secret"}`))
			resp, err := allowLoopback.HTTPClient(tt.use).Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if tt.refused {
				if !errors.Is(err, outbound.ErrSecretRefused) || !outbound.Refused(err) {
					t.Fatalf("POST %s = %v, want ErrSecretRefused", tt.url, err)
				}
				if n := srv.hits.Load() - before; n != 0 {
					t.Errorf("the server got %d requests, want 0", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("POST %s: %v", tt.url, err)
			}
		})
	}
	// Over https the secret check lets the request through (this client
	// does not trust the test server's certificate: the handshake fails,
	// after the check).
	req, _ := http.NewRequestWithContext(outbound.WithSecret(context.Background()), http.MethodPost, tlsSrv.URL, strings.NewReader("{}"))
	if _, err := allowLoopback.HTTPClient(outbound.A2A).Do(req); errors.Is(err, outbound.ErrSecretRefused) {
		t.Errorf("POST over https: %v, want past the secret check", err)
	}
}
