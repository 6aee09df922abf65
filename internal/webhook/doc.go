// Package webhook holds what the API and the worker share about push
// notification webhooks: which addresses a webhook may reach ([Policy], the
// outbound package's SSRF guard, built from --push-allow-hosts) and how the
// webhook's credentials are kept out of Temporal history ([Sealer]).
//
// The API checks a webhook URL with [Policy.CheckURL] when a push config is
// created, so a forbidden address is refused at once with InvalidParams. The
// worker delivers through an outbound.Client with the same policy, which
// checks the address actually dialed, so neither a DNS answer that changed
// since (rebinding) nor a redirect reaches a forbidden address.
package webhook
