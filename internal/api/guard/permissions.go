package guard

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/golang-jwt/jwt/v5"
)

// Who may call which agent. Authentication says who the caller is
// (auth.go); its permissions say which agents it may use:
//
//   - an API key may be limited to a list of agents (AuthConfig.APIKeyAgents,
//     --api-key-agents "alice:travel,echo;bob:expenses");
//   - a JWT may be limited to the agents its scopes name
//     (JWTConfig.AgentScopePrefix: scope "a2aflow:agent:travel") or a
//     claim lists (JWTConfig.AgentsClaim).
//
// A caller with no such limit (a key not listed, or no scope prefix nor
// agents claim configured) may use every agent, as before permissions
// existed. The rule is PermitAgent, applied wherever a request reaches an
// agent:
//
//   - every A2A method of an agent's endpoint, on every binding (JSON-RPC,
//     HTTP+JSON, gRPC) and version (1.0, 0.3): gatedService (a2abinding/extensions.go)
//     wraps the one handler they all serve, and the HTTP+JSON subscription
//     refused before it (a2abinding/streams.go). The agent is named by the request, so
//     the refusal is PermissionDenied whatever the task (-31403, HTTP 403,
//     gRPC PERMISSION_DENIED): it tells nothing about a task;
//   - the extended card of an agent the caller may not use is refused the
//     same way; the card of one it may use names its agents (CallerExtensionURI);
//   - /mcp: the tool of an agent the caller may not use is not listed and
//     its call is refused; a2aflow_get_task, a2aflow_reply and
//     a2aflow_cancel_task on such an agent's task are refused once the
//     task is the caller's (another owner's task stays not found);
//   - /policies and /policy-versions: only operators and tenants' admins,
//     each within what they administer (policyadmins.go), whatever the
//     agents;
//   - /approvals: listings leave out the tasks of agents the caller may not
//     use, and reading or deciding such an approval the caller may see is
//     refused; GET /waitpoints/{id} without a token likewise. A waitpoint
//     token stays a capability of its own: it opens its waitpoint for
//     whoever holds it.
//
// A per-skill permission is not offered: an agent runs one handler for
// every task (its skills are what its card advertises), so a caller cannot
// pick a skill a permission could refuse.

// DefaultAgentScopePrefix is the scope prefix the documentation suggests
// for JWTConfig.AgentScopePrefix: scope "a2aflow:agent:travel" lets a token
// use the agent travel.
const DefaultAgentScopePrefix = "a2aflow:agent:"

// allAgents, in a permission list, lets the caller use every agent.
const allAgents = "*"

// permissions are the agent permissions an Authenticator applies.
type permissions struct {
	keys        map[string][]string // API key principal -> agents
	scopePrefix string
	agentsClaim string
	oidcURL     string
}

func (a *Authenticator) setPermissions(cfg AuthConfig) error {
	p := permissions{scopePrefix: cfg.JWT.AgentScopePrefix, agentsClaim: cfg.JWT.AgentsClaim, oidcURL: cfg.JWT.OpenIDConnectURL}
	if len(cfg.APIKeyAgents) > 0 {
		p.keys = map[string][]string{}
	}
	for name, agents := range cfg.APIKeyAgents {
		if _, ok := cfg.APIKeys[name]; !ok {
			return fmt.Errorf("%w: API key agents name %q, which has no API key", ErrAuthConfig, name)
		}
		var list []string
		for _, agent := range agents {
			agent = strings.TrimSpace(agent)
			if agent == "" || slices.Contains(list, agent) {
				continue
			}
			list = append(list, agent)
		}
		if len(list) == 0 {
			return fmt.Errorf("%w: the API key agents of %q are empty; leave the key out to let it use every agent", ErrAuthConfig, name)
		}
		if slices.Contains(list, allAgents) {
			continue // every agent: as if not listed
		}
		slices.Sort(list)
		p.keys[name] = list
	}
	if (p.scopePrefix != "" || p.agentsClaim != "") && a.parser == nil {
		return fmt.Errorf("%w: a JWT agent scope prefix or agents claim is set but JWTs are off (no HS256 secret, JWKS URL or JWKS file)", ErrAuthConfig)
	}
	if p.scopePrefix != "" && strings.ContainsAny(p.scopePrefix, " \t\r\n") {
		return fmt.Errorf("%w: the JWT agent scope prefix %q holds a space, which separates scopes", ErrAuthConfig, p.scopePrefix)
	}
	if p.oidcURL == "" && a.parser != nil {
		if u, err := url.Parse(cfg.JWT.Issuer); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			p.oidcURL = strings.TrimRight(cfg.JWT.Issuer, "/") + "/.well-known/openid-configuration"
		}
	}
	if p.oidcURL != "" {
		if u, err := url.Parse(p.oidcURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: the OpenID Connect URL %q is not an http(s) URL", ErrAuthConfig, p.oidcURL)
		}
	}
	a.perms = p
	return nil
}

// CheckAgents reports a permission naming an agent that is not among
// known, the agents the server serves: a typo would otherwise lock a key
// out of the agent meant.
func (a *Authenticator) CheckAgents(known []string) error {
	if a == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(a.perms.keys)) {
		for _, agent := range a.perms.keys[name] {
			if !slices.Contains(known, agent) {
				return fmt.Errorf("%w: the API key of %q may use agent %q, which this server does not serve (agents: %s)",
					ErrAuthConfig, name, agent, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// keyAgents are the agents the API key of principal may use; nil: all.
func (p permissions) keyAgents(principal string) []string {
	if list, ok := p.keys[principal]; ok {
		return slices.Clone(list)
	}
	return nil
}

// tokenAgents are the agents a JWT with claims may use; nil: all. With a
// scope prefix or agents claim configured, a token that names no agent may
// use none.
func (p permissions) tokenAgents(claims jwt.MapClaims) []string {
	if p.scopePrefix == "" && p.agentsClaim == "" {
		return nil
	}
	agents := []string{}
	add := func(name string) bool {
		name = strings.TrimSpace(name)
		if name == allAgents {
			return true
		}
		if name != "" && !slices.Contains(agents, name) {
			agents = append(agents, name)
		}
		return false
	}
	if p.scopePrefix != "" {
		for _, scope := range tokenScopes(claims) {
			if name, ok := strings.CutPrefix(scope, p.scopePrefix); ok && add(name) {
				return nil
			}
		}
	}
	if p.agentsClaim != "" {
		for _, name := range claimStrings(claims[p.agentsClaim], " ,") {
			if add(name) {
				return nil
			}
		}
	}
	slices.Sort(agents)
	return agents
}

// tokenScopes are the scopes of a JWT: its "scope" claim (RFC 9068 §2.2.3,
// RFC 8693 §4.2: space-separated) and its "scp" claim (a string or a list,
// as some providers write it).
func tokenScopes(claims jwt.MapClaims) []string {
	out := claimStrings(claims["scope"], " ")
	return append(out, claimStrings(claims["scp"], " ")...)
}

// claimStrings reads a claim that is a list of strings, or one string of
// values separated by any of seps.
func claimStrings(v any, seps string) []string {
	var out []string
	switch v := v.(type) {
	case string:
		out = strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) || r == '\t' || r == '\n' })
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = v
	}
	return out
}

// declare adds to card (of the agent named card.Name) what a JWT needs to
// use it: with a scope prefix, the agent's scope; with an OpenID Connect
// URL, the openIdConnect scheme requiring that scope.
func (p permissions) declare(card *a2a.AgentCard) {
	scopes := a2a.SecuritySchemeScopes{}
	if p.scopePrefix != "" {
		scopes = append(scopes, p.scopePrefix+card.Name)
	}
	if p.oidcURL != "" {
		desc := "OpenID Connect: the issuer's access tokens, sent as bearer JWTs."
		if p.scopePrefix != "" {
			desc += fmt.Sprintf(" A token uses the agents its scopes name: %s<agent> (%s* for every agent).", p.scopePrefix, p.scopePrefix)
		}
		card.SecuritySchemes[OpenIDConnectSchemeName] = a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: p.oidcURL, Description: desc}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{OpenIDConnectSchemeName: scopes})
	}
	if bearer, ok := card.SecuritySchemes[BearerSchemeName].(a2a.HTTPAuthSecurityScheme); ok {
		switch {
		case p.scopePrefix != "" && p.agentsClaim != "":
			bearer.Description += fmt.Sprintf(" It must carry the scope %s (or %s*), or name %s in its %q claim.", p.scopePrefix+card.Name, p.scopePrefix, card.Name, p.agentsClaim)
		case p.scopePrefix != "":
			bearer.Description += fmt.Sprintf(" It must carry the scope %s (or %s*).", p.scopePrefix+card.Name, p.scopePrefix)
		case p.agentsClaim != "":
			bearer.Description += fmt.Sprintf(" Its %q claim must name %s (or *).", p.agentsClaim, card.Name)
		}
		card.SecuritySchemes[BearerSchemeName] = bearer
	}
}

// MayUse reports whether the caller of ctx may use agent: always without
// authentication or a permission limit.
func MayUse(ctx context.Context, agent string) bool {
	c, ok := CallerOf(ctx)
	return !ok || c.Agents == nil || slices.Contains(c.Agents, agent)
}

// PermitAgent is the permission rule: nil when the caller of ctx may use
// agent, else PermissionDenied saying what would let it.
func PermitAgent(ctx context.Context, agent string) error {
	if MayUse(ctx, agent) {
		return nil
	}
	c, _ := CallerOf(ctx)
	msg := fmt.Sprintf("%s may not use agent %s", c.Principal, agent)
	switch {
	case c.Scheme == APIKeySchemeName:
		msg += fmt.Sprintf(": its API key is limited to %s", listOrNone(c.Agents))
	case c.auth != nil && c.auth.perms.scopePrefix != "":
		msg += fmt.Sprintf(": the token lacks the scope %s%s", c.auth.perms.scopePrefix, agent)
	case c.auth != nil && c.auth.perms.agentsClaim != "":
		msg += fmt.Sprintf(": the token's %q claim does not name it", c.auth.perms.agentsClaim)
	}
	return a2a.NewError(a2a.ErrUnauthorized, msg)
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "no agent"
	}
	return strings.Join(list, ", ")
}
