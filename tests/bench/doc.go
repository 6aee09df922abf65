// Package bench holds a2aflow's benchmarks: latency and throughput of the
// real binary against raw Temporal SDK calls on the same server, streams,
// delegation, tools, long conversations, parked tasks, forks and the
// cluster. docs/performance.md gives their figures and how they were
// measured.
//
// Run them with `make bench`; one with
// `go test ./tests/bench -run '^$' -bench BenchmarkSendMessageEcho -benchtime 200x`.
// Without -bench, `go test` builds nothing and runs nothing here.
package bench
