package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ---- a2aflow as a cluster: `api` and `worker` (two each) against two
// Temporal server nodes on PostgreSQL, brought up by scripts/cluster.sh with
// the bench's agent binary as A2AFLOW_BIN. The turns go to api1; memory is
// every process's but PostgreSQL's backends (the postmaster alone is read).

var clusterNodes = []string{"postgres", "temporal1", "temporal2", "worker1", "worker2", "api1", "api2"}

type clusterPeer struct {
	a2aflowPeer
	script string   // scripts/cluster.sh
	env    []string // the script's settings: its folder, binaries and ports
}

func newClusterPeer(bin, work, repo string, env []string) *clusterPeer {
	// PostgreSQL runs as the postgres user when the bench runs as root:
	// it must reach its folder (os.MkdirTemp makes the bench's 0700).
	_ = os.Chmod(filepath.Dir(work), 0o755)
	_ = os.Chmod(work, 0o755)
	c := &clusterPeer{a2aflowPeer: a2aflowPeer{bin: bin, work: work, env: env}, script: filepath.Join(repo, "scripts", "cluster.sh")}
	// Ports of their own, so a cluster a test runs on the defaults is
	// left alone; a Temporal node takes its port and the nine after it.
	api1 := freePort()
	c.env = append(append([]string{}, env...),
		"A2AFLOW_BIN="+bin,
		"CLUSTER_DIR="+filepath.Join(work, "cluster"),
		"CLUSTER_PG_PORT="+strconv.Itoa(freePort()),
		"CLUSTER_TEMPORAL1_PORT=27233", "CLUSTER_TEMPORAL2_PORT=27333",
		"CLUSTER_API1_PORT="+strconv.Itoa(api1), "CLUSTER_API2_PORT="+strconv.Itoa(freePort()),
		"CLUSTER_WORKER1_PORT="+strconv.Itoa(freePort()), "CLUSTER_WORKER2_PORT="+strconv.Itoa(freePort()))
	if *flagClusterBin != "" {
		abs, _ := filepath.Abs(*flagClusterBin)
		c.env = append(c.env, "CLUSTER_BIN="+abs)
	}
	c.url = fmt.Sprintf("http://127.0.0.1:%d", api1)
	return c
}

func (c *clusterPeer) name() string { return "a2aflow-cluster" }

func (c *clusterPeer) versions() string {
	v := strings.TrimSuffix(c.a2aflowPeer.versions(), " (serve: embedded Temporal, SQLite)")
	return v + " (2 api + 2 worker, 2 Temporal nodes, PostgreSQL)"
}

// run runs the cluster script with args, its output in cluster.log.
func (c *clusterPeer) run(args ...string) error {
	f, err := os.OpenFile(filepath.Join(c.work, "cluster.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("bash", append([]string{c.script}, args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(f.Name())
		s := string(b)
		if len(s) > 800 {
			s = s[len(s)-800:]
		}
		return fmt.Errorf("cluster.sh %s: %v: %s", strings.Join(args, " "), err, s)
	}
	return nil
}

func (c *clusterPeer) start(ctx context.Context) error {
	if c.tasks == nil {
		c.tasks = map[string]string{}
	}
	return c.run("up")
}

func (c *clusterPeer) kill9() {
	for _, n := range clusterNodes {
		_ = c.run("kill", n)
	}
}

func (c *clusterPeer) stop() { _ = c.run("down") }

func (c *clusterPeer) pids() []int {
	var out []int
	for _, n := range clusterNodes {
		b, err := os.ReadFile(filepath.Join(c.work, "cluster", "pids", n+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
