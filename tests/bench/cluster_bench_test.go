package bench

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// BenchmarkTaskCreationClusterVsServe measures task creation, blocking A2A
// SendMessage to the echo agent (each call a new task that completes), on
// the production shape of scripts/cluster.sh — two Temporal server nodes
// sharing PostgreSQL, two `a2aflow worker`, two `a2aflow api`, the calls
// spread over both api nodes — against the embedded default (`a2aflow
// serve`, SQLite), with the same client, interleaved in rounds on this one
// machine. "ratio-tput" above 1 means the cluster creates fewer tasks per
// second than serve.
//
// On one machine the cluster's processes share its cores: the comparison
// says what the production shape costs per task (network hops, PostgreSQL,
// the cluster's membership and shard ownership), not what it gains by
// spreading over machines. It needs PostgreSQL's binaries (Debian's
// postgresql package, as `make cluster` does) and is skipped without them.
func BenchmarkTaskCreationClusterVsServe(b *testing.B) {
	if pg, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(pg) == 0 {
		b.Skip("no PostgreSQL binaries (apt-get install postgresql): the cluster cannot start")
	}
	ctx := benchContext(b)
	s := harness.StartServe(b, b.TempDir())
	serveSide := newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc)

	t0 := time.Now()
	cl := harness.StartCluster(b)
	b.Logf("cluster up in %s", time.Since(t0).Round(time.Second))
	apis := make([]*benchA2A, len(cl.APIURLs))
	for i, u := range cl.APIURLs {
		apis[i] = newBenchA2A(b, ctx, u+"/agents/echo", benchConc)
	}
	// Each call goes to the next api node in turn.
	var turn atomic.Uint64
	clusterEcho := func(ctx context.Context, w int) (time.Duration, error) {
		return apis[turn.Add(1)%uint64(len(apis))].echo(ctx, w)
	}

	sum := &benchSummary{}
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchWarm(b, ctx, m.conc, clusterEcho, serveSide.echo)
			b.ResetTimer()
			// No CPU figures: the cluster is seven processes.
			smps := benchInterleave(b, ctx, 0, m.conc, m.round, clusterEcho, serveSide.echo)
			b.StopTimer()
			c, e := smps[0], smps[1]
			c.report(b, "cluster-", true)
			e.report(b, "serve-", true)
			benchReportRatio(b, c, e, true)
			b.ReportMetric(0, "ns/op")
			sum.set(m.name+" cluster", c)
			sum.set(m.name+" serve", e)
		})
	}
	benchPrint(b, sum.table([][2]string{
		{"seq cluster", "seq serve"},
		{"conc8 cluster", "conc8 serve"},
	}))
}
