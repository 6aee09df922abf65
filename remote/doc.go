// Package remote is a2aflow as an A2A client: it resolves other agents'
// cards (A2A 1.0 or 0.3), builds a2a-go clients for whatever transport a
// card offers, and carries the outbound credentials (API key in a header,
// query or cookie, bearer, basic, OAuth2 client credentials, or several at
// once) that the CLI, the REPL and the delegation activities call with.
//
// Credentials live in worker or CLI configuration and are resolved by name
// (an auth reference) when a request is made; they never enter task history.
package remote
