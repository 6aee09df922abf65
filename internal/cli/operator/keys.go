package operator

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cardsign"
)

// newKeysCmd returns `a2aflow keys`: the card signing keys.
func newKeysCmd() *cobra.Command {
	var alg, out string
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Generate a private key that signs agent cards and push notifications (serve/api/worker --card-key)",
		Long: "Generate a private key for signing agent cards (A2A 1.0 §8.4) and push notifications (docs/guides/push-signing.md), as PKCS #8 PEM: Ed25519 (JWS EdDSA, the default) or ES256 (ECDSA P-256).\n" +
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
	root := &cobra.Command{Use: "keys", Short: "Keys that sign agent cards and push notifications"}
	root.AddCommand(gen)
	return root
}
