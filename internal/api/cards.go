package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/workflows"
)

// AgentCard returns the A2A 1.0 card of agent served at url (its JSON-RPC
// endpoint and the base of its HTTP+JSON binding).
func AgentCard(agent *workflows.Agent, url string) *a2a.AgentCard {
	version := agent.Version
	if version == "" {
		version = "1.0.0"
	}
	in, out := agent.InputModes, agent.OutputModes
	if len(in) == 0 {
		in = []string{"text/plain", "application/json"}
	}
	if len(out) == 0 {
		out = []string{"text/plain", "application/json"}
	}
	skills := agent.Skills
	if skills == nil {
		skills = []a2a.AgentSkill{}
	}
	return &a2a.AgentCard{
		Name:        agent.Name,
		Description: agent.Description,
		Version:     version,
		Provider:    agent.Provider,
		// The same URLs serve 1.0 and 0.3; the A2A-Version header chooses.
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(url, a2a.TransportProtocolHTTPJSON),
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: url, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true, Extensions: cardExtensions(agent)},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills:             skills,
	}
}

// card serves agent's card, written so that both 1.0 and 0.3 clients read it
// (a2av0's union form).
func (s *Server) card(agent *workflows.Agent, prefix string) gin.HandlerFunc {
	return func(c *gin.Context) {
		card := AgentCard(agent, s.baseURL(c.Request)+prefix)
		addGRPCInterfaces(card, s.grpcCardAddr(c.Request), agent.Name, agent.Name == s.agents.Default().Name)
		s.cfg.Auth.Declare(card)
		s.signCard(c.Request, card)
		rec := &cardRecorder{header: http.Header{}, code: http.StatusOK}
		a2asrv.NewAgentCardHandler(cardProducer(card)).ServeHTTP(rec, c.Request)
		s.writeCard(c, rec)
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
func (s *Server) writeCard(c *gin.Context, rec *cardRecorder) {
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
	h.Set("Last-Modified", s.started.Format(http.TimeFormat))
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

// cardExtensions returns the agent's extensions as its card declares them.
func cardExtensions(agent *workflows.Agent) []a2a.AgentExtension {
	return append(slices.Clone(agent.Extensions), a2a.AgentExtension{URI: ForkExtensionURI,
		Description: "a2aflow's fork and retry: the JSON-RPC methods ForkTask {id, atMessage, contextId?} and RetryTask {id}, " +
			"and POST /tasks/{id}:fork and /tasks/{id}:retry over HTTP+JSON, start a new task that reuses the original's recorded steps"})
}

// JWKSPath is where the public key of signed cards is served.
const JWKSPath = "/.well-known/jwks.json"

// signCard adds the card's signature when a signing key is configured.
// The card is signed as served, for the URL it names (the request's origin
// unless PublicURL is set), and points at the key with jku. A signing
// failure is logged and the card served unsigned: a verifying client then
// refuses it, which is the right answer to a server that cannot sign.
func (s *Server) signCard(r *http.Request, card *a2a.AgentCard) {
	if s.cfg.CardSigner == nil {
		return
	}
	sig, err := s.cfg.CardSigner.Sign(card, s.baseURL(r)+JWKSPath)
	if err != nil {
		s.cfg.Logger.ErrorContext(r.Context(), "agent card not signed", "agent", card.Name, "error", err)
		return
	}
	card.Signatures = []a2a.AgentCardSignature{sig}
}

// jwks serves the public key of the card signing key as a JSON Web Key Set.
func (s *Server) jwks(c *gin.Context) {
	if s.cfg.CardSigner == nil {
		abortWithA2AError(c, bindingPlain, http.StatusNotFound,
			a2a.NewError(a2a.ErrMethodNotFound, "agent cards are not signed here: no card signing key is configured (--card-key)"))
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, s.cfg.CardSigner.JWKS())
}

// addGRPCInterfaces lists the gRPC binding at addr ("host:port"; "" when
// it is off) in card: A2A 1.0 after the HTTP+JSON interface, the agent named
// by the interface's tenant (which 1.0 clients copy into every request),
// and A2A 0.3, whose requests name no agent, on the default agent's card
// only (grpc.go).
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
}
