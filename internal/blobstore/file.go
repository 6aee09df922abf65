package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// FileStore is a Store in a folder of the local file system (or a shared
// one, such as NFS, for separate api and worker processes): key "a/b/c" is
// the file <dir>/a/b/c.
//
// A Put writes a temporary file in the key's folder, syncs it, renames it
// into place and syncs the folder, so a blob is either absent or whole, and
// once Put returns it survives a crash of the process or of the machine.
type FileStore struct {
	dir string
}

var _ Store = (*FileStore)(nil)

// NewFileStore returns the store in folder dir, made absolute. The folder is
// created by the first Put, so a store that is only read (such as the Web
// UI's codec) leaves no trace.
func NewFileStore(dir string) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("file blob store: empty folder name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("file blob store %s: %w", dir, err)
	}
	return &FileStore{dir: abs}, nil
}

// Dir returns the store's absolute folder.
func (s *FileStore) Dir() string { return s.dir }

// Describe returns the store's file:// URL.
func (s *FileStore) Describe() string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.dir)}).String()
}

// path returns the file of key, or an error wrapping ErrBadKey.
func (s *FileStore) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

// Put stores data under key. A key that already holds the same bytes is
// left alone; one holding different bytes fails with ErrConflict.
func (s *FileStore) Put(ctx context.Context, key string, data []byte) error {
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch old, err := os.ReadFile(path); {
	case err == nil && bytes.Equal(old, data):
		return nil
	case err == nil:
		return fmt.Errorf("put %s: %w", key, ErrConflict)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("put %s: %w", key, err)
	}
	folder := filepath.Dir(path)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := writeFileAtomic(folder, path, data); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file in folder, syncs it and
// renames it to path, then syncs folder so the rename itself is durable.
func writeFileAtomic(folder, path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(folder, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(folder)
}

// syncDir flushes folder's entries to disk. Windows cannot open a folder for
// syncing; there the rename is as durable as the file system makes it.
func syncDir(folder string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(folder)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", folder, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", folder, err)
	}
	return nil
}

// Get returns the bytes stored under key, or an error wrapping ErrNotFound.
func (s *FileStore) Get(ctx context.Context, key string) ([]byte, error) {
	path, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	// ENOTDIR: a prefix of the key is a blob, so the key holds nothing.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("get %s from %s: %w", key, s.Describe(), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return data, nil
}
