package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/secrets"
)

// Errors of the sealer.
var (
	// ErrNoKey: a value is sealed but no key is configured to open it.
	ErrNoKey = errors.New("push credentials are sealed but no secrets key is configured")
	// ErrCannotOpen: a sealed value does not open with the configured keys
	// for its task and config.
	ErrCannotOpen = errors.New("push credentials do not open with the configured secrets keys for this task and config")
)

// v1Prefix marks a value sealed by a2aflow before values were bound to
// their task and config; such values still open.
const v1Prefix = "a2aflow-sealed:v1:"

// KeySize is the length of a secrets key (--secrets-key): AES-256.
const KeySize = secrets.KeySize

// Redacted replaces a config's token and credentials in what the API
// answers: they go to the webhook, never back to a caller.
const Redacted = "[sealed]"

// Sealer encrypts the secrets of push configs (token and credentials)
// before they enter workflow state, so Temporal history and the Web UI show
// ciphertext only. A value is sealed for its task and config ID (AEAD
// associated data): copied into another task's or config's state it does
// not open. The API seals, the worker opens: both need the same keys. The
// first key seals; every key opens (rotation). A nil *Sealer leaves values
// as they are.
type Sealer struct {
	v2 *secrets.Sealer
	v1 []cipher.AEAD // the same keys, for values sealed before v2
}

// NewSealer returns a sealer that seals with keys[0] and opens with any of
// keys, each KeySize bytes.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	v2, err := secrets.NewSealer(keys...)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	s := &Sealer{v2: v2}
	for _, key := range keys {
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("secrets key: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secrets key: %w", err)
		}
		s.v1 = append(s.v1, aead)
	}
	return s, nil
}

// NewKey returns a random key for NewSealer.
func NewKey() []byte { return secrets.NewKey() }

// Seal encrypts v for config configID of task taskID; the empty string and
// a nil sealer leave it unchanged.
func (s *Sealer) Seal(v string, taskID a2a.TaskID, configID string) string {
	if s == nil {
		return v
	}
	return s.v2.Seal(v, sealContext(taskID, configID))
}

// Open decrypts a value Seal returned for the same task and config; a
// value that is not sealed is returned unchanged.
func (s *Sealer) Open(v string, taskID a2a.TaskID, configID string) (string, error) {
	switch {
	case strings.HasPrefix(v, v1Prefix):
		if s == nil {
			return "", ErrNoKey
		}
		return s.openV1(v)
	case !secrets.IsSealed(v):
		return v, nil
	case s == nil:
		return "", ErrNoKey
	}
	plain, err := s.v2.Open(v, sealContext(taskID, configID))
	if err == nil {
		return plain, nil
	}
	if schedule, ok := ScheduleOfRun(taskID); ok {
		// A run of a schedule: the schedule's push config was sealed for
		// the schedule, before any run had an ID.
		if plain, err := s.v2.Open(v, sealContext(a2a.TaskID("schedule/"+schedule), configID)); err == nil {
			return plain, nil
		}
	}
	return "", ErrCannotOpen
}

// scheduleRunRe matches the workflow ID Temporal Schedules give a run: the
// action's workflow ID (the schedule's ID), "-", the run's UTC time.
var scheduleRunRe = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

// ScheduleOfRun returns the schedule ID a task ID of a schedule's run
// starts with. Task IDs the API gives are UUIDs, never of this shape.
func ScheduleOfRun(taskID a2a.TaskID) (string, bool) {
	m := scheduleRunRe.FindStringSubmatch(string(taskID))
	if m == nil {
		return "", false
	}
	return m[1], true
}

func (s *Sealer) openV1(v string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(v, v1Prefix))
	if err != nil {
		return "", ErrCannotOpen
	}
	for _, aead := range s.v1 {
		if len(raw) < aead.NonceSize() {
			continue
		}
		if plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(v1Prefix)); err == nil {
			return string(plain), nil
		}
	}
	return "", ErrCannotOpen
}

// IsSealed reports whether v is a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, v1Prefix) || secrets.IsSealed(v) }

func sealContext(taskID a2a.TaskID, configID string) string {
	return "push:" + string(taskID) + ":" + configID
}
