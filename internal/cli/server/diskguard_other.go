//go:build !unix

package server

// freeBytes is nil where a2aflow does not read a file system's free space:
// the data directory is not guarded.
var freeBytes func(dir string) (uint64, error)
