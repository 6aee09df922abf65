// Package a2abinding serves each agent over A2A (Bindings): JSON-RPC 2.0
// and HTTP+JSON on the agent's endpoint, gRPC on a listener of its own,
// each in A2A 1.0 and 0.3, with a2a-go's transports around the agent's
// TaskService, and the agents' cards. What a2aflow checks of a request
// before a2a-go decodes it is in validate.go; where a2a-go answers
// otherwise than the specifications, a2agofixes.go (and the files it
// names) corrects it, each correction naming its canary in
// internal/api/upstream_test.go. Every binding serves one handler per
// agent: the service with the agent's extended card, noted for the logs,
// gated by the caller's permissions and the agent's required extensions.
package a2abinding
