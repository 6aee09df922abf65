package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
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
func NewClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard) (*a2aclient.Client, error) {
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
			a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: hc})),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolHTTPJSON,
			a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: hc})),
	)
	if err != nil {
		return nil, fmt.Errorf("no usable interface in the card of %s: %w", card.Name, err)
	}
	return c, nil
}
