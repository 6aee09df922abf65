// Package oauthlogin is a2aflow's outbound OAuth 2.0 as a user: the
// authorization code flow with PKCE (S256) or the device code flow, run
// once by `a2aflow agents login` against the authorization server a remote
// agent's card names (an oauth2 scheme's authorizationCode or deviceCode
// flow, or an openIdConnect discovery URL), and the tokens it gives kept
// sealed in a2aflow's database for the worker's delegation and the CLI.
//
// The protocol is golang.org/x/oauth2's (AuthCodeURL with
// S256ChallengeOption, Exchange with VerifierOption, DeviceAuth and
// DeviceAccessToken, the refresh grant of Config.TokenSource); this package
// adds where the endpoints come from, the loopback redirect listener, and
// the store.
//
// The Store keeps each login in the oauth_logins table (models.OAuthLogin):
// the client secret, the access token and the refresh token sealed with the
// secrets key (package secrets), each bound to the login's name and field,
// so no token is ever in clear on disk. A login's TokenSource refreshes the
// access token when it expires and stores the rotated refresh token back,
// sealed. Refreshes are serialised across processes (workers sharing the
// database) by a lease taken with a conditional update on the row's
// version: one process redeems the refresh token while the others wait for
// the row to change and read the new access token, so a rotated refresh
// token is never redeemed twice nor lost to a concurrent write.
package oauthlogin
