package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/cardsign"
)

func writeKey(t *testing.T, alg string) (string, *cardsign.Signer) {
	t.Helper()
	pemKey, err := cardsign.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), s.KeyID()+".pem")
	if err := os.WriteFile(path, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// TestWorkerSigningKey: a worker alone takes the card key, the retired
// keys and the public URL its signed notifications name as issuer; it
// refuses a key without that URL, and retired keys without a current one.
func TestWorkerSigningKey(t *testing.T) {
	clearA2AflowEnv(t)
	current, cur := writeKey(t, cardsign.EdDSA)
	previous, prev := writeKey(t, cardsign.ES256)

	_, cfg, err := loadCommand(t, "worker", "--card-key", current, "--card-previous-keys", previous, "--public-url", "https://agents.example")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := cfg.CardKey.signer()
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range signer.JWKS().Keys {
		kids = append(kids, k.KeyID)
	}
	if strings.Join(kids, " ") != cur.KeyID()+" "+prev.KeyID() {
		t.Errorf("key set %v, want the current key then the retired one", kids)
	}
	if again, _ := cfg.CardKey.signer(); again != signer {
		t.Error("the key is read again: the API and the worker of serve would hold two signers")
	}
	if err := cfg.Push.sign(signer, cfg.PublicURL, slog.Default()); err != nil || cfg.Push.activity(nil).Issuer != "https://agents.example" {
		t.Errorf("sign: %v; the activity's issuer %q, want the public URL", err, cfg.Push.activity(nil).Issuer)
	}

	var none pushConfig
	if err := none.sign(signer, "", slog.Default()); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("a key without an issuer: %v, want an error naming --public-url", err)
	}
	_, cfg, err = loadCommand(t, "worker", "--card-previous-keys", previous)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.CardKey.signer(); err == nil || !strings.Contains(err.Error(), "--card-key") {
		t.Errorf("retired keys without a current one: %v, want an error naming --card-key", err)
	}
}
