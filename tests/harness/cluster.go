package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Cluster is a running scripts/cluster.sh deployment.
type Cluster struct {
	t             testing.TB
	dir           string
	env           []string
	APIURLs       []string // the two `a2aflow api`
	TemporalAddrs []string // the two Temporal server nodes' frontends
	DSN           string   // the PostgreSQL database Temporal keeps its state in
}

// StartCluster brings a cluster up with scripts/cluster.sh on free ports,
// and down when the test ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	// Not t.TempDir: PostgreSQL runs as the postgres user when the test
	// runs as root, and must reach its folder.
	dir, err := os.MkdirTemp("", "a2aflow-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// One run of free ports below the kernel's ephemeral range (32768 on),
	// where outgoing connections do not take them meanwhile.
	base := freePortRun(t, 25)
	ports := map[string]int{
		"CLUSTER_PG_PORT":        base,
		"CLUSTER_API1_PORT":      base + 1,
		"CLUSTER_API2_PORT":      base + 2,
		"CLUSTER_WORKER1_PORT":   base + 3,
		"CLUSTER_WORKER2_PORT":   base + 4,
		"CLUSTER_TEMPORAL1_PORT": base + 5,
		"CLUSTER_TEMPORAL2_PORT": base + 15,
	}
	c := &Cluster{t: t, dir: dir, env: []string{"CLUSTER_DIR=" + dir, "A2AFLOW_BIN=" + binary}}
	for k, v := range ports {
		c.env = append(c.env, fmt.Sprintf("%s=%d", k, v))
	}
	c.APIURLs = []string{fmt.Sprintf("http://127.0.0.1:%d", ports["CLUSTER_API1_PORT"]), fmt.Sprintf("http://127.0.0.1:%d", ports["CLUSTER_API2_PORT"])}
	c.TemporalAddrs = []string{fmt.Sprintf("127.0.0.1:%d", ports["CLUSTER_TEMPORAL1_PORT"]), fmt.Sprintf("127.0.0.1:%d", ports["CLUSTER_TEMPORAL2_PORT"])}
	c.DSN = fmt.Sprintf("postgres://a2aflow@127.0.0.1:%d/a2aflow?sslmode=disable", ports["CLUSTER_PG_PORT"])
	t.Cleanup(func() {
		if out, err := c.script("down"); err != nil {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
		}
		if t.Failed() {
			for _, name := range []string{"temporal1", "temporal2", "worker1", "worker2", "api1", "api2", "postgres"} {
				b, _ := os.ReadFile(filepath.Join(dir, "logs", name+".log"))
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("end of %s.log:\n%s", name, b)
			}
		}
		os.RemoveAll(dir)
	})
	start := time.Now()
	out, err := c.script("up")
	if err != nil {
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	t.Logf("cluster.sh up took %s", time.Since(start).Round(time.Second))
	return c
}

// Kill kill -9s node and returns when.
func (c *Cluster) Kill(node string) time.Time {
	c.t.Helper()
	at := time.Now()
	if out, err := c.script("kill", node); err != nil {
		c.t.Fatalf("cluster.sh kill %s: %v\n%s", node, err, out)
	}
	c.t.Logf("killed %s (kill -9)", node)
	return at
}

// Stop stops node cleanly (PostgreSQL with its fast shutdown, which ends
// every client's session) and returns when it began.
func (c *Cluster) Stop(node string) time.Time {
	c.t.Helper()
	at := time.Now()
	if out, err := c.script("stop", node); err != nil {
		c.t.Fatalf("cluster.sh stop %s: %v\n%s", node, err, out)
	}
	c.t.Logf("stopped %s in %s", node, time.Since(at).Round(10*time.Millisecond))
	return at
}

// Start starts node again and returns how long it took to answer.
func (c *Cluster) Start(node string) time.Duration {
	c.t.Helper()
	at := time.Now()
	if out, err := c.script("start", node); err != nil {
		c.t.Fatalf("cluster.sh start %s: %v\n%s", node, err, out)
	}
	d := time.Since(at).Round(10 * time.Millisecond)
	c.t.Logf("started %s again: ready in %s", node, d)
	return d
}

// script runs scripts/cluster.sh with args against this cluster.
func (c *Cluster) script(args ...string) (string, error) {
	cmd := exec.Command(Repo("scripts/cluster.sh"), args...)
	cmd.Env = append(os.Environ(), c.env...)
	if bin := os.Getenv("CLUSTER_BIN"); bin != "" { // prebuilt Temporal binaries
		cmd.Env = append(cmd.Env, "CLUSTER_BIN="+bin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freePortRun returns the first of n consecutive loopback ports that are free.
func freePortRun(t testing.TB, n int) int {
	t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(12000)
		ok := true
		for p := base; p < base+n && ok; p++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
