// Package tests holds a2aflow's end-to-end tests. They build the a2aflow
// binary once, run it as child processes (serve, or temporal + worker + api)
// on free loopback ports and temporary data dirs, and drive it with the
// official a2a-go client, the other SDKs' clients and plain HTTP.
// Durability tests kill the processes with SIGKILL and start them again on
// the same data dir.
//
// What the tests share with the benchmarks is in two packages of their
// own: harness (the binary, its processes and deployments, the A2A
// clients) and fakes (remote A2A agents and OpenAI-compatible models).
// The benchmarks are in package bench.
//
// Run them with `make test`; `go test ./tests/ -run TestTravel -v` runs one.
package tests
