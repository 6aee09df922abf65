// Package pushtoken is the wire form of the JWT that signs each push
// notification a2aflow delivers: its header, type, claims and lifetime. The
// delivery activity mints it (internal/activities) with the card signing key
// (cardsign.Signer.SignJWT); package pushverify checks it. Both sides read
// these names from here, so they cannot drift apart.
//
// The claims follow A2A's push notification guidance (the "Example
// Asymmetric Key Flow (JWT + JWKS)" of the streaming and asynchronous
// operations topic: iss, aud, iat, exp, jti and the task ID) and the A2A
// samples' body digest claim, request_body_sha256, here over the exact
// bytes of the body sent.
package pushtoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Header is the HTTP header that carries the token. It is a header of its
// own, not Authorization, because Authorization carries the credentials the
// push config asks for (A2A: the agent MUST send them), and the A2A token
// headers carry the config's token.
const Header = "A2A-Notification-JWT"

// Type is the token's typ header (RFC 8725 §3.11 explicit typing): the card
// key also signs agent cards, and a verifier that checks the type takes no
// other token signed with it for a push notification.
const Type = "a2a-push+jwt"

// Lifetime is how long a token is valid after it is minted. Each attempt to
// deliver an event mints its own, so a retry hours later is as fresh as the
// first attempt.
const Lifetime = 5 * time.Minute

// Claims are the claims of a push notification token.
type Claims struct {
	// Issuer (iss) is the server's public base URL, where
	// /.well-known/jwks.json serves the key; Audience (aud) the webhook URL
	// without its query and fragment, which may hold a secret; ID (jti)
	// random, one per token (per delivery attempt); IssuedAt (iat) and
	// ExpiresAt (exp) Lifetime apart.
	jwt.RegisteredClaims
	// TaskID is the task whose event the body carries.
	TaskID string `json:"taskId"`
	// Seq is the event's number within its task (1, 2, 3...), the same in
	// the body's metadata and the Idempotency-Key header ("{taskId}:{seq}"):
	// every attempt to deliver one event carries the same Seq.
	Seq int64 `json:"seq"`
	// BodySHA256 is the SHA-256 of the exact body bytes sent, lowercase hex.
	BodySHA256 string `json:"request_body_sha256"`
}

// BodySHA256 returns the SHA-256 of body as lowercase hex, the form of the
// request_body_sha256 claim.
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// New returns the claims of one delivery attempt at now: a fresh random jti,
// iat now and exp Lifetime later (whole seconds, as JWT numeric dates are).
func New(issuer, audience, taskID string, seq int64, body []byte, now time.Time) Claims {
	now = now.Truncate(time.Second)
	return Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Audience:  jwt.ClaimStrings{audience},
			ID:        rand.Text(),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(Lifetime)),
		},
		TaskID:     taskID,
		Seq:        seq,
		BodySHA256: BodySHA256(body),
	}
}
