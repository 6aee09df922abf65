package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestWorkerVersioning deploys new agent code without breaking parked
// tasks: v1 and v2 of one program (tests/testdata/product, built with
// a2aflow.Main) run as two builds of a Temporal Worker Deployment. Tasks
// parked on v1 stay pinned to v1 although v2 changed the orders agent in a
// way that cannot replay them; new tasks run v2 once it is current; the
// notes agent's parked task (auto-upgrade) moves to v2; v1 then drains.
func TestWorkerVersioning(t *testing.T) {
	v1, v2 := buildVersioned(t, "v1"), buildVersioned(t, "v2")
	if t.Failed() {
		return
	}

	dataDir := t.TempDir()
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	env := []string{"A2AFLOW_LOG_LEVEL=info", "A2AFLOW_DEPLOYMENT=shop"}
	serve := harness.StartProgram(t, v1, "v1 serve", env, "serve", "--http-addr", strings.TrimPrefix(apiURL, "http://"),
		"--temporal-addr", temporalAddr, "--ui-addr", "", "--data-dir", dataDir, "--build-id", "v1",
		// Drainage is checked every 3 minutes by default.
		"--temporal-dynamic-config", "matching.wv.VersionDrainageStatusRefreshInterval=1s",
		"--temporal-dynamic-config", "matching.wv.VersionDrainageStatusVisibilityGracePeriod=1s")
	serve.WaitOutput("a2aflow is serving", 2*time.Minute)
	harness.WaitHealthy(t, apiURL)
	if !strings.Contains(serve.Out.String(), "worker deployment version is current") {
		t.Errorf("the first build did not become the deployment's current version:\n%s", serve.Out.String())
	}

	ctx := harness.Context(t)
	orders, _ := harness.NewClient(t, ctx, apiURL+"/agents/orders")
	notes, _ := harness.NewClient(t, ctx, apiURL+"/agents/notes")
	parked := harness.Send(t, ctx, orders, "", "hello")
	harness.WantState(t, parked, a2a.TaskStateInputRequired, "What should we order?")
	note := harness.Send(t, ctx, notes, "", "hello")
	harness.WantState(t, note, a2a.TaskStateInputRequired, "What should I note?")

	// Deploy v2 next to v1 and make it current.
	key, err := os.ReadFile(filepath.Join(dataDir, "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	w2 := harness.StartProgram(t, v2, "v2 worker", append(env, "A2AFLOW_SECRETS_KEY="+strings.TrimSpace(string(key))),
		"worker", "--temporal-addr", temporalAddr, "--data-dir", dataDir, "--build-id", "v2")
	w2.WaitOutput("a2aflow worker is running", time.Minute)
	if !strings.Contains(w2.Out.String(), "worker deployment has another current version") {
		t.Errorf("v2 took over without an operator step:\n%s", w2.Out.String())
	}
	deployments := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(v2, append(append([]string{"deployments"}, args...), "--deployment", "shop", "--temporal-addr", temporalAddr)...).CombinedOutput()
		if err != nil {
			t.Fatalf("deployments %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := deployments("set-current", "v2"); !strings.Contains(out, "v2 is the current version of shop (was v1)") {
		t.Errorf("set-current printed %q", out)
	}
	if out := deployments("list"); !strings.Contains(out, "shop") || !strings.Contains(out, "v2") {
		t.Errorf("deployments list printed:\n%s", out)
	}

	// New tasks run v2.
	fresh := harness.Send(t, ctx, orders, "", "hello")
	harness.WantState(t, fresh, a2a.TaskStateInputRequired, "What should we order?")
	fresh = harness.Send(t, ctx, orders, fresh.ID, "chairs")
	harness.WantState(t, fresh, a2a.TaskStateCompleted, "v2 ordered chairs")
	// The parked orders task finishes on v1: on v2 it would not replay.
	parked = harness.Send(t, ctx, orders, parked.ID, "desks")
	harness.WantState(t, parked, a2a.TaskStateCompleted, "v1 ordered desks")
	// The notes agent's task follows the current build.
	note = harness.Send(t, ctx, notes, note.ID, "milk")
	harness.WantState(t, note, a2a.TaskStateCompleted, "v2 noted milk")

	// With no task left on v1, it drains: its workers may stop.
	var out string
	waitFor(t, time.Minute, func() bool {
		out = deployments("describe")
		return versionLine(out, "v1", "drained") && versionLine(out, "v2", "current")
	})
	if t.Failed() {
		t.Logf("deployments describe:\n%s", out)
	}
}

// versionLine reports whether `deployments describe` shows build with status.
func versionLine(out, build, status string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == build && f[1] == status {
			return true
		}
	}
	return false
}

// versioned holds the builds of tests/testdata/product, made once for
// the tests that use them.
var versioned struct {
	sync.Mutex
	dir    string
	builds map[string]string
}

// buildVersioned returns tests/testdata/product built as build (v1, v2).
func buildVersioned(t *testing.T, build string) string {
	t.Helper()
	versioned.Lock()
	defer versioned.Unlock()
	if out, ok := versioned.builds[build]; ok {
		return out
	}
	if versioned.dir == "" {
		versioned.dir = filepath.Dir(harness.Binary()) // TestMain's folder, removed at the end
		versioned.builds = map[string]string{}
	}
	// One build; each version is a link to it under its own name, which
	// the program reads (testdata/product).
	one := filepath.Join(versioned.dir, "product")
	if _, err := os.Stat(one); err != nil {
		cmd := exec.Command("go", "build", "-o", one, "./testdata/product")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("build %s: %v\n%s", build, err, b)
			return one
		}
	}
	out := filepath.Join(versioned.dir, "product-"+build)
	if err := os.Link(one, out); err != nil {
		t.Errorf("link %s: %v", out, err)
		return out
	}
	versioned.builds[build] = out
	return out
}
