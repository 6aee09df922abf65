package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/pgtest"
)

// Split is a2aflow as separate processes: `a2aflow temporal`,
// `a2aflow worker` and API replicas, which share nothing but Temporal.
type Split struct {
	t       testing.TB
	Env     []string // every process's environment, added to the test's
	APIURLs []string // the replicas' APIs
	APIs    []*Proc  // the replicas' processes
	// grpcAddrs are the replicas' gRPC binding addresses, when on.
	grpcAddrs []string
	// database is the worker's and the replicas' --database, when set.
	database string
	// Worker is the worker process, started with workerArgs.
	Worker     *Proc
	workerArgs []string
}

// StartSplit starts Temporal, a worker and n API replicas on fresh ports.
func StartSplit(t testing.TB, n int) *Split {
	t.Helper()
	return StartSplitWith(t, n, false)
}

// StartSplitWith is StartSplit, the replicas serving the gRPC binding too
// (--grpc-addr) when withGRPC.
func StartSplitWith(t testing.TB, n int, withGRPC bool) *Split {
	t.Helper()
	return StartSplitDB(t, n, withGRPC, "")
}

// StartSplitDB is StartSplitWith, the worker and the replicas given
// --database database when it is set.
func StartSplitDB(t testing.TB, n int, withGRPC bool, database string) *Split {
	t.Helper()
	dataDir := t.TempDir()
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	// Every process shares the data dir's payload store (as they would share
	// a folder or S3 in production).
	d := &Split{t: t, Env: []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + SecretsKey}}
	tp := Start(t, "a2aflow temporal", d.Env, "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	d.database = database
	workerArgs := []string{"worker", "--data-dir", dataDir}
	if database != "" {
		workerArgs = append(workerArgs, "--database", database)
	}
	d.workerArgs = workerArgs
	d.StartWorker()
	for i := range n {
		d.APIURLs = append(d.APIURLs, fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)))
		if withGRPC {
			d.grpcAddrs = append(d.grpcAddrs, fmt.Sprintf("127.0.0.1:%d", FreePort(t)))
		}
		d.APIs = append(d.APIs, nil)
		d.StartAPI(i)
	}
	return d
}

// StartWorker starts the worker (again, after a kill).
func (d *Split) StartWorker() {
	d.t.Helper()
	d.Worker = Start(d.t, "a2aflow worker", d.Env, d.workerArgs...)
	d.Worker.WaitOutput("a2aflow worker is running", time.Minute)
}

// StartAPI starts API replica i (again, after a kill) on its port.
func (d *Split) StartAPI(i int) {
	d.t.Helper()
	args := []string{"api", "--http-addr", strings.TrimPrefix(d.APIURLs[i], "http://")}
	if len(d.grpcAddrs) > i {
		args = append(args, "--grpc-addr", d.grpcAddrs[i])
	}
	if d.database != "" {
		args = append(args, "--database", d.database)
	}
	p := Start(d.t, fmt.Sprintf("a2aflow api %d", i+1), d.Env, args...)
	p.WaitOutput("a2aflow API is serving", time.Minute)
	WaitHealthy(d.t, d.APIURLs[i])
	d.APIs[i] = p
}

// SQLiteHintsDB returns the path of a new a2aflow SQLite database in a
// folder of its own, short enough for the Unix sockets of its hints
// (package unixhints) whatever the test's name, removed at t's end.
func SQLiteHintsDB(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "a2af")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "a2aflow.db")
}

// Postgres starts a private PostgreSQL server for t (package pgtest,
// from Debian's binaries), stopped at t's end, and returns the URL of a new
// database on it. Without PostgreSQL binaries t is skipped, unless CI=true.
func Postgres(t testing.TB) string {
	t.Helper()
	srv, err := pgtest.Start()
	var missing *pgtest.MissingError
	switch {
	case errors.As(err, &missing) && os.Getenv("CI") != "true":
		t.Skipf("PostgreSQL tests skipped: %v", err)
	case err != nil:
		t.Fatalf("PostgreSQL server for the test: %v", err)
	}
	t.Cleanup(srv.Stop)
	dsn, err := srv.NewDatabase("a2aflow")
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
