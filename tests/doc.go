// Package tests holds a2aflow's end-to-end tests. They build the a2aflow
// binary once, run it as child processes (serve, or temporal + worker + api)
// on free loopback ports and temporary data dirs, and drive it with the
// official a2a-go client and plain HTTP. Durability tests kill the processes
// with SIGKILL and start them again on the same data dir.
//
// Run them with `make test`; `go test ./tests/ -run TestTravel -v` runs one.
package tests
