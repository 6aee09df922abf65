// Package harness runs a2aflow for the end-to-end tests (package tests) and
// the benchmarks (package bench): Main builds the binary in a package's
// TestMain; StartServe, StartSplit and StartCluster run it as `serve`, as
// separate temporal, worker and api processes, or as scripts/cluster.sh's
// cluster, on free loopback ports, stopped when the test ends; NewClient,
// ClientsOver and StreamClient make a2a-go clients of it; Send, Subscribe
// and StreamLive drive its tasks.
//
// It is test code in ordinary files, so that both packages can import it;
// nothing outside tests/ should.
package harness
