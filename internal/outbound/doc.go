// Package outbound is a2aflow's one guarded HTTP client: every request the
// worker and the server make to another host (agent cards, delegation to
// remote agents, OAuth2 token fetches, push and approval webhooks) goes
// through a [Client], so that no caller of a2aflow (a task, an LLM choosing a
// tool, a push config) can make it reach what it should not.
//
// The guard, against server-side request forgery:
//
//   - [Policy] says which addresses may be reached: public unicast ones, and
//     loopback, private (RFC 1918, ULA), shared (CGNAT), link-local and the
//     like only when the operator's allow-list permits them (--outbound-allow-hosts,
//     --push-allow-hosts). Cloud metadata addresses need an explicit CIDR.
//   - The check happens when a connection is dialed, on the address actually
//     dialed after DNS resolution: a name that resolves to a public address
//     when checked and to 127.0.0.1 when used (DNS rebinding) is still
//     refused. No proxy is used.
//   - Redirects are followed only to the same host, at most [MaxRedirects],
//     never from https to http; each hop is dialed through the policy again.
//   - A request carrying a user's secret ([WithSecret]: a credential a remote
//     agent asked for) goes only over https or to a host the operator
//     configured; over plain http elsewhere it fails with [ErrSecretRefused].
//   - Each [Use] bounds its responses (a card 1 MiB, an A2A answer 64 MiB, a
//     token 64 KiB) and its time (headers, overall); a body past its bound
//     fails with [ErrBodyTooLarge] rather than being cut silently.
//
// Hosts the operator configured (serve --peer, a2aflow agents add, an OAuth2
// token endpoint) are trusted by the use that reaches them
// ([Use.Trusting]): their addresses are not checked, so agents on loopback or
// a private network keep working without opening the allow-list to every
// task. Everything else, including the URLs a trusted agent's card names and
// whatever a task or a model asks for, obeys the policy.
package outbound
