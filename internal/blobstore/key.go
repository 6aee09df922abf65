package blobstore

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadKey is returned (wrapped, with the key) for a key outside the Store
// contract: empty, too long, or with a segment that is empty, "." or "..",
// or holds a byte other than [A-Za-z0-9._-].
var ErrBadKey = errors.New("bad blob key")

// ErrConflict is returned (wrapped) by Put when the key already holds
// different bytes: blobs are immutable.
var ErrConflict = errors.New("blob key already holds different data")

// maxKeyLen bounds a key: S3 allows 1024 bytes for the whole object key,
// prefix included.
const maxKeyLen = 900

// ValidateKey returns nil for a key that every Store accepts, else an error
// wrapping ErrBadKey. Segments starting with "." are refused too, because the
// file store names its temporary files that way.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrBadKey)
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadKey, len(key), maxKeyLen)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" {
			return fmt.Errorf("%w %q: empty segment", ErrBadKey, key)
		}
		if seg[0] == '.' {
			return fmt.Errorf("%w %q: segment %q starts with a dot", ErrBadKey, key, seg)
		}
		for i := 0; i < len(seg); i++ {
			if !keyByte(seg[i]) {
				return fmt.Errorf("%w %q: byte %q not in [A-Za-z0-9._-]", ErrBadKey, key, seg[i])
			}
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}
