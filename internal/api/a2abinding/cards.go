package a2abinding

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/workflows"
)

// CallerExtensionURI identifies the capability extension that the extended
// agent card adds for an authenticated caller. Its params tell the caller
// who the server takes it for: "principal" (the owner of the tasks it
// creates and the only one who can read them), "scheme" (the security
// scheme it authenticated with) and, for a JWT, "expiresAt" (RFC 3339). A
// client uses it to check its credentials resolve to the identity it
// expects before it creates tasks.
const CallerExtensionURI = "urn:a2aflow:ext:caller:v1"

// Card serves the card of agent, reached under prefix ("/agents/{name}", or
// "" for the default agent's), written so that both 1.0 and 0.3 clients
// read it (a2av0's union form).
func (b *Bindings) Card(agent *workflows.Agent, prefix string) gin.HandlerFunc {
	return func(c *gin.Context) {
		card := taskservice.AgentCard(agent, b.baseURL(c.Request)+prefix)
		addGRPCInterfaces(card, b.grpcCardAddr(c.Request), agent.Name, agent.Name == b.agents.Default().Name)
		b.cfg.Auth.Declare(card)
		b.signCard(c.Request, card)
		rec := &cardRecorder{header: http.Header{}, code: http.StatusOK}
		a2asrv.NewAgentCardHandler(cardProducer(card)).ServeHTTP(rec, c.Request)
		b.writeCard(c, rec)
	}
}

// CardMaxAge is how long a client or cache may keep an agent card without
// asking again (Cache-Control max-age): the cards change only when the
// server restarts with other agents or settings.
const CardMaxAge = 5 * time.Minute

// writeCard writes the card handler's answer with the validators A2A asks a
// card server to give (its caching guidance: Cache-Control with max-age, an
// ETag, Last-Modified), and answers a conditional GET whose If-None-Match
// names the card as served with 304 Not Modified.
func (b *Bindings) writeCard(c *gin.Context, rec *cardRecorder) {
	body := rec.body.Bytes()
	h := c.Writer.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	if rec.code != http.StatusOK {
		c.Status(rec.code)
		_, _ = c.Writer.Write(body)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	h.Set("ETag", etag)
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(CardMaxAge.Seconds())))
	h.Set("Last-Modified", b.started.Format(http.TimeFormat))
	for _, tag := range strings.Split(c.GetHeader("If-None-Match"), ",") {
		if t := strings.TrimPrefix(strings.TrimSpace(tag), "W/"); t == etag || t == "*" {
			h.Del("Content-Length")
			c.Status(http.StatusNotModified)
			return
		}
	}
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(body)
}

// cardRecorder keeps a2a-go's card handler's answer for writeCard.
type cardRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *cardRecorder) Header() http.Header         { return r.header }
func (r *cardRecorder) WriteHeader(code int)        { r.code = code }
func (r *cardRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// signCard adds the card's signature when a signing key is configured.
// The card is signed as served, for the URL it names (the request's origin
// unless PublicURL is set), and points at the key with jku. A signing
// failure is logged and the card served unsigned: a verifying client then
// refuses it, which is the right answer to a server that cannot sign.
func (b *Bindings) signCard(r *http.Request, card *a2a.AgentCard) {
	if b.cfg.CardSigner == nil {
		return
	}
	sig, err := b.cfg.CardSigner.Sign(card, b.baseURL(r)+guard.JWKSPath)
	if err != nil {
		b.cfg.Logger.ErrorContext(r.Context(), "agent card not signed", "agent", card.Name, "error", err)
		return
	}
	card.Signatures = []a2a.AgentCardSignature{sig}
}

// JWKS serves the public key of the card signing key as a JSON Web Key Set.
func (b *Bindings) JWKS(c *gin.Context) {
	if b.cfg.CardSigner == nil {
		apierror.Abort(c, apierror.Plain, http.StatusNotFound,
			a2a.NewError(a2a.ErrMethodNotFound, "agent cards are not signed here: no card signing key is configured (--card-key)"))
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, b.cfg.CardSigner.JWKS())
}

// addGRPCInterfaces lists the gRPC binding at addr ("host:port"; "" when
// it is off) in card: A2A 1.0 after the HTTP+JSON interface, the agent named
// by the interface's tenant (which 1.0 clients copy into every request),
// A2A 0.3, whose requests name no agent, on the default agent's card
// only (grpc.go), and A2A 1.1 (grpcv11.go).
func addGRPCInterfaces(card *a2a.AgentCard, addr, agent string, isDefault bool) {
	if addr == "" {
		return
	}
	v1 := &a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version, Tenant: agent}
	at := len(card.SupportedInterfaces)
	for i, iface := range card.SupportedInterfaces {
		if iface.ProtocolVersion == a2a.Version {
			at = i + 1
		}
	}
	card.SupportedInterfaces = slices.Insert(card.SupportedInterfaces, at, v1)
	if isDefault {
		card.SupportedInterfaces = append(card.SupportedInterfaces,
			&a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2av0.Version})
	}
	// A2A 1.1 on the 1.0 service (grpcv11.go), last, as the HTTP
	// bindings' 1.1 interfaces are.
	card.SupportedInterfaces = append(card.SupportedInterfaces,
		&a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: taskservice.V11, Tenant: agent})
}

// agentService is one agent's A2A handler before it is noted and gated
// (Bindings.agentHandler): its TaskService's task methods, and the
// extended card.
type agentService struct {
	*taskservice.TaskService
	// isDefault is whether the agent is the server's default one, which
	// A2A 0.3 gRPC clients reach without naming it (grpc.go).
	isDefault bool
}

var _ a2asrv.RequestHandler = agentService{}

// GetExtendedAgentCard answers A2A GetExtendedAgentCard: for an
// authenticated caller, the public card of the agent plus the
// CallerExtensionURI extension naming the caller; without authentication,
// ExtendedCardNotConfigured as the public card has nothing to add.
func (a agentService) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	c, ok := guard.CallerOf(ctx)
	if !ok || c.Authenticator() == nil {
		return nil, a2a.ErrExtendedCardNotConfigured
	}
	agent := a.Agent()
	// Only an agent the caller may use has a card for it (guard/permissions.go).
	if err := guard.PermitAgent(ctx, agent.Name); err != nil {
		return nil, err
	}
	addrs, _ := ctx.Value(cardAddrsKey{}).(cardAddrs)
	card := taskservice.AgentCard(agent, addrs.url)
	addGRPCInterfaces(card, addrs.grpc, agent.Name, a.isDefault)
	c.Authenticator().Declare(card)
	params := map[string]any{"principal": c.Principal, "scheme": string(c.Scheme)}
	if !c.ExpiresAt.IsZero() {
		params["expiresAt"] = c.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if c.Agents != nil {
		// The agents this caller may use, when it may not use all.
		// []any: the gRPC binding's card is a protobuf Struct, which
		// takes no []string.
		agents := make([]any, len(c.Agents))
		for i, a := range c.Agents {
			agents[i] = a
		}
		params["agents"] = agents
	}
	card.Capabilities.Extensions = append(card.Capabilities.Extensions, a2a.AgentExtension{
		URI:         CallerExtensionURI,
		Description: "The authenticated caller this card was issued to; its principal owns the tasks it creates.",
		Params:      params,
	})
	return card, nil
}

// cardProducer serves card as a2av0.NewStaticAgentCardProducer does, in
// the union of its 1.0 and 0.3 JSON forms, with one repair: a2a-go v2.4.0
// nests the 1.0 form of each security scheme under "apiKey", "http"...,
// where A2A 1.0 (and a2a-go's own 1.0 card parser) want the wrapper keys
// "apiKeySecurityScheme", "httpAuthSecurityScheme"... Each scheme is served
// with its 0.3 fields ("type", "in", "name"...) next to its 1.0 wrapper, so
// 0.3 and 1.0 parsers both read it.
//
// The repair corrects a2a-go v2.4.0's a2acompat/a2av0/agentcard.go
// mapToCompatSecuritySchemes (the card a2av0's compatProducer.CardJSON
// writes). Canary card-0.3-security-schemes; TestAuthCards reads a2aflow's
// cards with both parsers.
func cardProducer(card *a2a.AgentCard) a2asrv.AgentCardProducer {
	return unionCard{card: card, compat: a2av0.NewStaticAgentCardProducer(card)}
}

type unionCard struct {
	card   *a2a.AgentCard
	compat a2asrv.AgentCardProducer
}

// Card implements a2asrv.AgentCardProducer.
func (u unionCard) Card(context.Context) (*a2a.AgentCard, error) { return u.card, nil }

// CardJSON implements a2asrv.AgentCardJSONProducer.
func (u unionCard) CardJSON(ctx context.Context) ([]byte, error) {
	jp, ok := u.compat.(a2asrv.AgentCardJSONProducer)
	if !ok {
		return json.Marshal(u.card)
	}
	raw, err := jp.CardJSON(ctx)
	if err != nil || len(u.card.SecuritySchemes) == 0 {
		return raw, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("reread card %s: %w", u.card.Name, err)
	}
	var v0, v1 map[a2a.SecuritySchemeName]map[string]json.RawMessage
	if err := json.Unmarshal(fields["securitySchemes"], &v0); err != nil {
		return nil, fmt.Errorf("reread security schemes of card %s: %w", u.card.Name, err)
	}
	v1Raw, err := json.Marshal(u.card.SecuritySchemes)
	if err != nil {
		return nil, fmt.Errorf("marshal security schemes of card %s: %w", u.card.Name, err)
	}
	if err := json.Unmarshal(v1Raw, &v1); err != nil {
		return nil, fmt.Errorf("reread security schemes of card %s: %w", u.card.Name, err)
	}
	for name, scheme := range v0 {
		// The misnamed 1.0 wrappers; no 0.3 scheme has a field by these names.
		for _, k := range []string{"apiKey", "http", "mutualTLS", "openIdConnect", "oauth2"} {
			delete(scheme, k)
		}
		for k, v := range v1[name] {
			scheme[k] = v
		}
	}
	if fields["securitySchemes"], err = json.Marshal(v0); err != nil {
		return nil, fmt.Errorf("marshal security schemes of card %s: %w", u.card.Name, err)
	}
	return json.MarshalIndent(fields, "", "  ")
}

// ListAgents serves GET /agents: the agents served, as JSON, with their
// cards' URLs.
func (b *Bindings) ListAgents(c *gin.Context) {
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Card        string `json:"card"`
	}
	base := b.baseURL(c.Request)
	var out []entry
	for _, name := range b.agents.Names() {
		a, _ := b.agents.Get(name)
		out = append(out, entry{Name: a.Name, Description: a.Description, Card: base + "/agents/" + a.Name + "/.well-known/agent-card.json"})
	}
	c.JSON(http.StatusOK, gin.H{"default": b.agents.Default().Name, "agents": out})
}

// baseURL is the configured public URL or, by default, the request's own origin.
func (b *Bindings) baseURL(r *http.Request) string {
	if b.cfg.PublicURL != "" {
		return b.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type cardAddrsKey struct{}

// cardAddrs is where a request reached its agent: the URL the card it read
// lists (with PublicURL or the host it reached), and where that card lists
// the gRPC binding ("" when it is off). The extended card lists the same
// (agentService.GetExtendedAgentCard).
type cardAddrs struct{ url, grpc string }

// withCardAddrs records where the request of ctx reached its agent.
func withCardAddrs(ctx context.Context, url, grpc string) context.Context {
	return context.WithValue(ctx, cardAddrsKey{}, cardAddrs{url: url, grpc: grpc})
}
