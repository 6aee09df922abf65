// Package cardsign holds a2aflow's signing key. It signs and verifies A2A
// agent cards as A2A 1.0 §8.4 specifies: a JWS (RFC 7515) with a detached payload, the card's JSON
// canonicalized with JCS (RFC 8785) after its signatures are taken out, and
// a protected header carrying alg, typ "JOSE", kid and jku (the URL of the
// JWKS holding the public key).
//
// The payload is the card's A2A 1.0 JSON as a2a-go writes a2a.AgentCard
// (fields left at their zero value are omitted, as the spec's
// default-value rule asks). A verifier parses the card it got into
// a2a.AgentCard and signs nothing else: the 0.3 compatibility fields a2aflow
// serves next to the 1.0 ones are not covered, which is what a 1.0 client
// reads anyway.
//
// The same key signs the JWT each push notification carries ([Signer.SignJWT],
// checked by package pushverify), so a receiver finds every key a2aflow signs
// with in the one key set at /.well-known/jwks.json. Keys retired by a
// rotation stay in that set ([Signer.Retain]) for as long as the operator
// lists them, so what they signed still verifies.
//
// JWS is go-jose's, JCS gowebpki/jcs's, JWT golang-jwt's: no cryptography is
// written here.
package cardsign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/gowebpki/jcs"
)

// Algorithms a2aflow signs with: Ed25519 (JWS "EdDSA") and ECDSA P-256
// with SHA-256 (JWS "ES256").
const (
	EdDSA = string(jose.EdDSA)
	ES256 = string(jose.ES256)
)

// Errors of Verify.
var (
	// ErrUnsigned: the card has no signature.
	ErrUnsigned = errors.New("the card has no signature")
	// ErrUnknownKey: no signature names a key (kid) of the key set.
	ErrUnknownKey = errors.New("no signature is by a key of the key set")
	// ErrBadSignature: a signature by a known key does not match the card.
	ErrBadSignature = errors.New("the signature does not match the card")
)

// Signer signs cards and push notification tokens with one private key, and
// publishes its public key with those of retired keys.
type Signer struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm
	kid string
	// retired are the public keys of earlier signing keys, served in the
	// JWKS after the current one (Retain).
	retired []jose.JSONWebKey
}

// GenerateKey returns a new private key for alg (EdDSA, "Ed25519" or
// ES256) as a PKCS #8 PEM block.
func GenerateKey(alg string) ([]byte, error) {
	var key any
	var err error
	switch strings.ToUpper(alg) {
	case "EDDSA", "ED25519", "":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("unknown algorithm %q: use Ed25519 or ES256", alg)
	}
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// NewSigner reads a PEM private key (PKCS #8, or SEC 1 "EC PRIVATE KEY"):
// Ed25519 signs EdDSA, ECDSA P-256 signs ES256. The key ID is the key's
// RFC 7638 thumbprint, so it changes with the key and needs no setting.
func NewSigner(pemKey []byte) (*Signer, error) {
	key, err := parseKey(pemKey)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the card signing key is a public key: give the private key (a2aflow keys generate)")
	}
	s := &Signer{key: signer}
	if s.alg, s.kid, err = describe(signer.Public()); err != nil {
		return nil, err
	}
	return s, nil
}

// parseKey reads a PEM key: private (PKCS #8, or SEC 1 "EC PRIVATE KEY") or
// public (PKIX "PUBLIC KEY"), Ed25519 or ECDSA P-256.
func parseKey(pemKey []byte) (any, error) {
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return nil, errors.New("the card signing key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("the card signing key: %w", err)
	}
	switch k := key.(type) {
	case ed25519.PrivateKey, ed25519.PublicKey:
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("the card signing key is an ECDSA key not on P-256: ES256 needs P-256")
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("the card signing key is an ECDSA key not on P-256: ES256 needs P-256")
		}
	default:
		return nil, fmt.Errorf("the card signing key is a %T: use an Ed25519 or ECDSA P-256 key (a2aflow keys generate)", key)
	}
	return key, nil
}

// describe returns the JWS algorithm of a public key and its key ID: the
// key's RFC 7638 thumbprint, so it changes with the key and needs no setting.
func describe(pub crypto.PublicKey) (jose.SignatureAlgorithm, string, error) {
	alg := jose.EdDSA
	if _, ok := pub.(*ecdsa.PublicKey); ok {
		alg = jose.ES256
	}
	thumb, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", "", err
	}
	return alg, base64.RawURLEncoding.EncodeToString(thumb), nil
}

// Retain adds retired signing keys to the key set: their public halves are
// served in JWKS after the current key, so the cards and push notification
// tokens they signed before a rotation still verify. Each is a PEM key,
// private or public ("PUBLIC KEY"); only its public half is kept. The
// current key and keys already retained are skipped.
func (s *Signer) Retain(pemKeys ...[]byte) error {
	for i, pemKey := range pemKeys {
		key, err := parseKey(pemKey)
		if err != nil {
			return fmt.Errorf("retired key %d: %w", i+1, err)
		}
		var pub crypto.PublicKey = key
		if signer, ok := key.(crypto.Signer); ok {
			pub = signer.Public()
		}
		alg, kid, err := describe(pub)
		if err != nil {
			return fmt.Errorf("retired key %d: %w", i+1, err)
		}
		if kid == s.kid || slices.ContainsFunc(s.retired, func(k jose.JSONWebKey) bool { return k.KeyID == kid }) {
			continue
		}
		s.retired = append(s.retired, jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: string(alg), Use: "sig"})
	}
	return nil
}

// KeyID returns the kid of the signer's key.
func (s *Signer) KeyID() string { return s.kid }

// Algorithm returns the JWS algorithm the signer uses.
func (s *Signer) Algorithm() string { return string(s.alg) }

// JWKS returns the public key set to serve at /.well-known/jwks.json: the
// current key, then the retired ones (Retain).
func (s *Signer) JWKS() jose.JSONWebKeySet {
	keys := []jose.JSONWebKey{{Key: s.key.Public(), KeyID: s.kid, Algorithm: string(s.alg), Use: "sig"}}
	return jose.JSONWebKeySet{Keys: append(keys, s.retired...)}
}

// SignJWT returns claims as a compact JWT signed with the current key, its
// header naming the key (kid) and, when typ is not empty, the token's type
// (RFC 8725 §3.11 explicit typing, so that a token minted for one purpose
// cannot pass for another).
func (s *Signer) SignJWT(claims jwt.Claims, typ string) (string, error) {
	method := jwt.SigningMethod(jwt.SigningMethodEdDSA)
	if s.alg == jose.ES256 {
		method = jwt.SigningMethodES256
	}
	token := jwt.NewWithClaims(method, claims)
	token.Header["kid"] = s.kid
	if typ != "" {
		token.Header["typ"] = typ
	}
	signed, err := token.SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("sign JWT: %w", err)
	}
	return signed, nil
}

// Payload returns the bytes a card's signature covers: the card without
// its signatures, as A2A 1.0 JSON, canonicalized with JCS (RFC 8785).
func Payload(card *a2a.AgentCard) ([]byte, error) {
	unsigned := *card
	unsigned.Signatures = nil
	raw, err := json.Marshal(&unsigned)
	if err != nil {
		return nil, fmt.Errorf("card %s as JSON: %w", card.Name, err)
	}
	return jcs.Transform(raw)
}

// Sign returns card's signature, naming jku (the URL of the JWKS) in its
// protected header when it is not empty.
func (s *Signer) Sign(card *a2a.AgentCard, jku string) (a2a.AgentCardSignature, error) {
	payload, err := Payload(card)
	if err != nil {
		return a2a.AgentCardSignature{}, err
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE")
	if jku != "" {
		opts = opts.WithHeader("jku", jku)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: jose.JSONWebKey{Key: s.key, KeyID: s.kid}}, opts)
	if err != nil {
		return a2a.AgentCardSignature{}, err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("sign card %s: %w", card.Name, err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return a2a.AgentCardSignature{}, err
	}
	protected, signature, ok := strings.Cut(compact, "..")
	if !ok {
		return a2a.AgentCardSignature{}, fmt.Errorf("sign card %s: unexpected JWS form", card.Name)
	}
	return a2a.AgentCardSignature{Protected: protected, Signature: signature}, nil
}

// Header is the protected header of a card signature.
type Header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ,omitempty"`
	Kid string `json:"kid"`
	JKU string `json:"jku,omitempty"`
}

// ParseHeader decodes a signature's protected header.
func ParseHeader(sig a2a.AgentCardSignature) (Header, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		return Header{}, fmt.Errorf("protected header is not base64url: %w", err)
	}
	var h Header
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, fmt.Errorf("protected header is not JSON: %w", err)
	}
	return h, nil
}

// Verify checks card's signatures against keys and returns the header of
// the first one that verifies. It fails with ErrUnsigned, ErrUnknownKey
// (no signature by a key of keys) or ErrBadSignature (wrapped, with the
// key), never trusting a key the card names but keys lacks.
func Verify(card *a2a.AgentCard, keys jose.JSONWebKeySet) (Header, error) {
	if len(card.Signatures) == 0 {
		return Header{}, ErrUnsigned
	}
	payload, err := Payload(card)
	if err != nil {
		return Header{}, err
	}
	var firstErr error
	for _, sig := range card.Signatures {
		h, err := ParseHeader(sig)
		if err != nil {
			firstErr = errors.Join(firstErr, err)
			continue
		}
		found := keys.Key(h.Kid)
		if h.Kid == "" || len(found) == 0 {
			continue
		}
		obj, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, payload,
			[]jose.SignatureAlgorithm{jose.EdDSA, jose.ES256, jose.RS256, jose.PS256, jose.ES384})
		if err != nil {
			firstErr = errors.Join(firstErr, fmt.Errorf("%w: key %s: %v", ErrBadSignature, h.Kid, err))
			continue
		}
		for _, k := range found {
			if k.Algorithm != "" && k.Algorithm != h.Alg {
				continue
			}
			if _, err := obj.Verify(k.Public()); err == nil {
				return h, nil
			}
		}
		firstErr = errors.Join(firstErr, fmt.Errorf("%w (key %s)", ErrBadSignature, h.Kid))
	}
	if firstErr != nil {
		return Header{}, firstErr
	}
	return Header{}, ErrUnknownKey
}

// ParseJWKS reads a JSON Web Key Set.
func ParseJWKS(raw []byte) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&set); err != nil {
		return set, fmt.Errorf("JWKS: %w", err)
	}
	return set, nil
}

// VerifyAt checks the signature of card, fetched from the agent at
// baseURL, against the key set its jku names, fetched with hc. The jku
// must be on the card's own origin: a key set anywhere else could be
// anybody's, and would prove nothing about this card.
func VerifyAt(ctx context.Context, hc *http.Client, baseURL string, card *a2a.AgentCard) (Header, error) {
	if len(card.Signatures) == 0 {
		return Header{}, ErrUnsigned
	}
	h, err := ParseHeader(card.Signatures[0])
	if err != nil {
		return h, err
	}
	if h.JKU == "" {
		return h, errors.New("the signature names no key set (jku)")
	}
	jku, err := url.Parse(h.JKU)
	if err != nil {
		return h, fmt.Errorf("jku %q: %w", h.JKU, err)
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return h, err
	}
	if jku.Scheme != base.Scheme || jku.Host != base.Host {
		return h, fmt.Errorf("jku %s is not on the card's origin %s://%s: its keys prove nothing about this card", h.JKU, base.Scheme, base.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.JKU, nil)
	if err != nil {
		return h, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return h, fmt.Errorf("key set %s: %w", h.JKU, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return h, fmt.Errorf("key set %s: %w", h.JKU, err)
	}
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("key set %s: HTTP %d", h.JKU, resp.StatusCode)
	}
	keys, err := ParseJWKS(raw)
	if err != nil {
		return h, fmt.Errorf("key set %s: %w", h.JKU, err)
	}
	return Verify(card, keys)
}
