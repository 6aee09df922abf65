package tests

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/tests/harness"
)

func getBody(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// parseServedCard reads a served card (1.0 and 0.3 fields side by side) as
// a2a-go's clients do.
func parseServedCard(t *testing.T, raw []byte) *a2a.AgentCard {
	t.Helper()
	card, err := a2av0.NewAgentCardParser()(raw)
	if err != nil {
		t.Fatalf("parse card: %v\n%s", err, raw)
	}
	return card
}

// TestSignedCards: `a2aflow keys generate` makes a key, `serve --card-key`
// signs every card with it (A2A 1.0 §8.4: JWS over the JCS form) and serves
// the public key at /.well-known/jwks.json, which the signature's jku names;
// `a2aflow card URL --verify` accepts the cards. A card edited by one byte,
// a wrong key under the right kid and a key set without the kid do not
// verify.
func TestSignedCards(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "card-key.pem")
	wantRun(t, runCLI(t, "keys", "generate", "--out", keyFile), 0, "EdDSA key ")
	otherFile := filepath.Join(dir, "other-key.pem")
	wantRun(t, runCLI(t, "keys", "generate", "--alg", "ES256", "--out", otherFile), 0, "ES256 key ")

	s := harness.StartServe(t, filepath.Join(dir, "data"), "--card-key", keyFile)
	for _, agentURL := range []string{s.APIURL, s.APIURL + "/agents/report"} {
		wantRun(t, runCLI(t, "card", agentURL, "--verify"), 0, "Signature verified: EdDSA key ", s.APIURL+"/.well-known/jwks.json")
	}

	code, rawKeys := getBody(t, s.APIURL+"/.well-known/jwks.json")
	if code != http.StatusOK {
		t.Fatalf("GET /.well-known/jwks.json: %d %s", code, rawKeys)
	}
	keys, err := cardsign.ParseJWKS(rawKeys)
	if err != nil || len(keys.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", rawKeys, err)
	}
	code, raw := getBody(t, s.APIURL+"/agents/report/.well-known/agent-card.json")
	if code != http.StatusOK {
		t.Fatalf("card: %d %s", code, raw)
	}
	if _, err := cardsign.Verify(parseServedCard(t, raw), keys); err != nil {
		t.Fatalf("the served card does not verify: %v\n%s", err, raw)
	}

	edited := bytes.Replace(raw, []byte(`"report"`), []byte(`"repprt"`), 1)
	if bytes.Equal(edited, raw) {
		t.Fatal("the edit did not apply")
	}
	if _, err := cardsign.Verify(parseServedCard(t, edited), keys); !errors.Is(err, cardsign.ErrBadSignature) {
		t.Errorf("a card edited by one byte: %v, want ErrBadSignature", err)
	}

	other, err := cardsign.NewSigner(mustRead(t, otherFile))
	if err != nil {
		t.Fatal(err)
	}
	wrong := other.JWKS()
	wrong.Keys[0].KeyID = keys.Keys[0].KeyID
	if _, err := cardsign.Verify(parseServedCard(t, raw), wrong); !errors.Is(err, cardsign.ErrBadSignature) {
		t.Errorf("a wrong key under the card's kid: %v, want ErrBadSignature", err)
	}
	if _, err := cardsign.Verify(parseServedCard(t, raw), other.JWKS()); !errors.Is(err, cardsign.ErrUnknownKey) {
		t.Errorf("a key set without the card's kid: %v, want ErrUnknownKey", err)
	}

	// The genuine signed card copied to another host does not verify
	// there: its jku is not on that host, so nothing ties the key to it.
	copied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	defer copied.Close()
	wantRun(t, runCLI(t, "card", copied.URL, "--verify"), 1, "does not verify", "not on the card's origin")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
