package blobstore

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("NewFileStore created its folder (stat: %v); only Put should", err)
	}
	testStore(t, s)

	// Nothing but the blobs: no temporary file survives a Put.
	var leftovers []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") {
			leftovers = append(leftovers, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), leftovers); diff != "" {
		t.Errorf("temporary files left behind (-want +got):\n%s", diff)
	}
	// Keys are paths below the folder.
	if _, err := os.Stat(filepath.Join(dir, "default", "payloads", "wf-1", "abc")); err != nil {
		t.Errorf("blob of key default/payloads/wf-1/abc: %v", err)
	}
}

func TestFileStorePutFailsInReadOnlyFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	dir := t.TempDir()
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	if err := s.Put(context.Background(), "k", []byte("x")); err == nil {
		t.Error("Put into a read-only folder succeeded")
	}
}
