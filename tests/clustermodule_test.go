package tests

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestClusterModuleInStep: deploy/cluster (the Temporal server command
// `make cluster-test` builds) requires every module it shares with the root
// at the root's version. Where they differ, the cluster's build compiles
// Temporal's server and its clients a second time (minutes of every CI run),
// and the cluster runs other code than the embedded server.
func TestClusterModuleInStep(t *testing.T) {
	root, cluster := requires(t, "../go.mod"), requires(t, "../deploy/cluster/go.mod")
	if cluster["go.temporal.io/server"] == "" && root["go.temporal.io/server"] == "" {
		t.Fatal("neither go.mod requires go.temporal.io/server: wrong files?")
	}
	for path, v := range cluster {
		if rv, ok := root[path]; ok && rv != v {
			t.Errorf("deploy/cluster requires %s %s, the root %s: in deploy/cluster, go get %s@%s && go mod tidy", path, v, rv, path, rv)
		}
	}
}

// requires reads a go.mod's require directives: module path to version.
func requires(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			in = true
			continue
		case in && line == ")":
			in = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !in:
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(f[0], "//") {
			out[f[0]] = f[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
