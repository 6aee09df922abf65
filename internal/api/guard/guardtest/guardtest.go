package guardtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The fake identity provider's HS256 secret, and the issuer and audience
// of its tokens (Claims).
const (
	// Secret signs HS256 tokens; 32 bytes or more, as the guard requires.
	Secret = "0123456789abcdef0123456789abcdef-hs256"
	// Issuer is the tokens' "iss": an https URL, so that cards declare
	// its OpenID Connect discovery document.
	Issuer = "https://issuer.test"
	// Audience is the tokens' "aud".
	Audience = "a2aflow-test"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// rsaJWK is pub as a JWK, as an identity provider's JWKS endpoint serves it.
func rsaJWK(kid string, pub *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())}
}

// ecJWK is a P-256 public key as a JWK.
func ecJWK(t *testing.T, kid string, pub *ecdsa.PublicKey) map[string]any {
	t.Helper()
	raw, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
		"x": b64(raw[1:33]), "y": b64(raw[33:65])}
}

// Keys are the signing keys of the fake identity providers.
type Keys struct {
	RSA, RSAOther *rsa.PrivateKey
	EC            *ecdsa.PrivateKey
	JWKSURL       string
	JWKSFile      string
}

// NewKeys serves an RSA JWKS over HTTP and writes a P-256 JWKS file.
func NewKeys(t *testing.T) *Keys {
	t.Helper()
	k := &Keys{}
	var err error
	if k.RSA, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if k.RSAOther, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if k.EC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	rsaSet, _ := json.Marshal(map[string]any{"keys": []any{rsaJWK("rsa-1", &k.RSA.PublicKey)}})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(rsaSet)
	}))
	t.Cleanup(idp.Close)
	k.JWKSURL = idp.URL + "/.well-known/jwks.json"

	ecSet, _ := json.Marshal(map[string]any{"keys": []any{ecJWK(t, "ec-1", &k.EC.PublicKey)}})
	k.JWKSFile = filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(k.JWKSFile, ecSet, 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// Claims returns valid claims for sub, changed by edits.
func Claims(sub string, edits ...func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": sub, "iss": Issuer, "aud": Audience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for _, e := range edits {
		e(c)
	}
	return c
}

// Sign returns the JWT of claims c signed with key by method, its header
// naming kid when not empty.
func Sign(t *testing.T, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Bearer sets a request's Authorization header to the bearer token.
func Bearer(token string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

// APIKey sets a request's API key header (the default, X-API-Key).
func APIKey(key string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("X-API-Key", key) }
}
