// Package remote is a2aflow as an A2A client: it resolves other agents'
// cards (A2A 1.0 or 0.3), builds a2a-go clients for whatever transport a
// card offers, and carries the outbound credentials (API key in a header,
// query or cookie, bearer, basic, OAuth2 client credentials, or several at
// once; or an OAuth login's access token, package oauthlogin's) that the
// CLI, the REPL and the delegation activities call with.
//
// In the worker, an [Endpoint] (an agent's URL, whether the operator
// trusts its host, its credentials) gives the HTTP clients of one agent,
// every request through the guarded outbound.Client; credentials go only to
// the hosts they are registered for. [Reason] words a failed call for a
// model or a tenant, without what the server answered.
//
// Credentials live in worker or CLI configuration and are resolved by name
// (an auth reference) when a request is made; they never enter task history.
package remote
