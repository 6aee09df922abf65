//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package temporalserver

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// dirLock is an exclusive flock on a file of the data folder, so that two
// servers never share one database. The kernel drops it when the process
// dies, so a crash leaves no stale lock behind.
type dirLock struct {
	f *os.File
}

// lockDataDir takes the lock at path without waiting.
func lockDataDir(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: the data folder is used by another Temporal server", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// unlock releases the lock; it is safe on a nil lock and more than once.
func (l *dirLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}
