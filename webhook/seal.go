package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Errors of the sealer.
var (
	// ErrNoKey: a value is sealed but no key is configured to open it.
	ErrNoKey = errors.New("push credentials are sealed but no push key is configured")
	// ErrCannotOpen: a sealed value does not open with the configured key.
	ErrCannotOpen = errors.New("push credentials do not open with the configured push key")
)

// sealedPrefix marks a sealed value, so that values written before a key was
// configured still read as they are.
const sealedPrefix = "a2aflow-sealed:v1:"

// KeySize is the length of a push key: AES-256.
const KeySize = 32

// Sealer encrypts the secrets of push configs (token and credentials) with
// AES-256-GCM before they enter workflow state, so Temporal history and the
// Web UI show ciphertext only. The API seals, the worker opens: both need
// the same key. A nil *Sealer leaves values as they are.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a sealer for a KeySize-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("push key: want %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("push key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("push key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// NewKey returns a random key for NewSealer.
func NewKey() []byte {
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return key
}

// Seal encrypts v; the empty string and a nil sealer leave it unchanged.
func (s *Sealer) Seal(v string) string {
	if s == nil || v == "" {
		return v
	}
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, []byte(v), []byte(sealedPrefix))
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts a value Seal returned; a value that is not sealed is
// returned unchanged.
func (s *Sealer) Open(v string) (string, error) {
	if !IsSealed(v) {
		return v, nil
	}
	if s == nil {
		return "", ErrNoKey
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(v, sealedPrefix))
	if err != nil || len(raw) < s.aead.NonceSize() {
		return "", ErrCannotOpen
	}
	plain, err := s.aead.Open(nil, raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():], []byte(sealedPrefix))
	if err != nil {
		return "", ErrCannotOpen
	}
	return string(plain), nil
}

// IsSealed reports whether v is a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }
