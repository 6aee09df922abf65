package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"
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

// newKeysCmd returns `a2aflow keys`: the card signing keys.
func newKeysCmd() *cobra.Command {
	var alg, out string
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Generate a private key that signs agent cards (serve/api --card-key)",
		Long: "Generate a private key for signing agent cards (A2A 1.0 §8.4), as PKCS #8 PEM: Ed25519 (JWS EdDSA, the default) or ES256 (ECDSA P-256).\n" +
			"It is written to --out (mode 0600), else to stdout; its key ID (kid) goes to stderr.\n\n" +
			"  a2aflow keys generate --out card-key.pem\n  a2aflow serve --card-key card-key.pem",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pemKey, err := cardsign.GenerateKey(alg)
			if err != nil {
				return err
			}
			s, err := cardsign.NewSigner(pemKey)
			if err != nil {
				return err
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(pemKey)
			} else {
				err = os.WriteFile(out, pemKey, 0o600)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s key %s\n", s.Algorithm(), s.KeyID())
			return nil
		},
	}
	gen.Flags().StringVar(&alg, "alg", "Ed25519", "Ed25519 or ES256")
	gen.Flags().StringVar(&out, "out", "", "file to write the key to (mode 0600); default stdout")
	root := &cobra.Command{Use: "keys", Short: "Keys that sign agent cards"}
	root.AddCommand(gen)
	return root
}

// verifyCard checks card's signature (fetched from cardURL) against the key
// set its jku names, on the card's own origin (cardsign.VerifyAt).
func verifyCard(ctx context.Context, hc *http.Client, cardURL string, card *a2a.AgentCard) (cardsign.Header, error) {
	return cardsign.VerifyAt(ctx, hc, cardURL, card)
}

// bindRequireSignedPeers binds --require-signed-peers.
func bindRequireSignedPeers(fs *pflag.FlagSet, v *bool) {
	cmdutil.Bind(fs).Bool(v, "require-signed-peers", "A2AFLOW_REQUIRE_SIGNED_PEERS", false,
		"delegate only to remote agents whose card carries a signature that verifies against the key set its jku names on the card's own origin")
}
