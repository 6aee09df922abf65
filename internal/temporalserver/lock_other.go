//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package temporalserver

// dirLock does nothing on systems without flock: there the caller must make
// sure two servers do not share one data folder.
type dirLock struct{}

// lockDataDir always succeeds on systems without flock.
func lockDataDir(string) (*dirLock, error) { return &dirLock{}, nil }

// unlock does nothing.
func (*dirLock) unlock() {}
