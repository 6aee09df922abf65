package server

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// cardKeyConfig is the key serve and api sign agent cards with.
type cardKeyConfig struct {
	// File is --card-key: a PEM private key file (Ed25519 or ECDSA P-256).
	File string
}

// cardKeyEnv holds the PEM key itself, for deployments that pass secrets
// in the environment rather than in files.
const cardKeyEnv = "A2AFLOW_CARD_KEY"

func (k *cardKeyConfig) bind(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&k.File, "card-key", "A2AFLOW_CARD_KEY_FILE", "",
		"PEM private key (Ed25519 or ECDSA P-256, `a2aflow keys generate`) that signs every agent card, its public key served at /.well-known/jwks.json; "+
			"or the PEM itself in "+cardKeyEnv)
}

// signer loads the card signing key, or returns nil when none is configured.
func (k *cardKeyConfig) signer() (*cardsign.Signer, error) {
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
		return nil, nil
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		return nil, fmt.Errorf("--card-key / %s: %w", cardKeyEnv, err)
	}
	return s, nil
}

// bindRequireSignedPeers binds --require-signed-peers.
func bindRequireSignedPeers(fs *pflag.FlagSet, v *bool) {
	cmdutil.Bind(fs).Bool(v, "require-signed-peers", "A2AFLOW_REQUIRE_SIGNED_PEERS", false,
		"delegate only to remote agents whose card carries a signature that verifies against the key set its jku names on the card's own origin")
}
