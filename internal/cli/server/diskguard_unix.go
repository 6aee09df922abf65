//go:build unix

package server

import "syscall"

// freeBytes returns the bytes an unprivileged writer may still use on the
// file system of dir.
var freeBytes = func(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil //nolint:unconvert // Bsize's type differs by platform
}
