package remote

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2aext"
)

// ErrInvalidCard means a URL answered with JSON that is not a usable agent card.
var ErrInvalidCard = errors.New("not a valid agent card: it needs a name and at least one interface")

// ResolveCard fetches the agent card at baseURL (its
// /.well-known/agent-card.json), in A2A 1.0 or 0.3 form, through hc (which
// carries the credentials).
func ResolveCard(ctx context.Context, hc *http.Client, baseURL string) (*a2a.AgentCard, error) {
	if baseURL == "" {
		return nil, errors.New("no agent URL")
	}
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("agent card at %s: %w", baseURL, err)
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("agent card at %s: %w", baseURL, ErrInvalidCard)
	}
	return card, nil
}

// NewClient returns an a2a-go client for card: A2A 1.0 or 0.3, JSON-RPC or
// HTTP+JSON, whichever the card offers (the factory's choice), every request
// made through hc.
//
// extensions are A2A extension URIs to activate when card declares them
// (a2aext's activator): each request then names them in A2A-Extensions.
func NewClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard, extensions ...string) (*a2aclient.Client, error) {
	c, err := a2aclient.NewFromCard(ctx, card, clientOptions(hc, extensions)...)
	if err != nil {
		return nil, fmt.Errorf("no usable interface in the card of %s: %w", card.Name, err)
	}
	return c, nil
}

// clientOptions are NewClient's factory options: the HTTP transports of
// both versions through hc, and the extensions' activator.
func clientOptions(hc *http.Client, extensions []string) []a2aclient.FactoryOption {
	hc = withProblemJSON(hc)
	return []a2aclient.FactoryOption{
		a2aclient.WithCallInterceptors(a2aext.NewActivator(extensions...)),
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
			a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: hc})),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolHTTPJSON,
			a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: hc})),
	}
}

// withProblemJSON returns a copy of hc whose responses carrying an error as
// application/problem+json say application/json instead. The A2A HTTP+JSON
// binding sends errors as problem+json (a2a-go's own 0.3 server does, and
// a2a-java), but a2a-go v2.4.0's REST clients decode an error body only
// when it is application/json, and otherwise report a bare "server error":
// with the header renamed they read the A2A error inside (task not found,
// not cancelable...). Bodies are not touched.
func withProblemJSON(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = problemJSON{base}
	return &c
}

type problemJSON struct{ base http.RoundTripper }

func (p problemJSON) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(r)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" {
		resp.Header = resp.Header.Clone()
		resp.Header.Set("Content-Type", "application/json")
	}
	return resp, nil
}
