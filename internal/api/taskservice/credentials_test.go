package taskservice

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestSendMessageRefusesCredentialReferences: a credential reference is
// the server's to write, in place of the secret it sealed; a caller's is
// refused with InvalidParams, saying how to send the credential.
func TestSendMessageRefusesCredentialReferences(t *testing.T) {
	for name, parts := range map[string]a2a.ContentParts{
		"a reference":                {a2a.NewDataPart(map[string]any{wire.CredentialRefKey: "cred-0123", "service": "github"})},
		"a reference after the text": {a2a.NewTextPart("here"), a2a.NewDataPart(map[string]any{wire.CredentialRefKey: 5})},
	} {
		t.Run(name, func(t *testing.T) {
			err := ValidateSendMessageRequest(&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)})
			if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "only the server sets") {
				t.Errorf("err = %v, want InvalidParams saying only the server sets it", err)
			}
		})
	}
	for name, parts := range map[string]a2a.ContentParts{
		"the secret as text":      {a2a.NewTextPart("ghp_secret")},
		"the secret as data part": {a2a.NewDataPart(map[string]any{wire.CredentialSecretKey: "ghp_secret"})},
	} {
		if err := ValidateSendMessageRequest(&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
