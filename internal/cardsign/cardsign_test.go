package cardsign_test

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/cardsign"
)

func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "report", Description: "Writes reports", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface("http://127.0.0.1:8080/agents/report", a2a.TransportProtocolJSONRPC)},
		Capabilities: a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{{
			URI: "https://example.com/ext/v1", Params: map[string]any{"n": 1.5, "é": "ü"},
		}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "write", Name: "Write", Description: "writes", Tags: []string{"report"}}},
	}
}

func signer(t *testing.T, alg string) *cardsign.Signer {
	t.Helper()
	pemKey, err := cardsign.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedJSON returns card signed by s, as the JSON a client receives.
func signedJSON(t *testing.T, s *cardsign.Signer, card *a2a.AgentCard) []byte {
	t.Helper()
	sig, err := s.Sign(card, "http://127.0.0.1:8080/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	signed := *card
	signed.Signatures = []a2a.AgentCardSignature{sig}
	raw, err := json.MarshalIndent(&signed, "", "  ") // whitespace a verifier must not care about
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func received(t *testing.T, raw []byte) *a2a.AgentCard {
	t.Helper()
	var card a2a.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatalf("parse card: %v\n%s", err, raw)
	}
	return &card
}

func TestSignVerify(t *testing.T) {
	for _, alg := range []string{cardsign.EdDSA, cardsign.ES256} {
		t.Run(alg, func(t *testing.T) {
			s := signer(t, alg)
			other := signer(t, alg)
			raw := signedJSON(t, s, testCard())

			h, err := cardsign.Verify(received(t, raw), s.JWKS())
			if err != nil {
				t.Fatalf("a valid card does not verify: %v", err)
			}
			if h.Alg != alg || h.Typ != "JOSE" || h.Kid != s.KeyID() || h.JKU != "http://127.0.0.1:8080/.well-known/jwks.json" {
				t.Errorf("protected header %+v, want alg %s typ JOSE kid %s and the jku", h, alg, s.KeyID())
			}

			// One byte of the description changed: "Writes" -> "Wrotes".
			edited := bytes.Replace(raw, []byte(`"Writes reports"`), []byte(`"Wrotes reports"`), 1)
			if bytes.Equal(edited, raw) {
				t.Fatal("the edit did not apply")
			}
			if _, err := cardsign.Verify(received(t, edited), s.JWKS()); !errors.Is(err, cardsign.ErrBadSignature) {
				t.Errorf("a card edited by one byte: %v, want ErrBadSignature", err)
			}

			// The right kid, the wrong key: a key set that claims the kid
			// with another key.
			wrong := other.JWKS()
			wrong.Keys[0].KeyID = s.KeyID()
			if _, err := cardsign.Verify(received(t, raw), wrong); !errors.Is(err, cardsign.ErrBadSignature) {
				t.Errorf("a wrong key: %v, want ErrBadSignature", err)
			}
			// A key set without the signature's kid.
			if _, err := cardsign.Verify(received(t, raw), other.JWKS()); !errors.Is(err, cardsign.ErrUnknownKey) {
				t.Errorf("an unknown kid: %v, want ErrUnknownKey", err)
			}
			if _, err := cardsign.Verify(testCard(), s.JWKS()); !errors.Is(err, cardsign.ErrUnsigned) {
				t.Errorf("an unsigned card: %v, want ErrUnsigned", err)
			}
		})
	}
}

// TestPayloadIsJCS checks that the signed payload is the RFC 8785 form:
// keys sorted, no whitespace, the signatures left out.
func TestPayloadIsJCS(t *testing.T) {
	card := &a2a.AgentCard{Name: "b", Description: "", Version: "1", Skills: []a2a.AgentSkill{},
		Signatures: []a2a.AgentCardSignature{{Protected: "x", Signature: "y"}}}
	got, err := cardsign.Payload(card)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(got, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["signatures"]; ok {
		t.Errorf("payload keeps the signatures: %s", got)
	}
	if bytes.ContainsAny(got, " \n") {
		t.Errorf("payload has whitespace: %s", got)
	}
	if i, j := bytes.Index(got, []byte(`"name"`)), bytes.Index(got, []byte(`"version"`)); i < 0 || j < 0 || i > j {
		t.Errorf("payload keys are not sorted: %s", got)
	}
}

func TestNewSignerRefuses(t *testing.T) {
	for name, in := range map[string][]byte{
		"not PEM": []byte("hello"),
		"RSA-ish": []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
		"empty":   nil,
	} {
		if _, err := cardsign.NewSigner(in); err == nil {
			t.Errorf("%s: NewSigner accepted it", name)
		}
	}
	if _, err := cardsign.GenerateKey("RS256"); err == nil {
		t.Error("GenerateKey(RS256) accepted an algorithm a2aflow does not sign with")
	}
}

// publicPEM returns the public half of a PEM private key as a PKIX PEM.
func publicPEM(t *testing.T, privatePEM []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(privatePEM)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(key.(crypto.Signer).Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// TestRetain: after a rotation, the new signer's key set still holds the
// retired keys (given as private or as public PEM), after the current one,
// so cards signed before verify; the current key is never listed twice.
func TestRetain(t *testing.T) {
	oldEd, err := cardsign.GenerateKey(cardsign.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	oldEC, err := cardsign.GenerateKey(cardsign.ES256)
	if err != nil {
		t.Fatal(err)
	}
	currentPEM, err := cardsign.GenerateKey(cardsign.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := cardsign.NewSigner(oldEd)
	beforeEC, _ := cardsign.NewSigner(oldEC)
	signedBefore := signedJSON(t, before, testCard())
	signedBeforeEC := signedJSON(t, beforeEC, testCard())

	now, err := cardsign.NewSigner(currentPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := now.Retain(oldEd, publicPEM(t, oldEC), currentPEM, oldEd); err != nil {
		t.Fatalf("Retain: %v", err)
	}
	var kids []string
	for _, k := range now.JWKS().Keys {
		kids = append(kids, k.KeyID+" "+k.Algorithm)
		if !k.IsPublic() {
			t.Errorf("key %s in the JWKS is private", k.KeyID)
		}
	}
	want := []string{now.KeyID() + " EdDSA", before.KeyID() + " EdDSA", beforeEC.KeyID() + " ES256"}
	if diff := cmp.Diff(want, kids); diff != "" {
		t.Errorf("JWKS kids (-want +got):\n%s", diff)
	}
	for name, raw := range map[string][]byte{"EdDSA": signedBefore, "ES256": signedBeforeEC} {
		if _, err := cardsign.Verify(received(t, raw), now.JWKS()); err != nil {
			t.Errorf("a card signed by the retired %s key does not verify against the new key set: %v", name, err)
		}
	}
	if err := now.Retain([]byte("not a key")); err == nil {
		t.Error("Retain accepted a non-PEM key")
	}
	if _, err := cardsign.NewSigner(publicPEM(t, currentPEM)); err == nil {
		t.Error("NewSigner accepted a public key, which cannot sign")
	}
}

// TestSignJWT: a JWT from SignJWT names its key and type and verifies with
// golang-jwt against the public key the key set serves under its kid.
func TestSignJWT(t *testing.T) {
	for _, alg := range []string{cardsign.EdDSA, cardsign.ES256} {
		t.Run(alg, func(t *testing.T) {
			s := signer(t, alg)
			signed, err := s.SignJWT(jwt.MapClaims{"iss": "https://agents.example", "n": 1}, "test+jwt")
			if err != nil {
				t.Fatal(err)
			}
			keys := s.JWKS()
			tok, err := jwt.Parse(signed, func(tok *jwt.Token) (any, error) {
				kid, _ := tok.Header["kid"].(string)
				found := keys.Key(kid)
				if len(found) != 1 {
					return nil, fmt.Errorf("kid %q not in the key set", kid)
				}
				return found[0].Key, nil
			}, jwt.WithValidMethods([]string{alg}), jwt.WithIssuer("https://agents.example"))
			if err != nil {
				t.Fatalf("the JWT does not verify: %v", err)
			}
			if tok.Header["typ"] != "test+jwt" || tok.Header["alg"] != alg {
				t.Errorf("header %v, want typ test+jwt and alg %s", tok.Header, alg)
			}
			other := signer(t, alg)
			forged, _ := other.SignJWT(jwt.MapClaims{"iss": "https://agents.example"}, "test+jwt")
			if _, err := jwt.Parse(forged, func(*jwt.Token) (any, error) { return keys.Keys[0].Key, nil }); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
				t.Errorf("a JWT by another key: %v, want a signature error", err)
			}
		})
	}
}
