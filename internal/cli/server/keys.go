package server

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// cardKeyConfig is the key serve, api and worker sign with: the api signs
// agent cards and serves the key set, the worker signs push notifications.
type cardKeyConfig struct {
	// File is --card-key: a PEM private key file (Ed25519 or ECDSA P-256).
	File string
	// Previous is --card-previous-keys: PEM files of keys retired by a
	// rotation, private or public, whose public halves the key set keeps.
	Previous []string

	// loaded is the signer, read once (signer) for the API and the worker
	// of one process.
	loaded  *cardsign.Signer
	loadErr error
	read    bool
}

// cardKeyEnv holds the PEM key itself, for deployments that pass secrets
// in the environment rather than in files.
const cardKeyEnv = "A2AFLOW_CARD_KEY"

func (k *cardKeyConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.String(&k.File, "card-key", "A2AFLOW_CARD_KEY_FILE", "",
		"PEM private key (Ed25519 or ECDSA P-256, `a2aflow keys generate`) that signs every agent card and every push notification (a JWT in the A2A-Notification-JWT header), its public key served at /.well-known/jwks.json; "+
			"or the PEM itself in "+cardKeyEnv+"; give api and worker the same key")
	b.StringSlice(&k.Previous, "card-previous-keys", "A2AFLOW_CARD_PREVIOUS_KEYS", nil,
		"PEM files of card keys retired by a rotation (private or public keys), kept in /.well-known/jwks.json so that what they signed still verifies; keep one listed while cards it signed may be cached (push notification tokens live 5 minutes; retries are signed anew with the current key), then drop it; comma-separated")
}

// signer loads the card signing key with the retired ones, or returns nil
// when none is configured.
func (k *cardKeyConfig) signer() (*cardsign.Signer, error) {
	if !k.read {
		k.loaded, k.loadErr = k.load()
		k.read = true
	}
	return k.loaded, k.loadErr
}

func (k *cardKeyConfig) load() (*cardsign.Signer, error) {
	var pemKey []byte
	switch {
	case k.File != "":
		raw, err := os.ReadFile(k.File)
		if err != nil {
			return nil, fmt.Errorf("--card-key: %w", err)
		}
		pemKey = raw
	case os.Getenv(cardKeyEnv) != "":
		pemKey = []byte(os.Getenv(cardKeyEnv))
	default:
		if len(k.Previous) > 0 {
			return nil, fmt.Errorf("--card-previous-keys needs --card-key (or %s): retired keys are served beside the current one", cardKeyEnv)
		}
		return nil, nil
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		return nil, fmt.Errorf("--card-key / %s: %w", cardKeyEnv, err)
	}
	for _, file := range k.Previous {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--card-previous-keys: %w", err)
		}
		if err := s.Retain(raw); err != nil {
			return nil, fmt.Errorf("--card-previous-keys %s: %w", file, err)
		}
	}
	return s, nil
}

// bindRequireSignedPeers binds --require-signed-peers.
func bindRequireSignedPeers(fs *pflag.FlagSet, v *bool) {
	cmdutil.Bind(fs).Bool(v, "require-signed-peers", "A2AFLOW_REQUIRE_SIGNED_PEERS", false,
		"delegate only to remote agents whose card carries a signature that verifies against the key set its jku names on the card's own origin")
}
