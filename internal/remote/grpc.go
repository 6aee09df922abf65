package remote

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// GRPCCredentials returns c as gRPC per-call credentials: the metadata
// the HTTP client of c (HTTPClient) would send as headers, the API key
// header and the Authorization header (bearer, basic, an OAuth2 token),
// to the hosts c is for. An API key sent in the query has no gRPC form and
// is not sent. requireTLS is whether they may only travel over TLS.
func (c *Credentials) GRPCCredentials(requireTLS bool) credentials.PerRPCCredentials {
	if err := c.Validate(); err != nil {
		return grpcCredentials{err: fmt.Errorf("invalid credentials: %w", err), requireTLS: requireTLS}
	}
	tokens := c.tokenSource(&http.Client{Timeout: TokenFetchTimeout, Transport: http.DefaultTransport})
	return grpcCredentials{rt: newCredentialTransport(c, headerCapture{}, tokens, c.registeredHosts()), requireTLS: requireTLS}
}

type grpcCredentials struct {
	rt         http.RoundTripper
	err        error
	requireTLS bool
}

// GetRequestMetadata runs a request to the call's address through the
// credentials' transport and returns the headers it added.
func (g grpcCredentials) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	if g.err != nil {
		return nil, g.err
	}
	target := "https://localhost/"
	if len(uri) > 0 && uri[0] != "" {
		target = uri[0]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := g.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	md := map[string]string{}
	for k, vs := range resp.Header {
		if len(vs) > 0 {
			md[strings.ToLower(k)] = vs[0]
		}
	}
	return md, nil
}

func (g grpcCredentials) RequireTransportSecurity() bool { return g.requireTLS }

// headerCapture is the end of GRPCCredentials' transport: it sends
// nothing and answers with the request's headers.
type headerCapture struct{}

func (headerCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusNoContent, Header: req.Header.Clone(), Body: http.NoBody, Request: req}, nil
}

// GRPCDialOptions are the dial options of the gRPC transports of
// NewGRPCClient for an agent whose card came from agentURL: TLS (the
// system's roots) when that is an https URL, plaintext otherwise, as the
// HTTP API the card came from; creds, when not nil, on every call.
func GRPCDialOptions(agentURL string, creds *Credentials) []grpc.DialOption {
	secure := strings.HasPrefix(strings.ToLower(agentURL), "https://")
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if secure {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12}))}
	}
	if creds != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(creds.GRPCCredentials(secure)))
	}
	return opts
}

// NewGRPCClient is NewClient that also speaks the gRPC binding (A2A 1.0
// and 0.3, a2a-go's a2agrpc transports dialled with dial): the client
// takes the card's first interface it speaks, gRPC when the card lists it
// first.
func NewGRPCClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard, dial []grpc.DialOption, extensions ...string) (*a2aclient.Client, error) {
	opts := append(clientOptions(hc, extensions), grpcv1.WithGRPCTransport(dial...), grpcv0.WithGRPCTransport(dial...))
	c, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		return nil, fmt.Errorf("no usable interface in the card of %s: %w", card.Name, err)
	}
	return c, nil
}
