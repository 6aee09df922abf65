// Package secrets keeps the secrets users hand to a2aflow out of Temporal
// history: webhook tokens and credentials of push configs, and the
// credentials a task asks for in auth-required. DESIGN's rule is that
// history carries the names of credentials, never their values.
//
// A [Sealer] encrypts a value with AES-256-GCM under the first of its keys,
// bound (as AEAD associated data) to what the value belongs to — a task and
// a push config, a task and a credential — so a sealed value copied into
// another task or config does not open. Every key opens what it sealed, so
// keys rotate: put the new key first and keep the old ones until nothing
// sealed with them is left (finished tasks past their retention).
//
// A [CredentialStore] keeps sealed credentials in the payload store
// (package blobstore), where api and worker both reach them; a task holds
// only a reference.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Errors of the sealer.
var (
	// ErrNoKey: a value is sealed but no key is configured to open it.
	ErrNoKey = errors.New("the value is sealed but no key is configured")
	// ErrCannotOpen: a sealed value does not open with the configured keys,
	// or not for the context it is opened for.
	ErrCannotOpen = errors.New("the sealed value does not open with the configured keys for this context")
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// prefix marks a value sealed by this package; the key's ID follows.
const prefix = "a2aflow-sealed:v2:"

// Sealer seals and opens values. Its zero value and a nil *Sealer have no
// key: Seal returns values unchanged and Open opens nothing sealed.
type Sealer struct {
	keys []sealKey // the first seals
}

type sealKey struct {
	id   string // the first 8 bytes of the key's SHA-256, hex
	aead cipher.AEAD
}

// NewSealer returns a sealer that seals with keys[0] and opens with any of
// keys, each KeySize bytes.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("secrets: no key")
	}
	s := &Sealer{}
	for i, key := range keys {
		if len(key) != KeySize {
			return nil, fmt.Errorf("secrets: key %d: want %d bytes, got %d", i+1, KeySize, len(key))
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("secrets: key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secrets: key %d: %w", i+1, err)
		}
		sum := sha256.Sum256(key)
		s.keys = append(s.keys, sealKey{id: hex.EncodeToString(sum[:8]), aead: aead})
	}
	return s, nil
}

// NewKey returns a random key.
func NewKey() []byte {
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return key
}

// Enabled reports whether the sealer has a key.
func (s *Sealer) Enabled() bool { return s != nil && len(s.keys) > 0 }

// Seal encrypts v for context (what v belongs to, e.g. "push:<task>:<config>");
// the empty string, and any value without a key, are returned unchanged.
func (s *Sealer) Seal(v, context string) string {
	if !s.Enabled() || v == "" {
		return v
	}
	k := s.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := k.aead.Seal(nonce, nonce, []byte(v), additional(k.id, context))
	return prefix + k.id + ":" + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts a value Seal returned for the same context; a value that is
// not sealed is returned unchanged.
func (s *Sealer) Open(v, context string) (string, error) {
	if !IsSealed(v) {
		return v, nil
	}
	if !s.Enabled() {
		return "", ErrNoKey
	}
	id, body, ok := strings.Cut(strings.TrimPrefix(v, prefix), ":")
	if !ok {
		return "", ErrCannotOpen
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return "", ErrCannotOpen
	}
	for _, k := range s.keys {
		if k.id != id || len(raw) < k.aead.NonceSize() {
			continue
		}
		plain, err := k.aead.Open(nil, raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():], additional(k.id, context))
		if err != nil {
			return "", ErrCannotOpen
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("%w (sealed with key %s, not configured)", ErrCannotOpen, id)
}

// IsSealed reports whether v is a value this package sealed.
func IsSealed(v string) bool { return strings.HasPrefix(v, prefix) }

func additional(keyID, context string) []byte {
	return []byte(prefix + keyID + "\x00" + context)
}
