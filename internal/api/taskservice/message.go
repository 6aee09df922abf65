package taskservice

import (
	"fmt"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// ValidateSendMessageRequest refuses malformed messages before they reach
// Temporal; the workflow's update validator checks them again against the
// task's state.
func ValidateSendMessageRequest(req *a2a.SendMessageRequest) error {
	invalid := func(format string, args ...any) error {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
	}
	m := req.Message
	switch {
	case m == nil:
		return invalid("message is required")
	case m.ID == "":
		return invalid("message.messageId is required")
	case len(m.ID) > 256:
		return invalid("message.messageId is longer than 256 bytes")
	case m.Role != a2a.MessageRoleUser:
		return invalid("message.role must be ROLE_USER")
	case len(m.Parts) == 0:
		return invalid("message.parts must not be empty")
	case req.Config != nil && req.Config.HistoryLength != nil && *req.Config.HistoryLength < 0:
		return invalid("configuration.historyLength must not be negative")
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalid("message.parts[%d] has no content", i)
		}
		if !utf8.ValidString(p.Text()) {
			return invalid("message.parts[%d].text is not valid UTF-8", i)
		}
		if data, ok := p.Data().(map[string]any); ok && data[wire.CredentialRefKey] != nil {
			// A reference is what the server puts in place of a secret it
			// sealed (takeCredential): one a caller wrote would point a
			// waiting task at a credential it was not given for.
			return invalid("message.parts[%d] carries a credential reference (%q), which only the server sets: send the credential itself, as the message's text or a data part {%q: \"...\"}",
				i, wire.CredentialRefKey, wire.CredentialSecretKey)
		}
	}
	return nil
}
