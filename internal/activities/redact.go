package activities

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// redacted replaces a secret found where it must not be.
const redacted = "[redacted]"

// redactResult returns res without secret: an agent that echoes a
// credential back (in its status message, an artifact) does not put it in
// our task's history. res is returned as is when it does not hold it.
func redactResult(res *wire.RemoteTaskResult, secret string) *wire.RemoteTaskResult {
	if res == nil || secret == "" {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return res
	}
	text := string(raw)
	changed := false
	for _, form := range jsonForms(secret) {
		if strings.Contains(text, form) {
			text, changed = strings.ReplaceAll(text, form, redacted), true
		}
	}
	if !changed {
		return res
	}
	var out wire.RemoteTaskResult
	if json.Unmarshal([]byte(text), &out) != nil {
		// Cannot happen (a string inside a string became another); keep
		// nothing rather than the secret.
		return &wire.RemoteTaskResult{}
	}
	return &out
}

// jsonForms are the ways secret may be written inside a JSON string: as is
// and escaped as encoding/json escapes it.
func jsonForms(secret string) []string {
	forms := []string{secret}
	if raw, err := json.Marshal(secret); err == nil {
		if escaped := string(raw[1 : len(raw)-1]); escaped != secret {
			forms = append(forms, escaped)
		}
	}
	return forms
}

type redactionKey struct{}

// logRedacting returns ctx whose activity logs leave secret out of the
// errors they log (redactionOf): a remote agent's error may quote what it
// was sent.
func logRedacting(ctx context.Context, secret string) context.Context {
	return context.WithValue(ctx, redactionKey{}, secret)
}

// redactionOf is the secret logRedacting put in ctx, or "".
func redactionOf(ctx context.Context) string {
	s, _ := ctx.Value(redactionKey{}).(string)
	return s
}

// redactError returns err with secret replaced in its text, for logs;
// errors.Is and errors.As still see err. (Never return it from an
// activity: Temporal would not see the application error inside.)
func redactError(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, secret: secret}
}

type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.secret, redacted) }
func (e *redactedError) Unwrap() error { return e.err }
