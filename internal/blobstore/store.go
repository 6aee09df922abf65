package blobstore

import (
	"context"
	"errors"
)

// ErrNotFound is returned (wrapped) by Store.Get for a key that holds nothing.
var ErrNotFound = errors.New("blob not found")

// Store keeps immutable blobs by key, outside Temporal history: the payloads
// over the external-storage threshold (claim check) and the pages of task
// message history that no longer fit in a task workflow's state.
//
// Keys are slash-separated paths of [A-Za-z0-9._-] segments, e.g.
// "default/tasks/<task ID>/history/00000001.json". Put is idempotent: putting
// the same key again with the same bytes succeeds; writers never put
// different bytes under one key. Implementations are safe for concurrent use.
type Store interface {
	// Put stores data under key, replacing nothing that differs.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the bytes stored under key, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Describe names the store for people, e.g. "file:///var/lib/a2aflow/blobs"
	// or "s3://bucket/prefix"; never with credentials.
	Describe() string
}
