package bench

import (
	"context"
	"testing"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// BenchmarkVisibilityIndexes measures what the lean visibility indexes
// (--temporal-visibility-indexes lean, the default; temporalserver's
// visindexes.go) save against Temporal's full set: two serve processes, one
// of each, run blocking A2A SendMessage to the echo agent and to the router
// delegating to a remote agent ("@ext"), in interleaved rounds, so that load
// elsewhere on the machine hits both alike. Each side's server CPU is its own
// process's. Rows "full / lean" above 1 mean the full set is slower.
func BenchmarkVisibilityIndexes(b *testing.B) {
	remote := fakes.ServeExt(b, &fakes.ExtAgent{}, false)
	ctx := benchContext(b)
	type side struct {
		name string
		pid  int
		a2a  *benchA2A
		del  *benchA2A
	}
	var sides []side
	for _, set := range []string{"lean", "full"} {
		dataDir := b.TempDir()
		harness.AddAgent(b, dataDir, "ext", remote.URL)
		s := harness.StartServe(b, dataDir, "--temporal-visibility-indexes", set)
		sides = append(sides, side{name: set, pid: benchPid(s),
			a2a: newBenchA2A(b, ctx, s.APIURL+"/agents/echo", benchConc),
			del: newBenchA2A(b, ctx, s.APIURL+"/agents/router", benchConc)})
	}
	sum := &benchSummary{}
	var pairs [][2]string
	for _, work := range []string{"echo", "delegation"} {
		for _, m := range benchModes {
			key := work + "/" + m.name
			b.Run(key, func(b *testing.B) {
				ops := make([]benchOp, len(sides))
				pids := make([]int, len(sides))
				for i, sd := range sides {
					ops[i], pids[i] = sd.a2a.echo, sd.pid
					if work == "delegation" {
						ops[i] = sd.del.delegateTo("ext").delegate
					}
				}
				benchWarm(b, ctx, m.conc, ops...)
				b.ResetTimer()
				smps := benchInterleavePids(b, ctx, pids, m.conc, m.round, ops...)
				b.StopTimer()
				for i, smp := range smps {
					smp.report(b, sides[i].name+"-", true)
					sum.set(key+" "+sides[i].name, smp)
				}
				b.ReportMetric(0, "ns/op")
			})
			pairs = append(pairs, [2]string{key + " full", key + " lean"})
		}
	}
	benchPrint(b, sum.table(pairs))
}

// benchInterleavePids is benchInterleave with a server process per op, whose
// CPU time its samples measure.
func benchInterleavePids(b *testing.B, ctx context.Context, pids []int, conc, round int, ops ...benchOp) []benchSample {
	b.Helper()
	smps := make([]benchSample, len(ops))
	for r, done := 0, 0; done < b.N; r++ {
		k := min(round, b.N-done)
		for j := range ops {
			i := (j + r) % len(ops)
			smp, err := benchBlock(ctx, pids[i], k, conc, ops[i])
			if err != nil {
				b.Fatal(err)
			}
			smps[i].add(smp)
		}
		done += k
	}
	return smps
}
