package demo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/pgtest"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// bookTrip runs BookTrip as the worker runs it: in an activity whose
// context carries the worker's database (workerenv).
func bookTrip(t *testing.T, store *models.Store, in BookTripInput) (*Booking, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: workerenv.With(context.Background(), &workerenv.Env{DB: store.DB()})})
	env.RegisterActivity(BookTrip)
	v, err := env.ExecuteActivity(BookTrip, in)
	if err != nil {
		return nil, err
	}
	var b Booking
	return &b, v.Get(&b)
}

// TestBookTripOnce: a retried booking (the same task and activity) finds the
// booking the first attempt made, on SQLite and PostgreSQL, also after the
// database was opened again; the table is the demo's own, created on first
// use in a2aflow's database.
func TestBookTripOnce(t *testing.T) {
	dsns := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "a2aflow.db") },
		"postgres": func(t *testing.T) string {
			dsn, err := pgServer(t).NewDatabase(strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_"))
			if err != nil {
				t.Fatal(err)
			}
			return dsn
		},
	}
	for name, newDSN := range dsns {
		t.Run(name, func(t *testing.T) {
			dsn := newDSN(t)
			store, err := models.Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			if store.DB().Migrator().HasTable("bookings") {
				t.Fatal("a2aflow's database has a bookings table before the demo made one: the core must not know the demo's tables")
			}
			in := BookTripInput{Destination: "Lisbon", Date: "2026-12-01", Travellers: 2}
			first, err := bookTrip(t, store, in)
			if err != nil {
				t.Fatal(err)
			}
			_ = store.Close()
			if store, err = models.Open(dsn); err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			again, err := bookTrip(t, store, in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(first, again, cmpopts.EquateApproxTime(0)); diff != "" {
				t.Errorf("retried booking differs (-want +got):\n%s", diff)
			}
			var n int64
			if err := store.DB().Model(&bookingRow{}).Count(&n).Error; err != nil || n != 1 {
				t.Errorf("%d bookings (%v), want 1", n, err)
			}
		})
	}
}

// TestBookTripOutsideWorker: without the worker's environment the activity
// fails with workerenv.ErrNoEnv rather than booking nowhere.
func TestBookTripOutsideWorker(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(BookTrip)
	_, err := env.ExecuteActivity(BookTrip, BookTripInput{Destination: "Lisbon", Date: "2026-12-01", Travellers: 2})
	if err == nil || !strings.Contains(err.Error(), workerenv.ErrNoEnv.Error()) {
		t.Errorf("BookTrip without a worker = %v, want %v", err, workerenv.ErrNoEnv)
	}
}

var pg struct {
	once   sync.Once
	server *pgtest.Server
	err    error
}

// pgServer returns the package's PostgreSQL server, started on first use;
// without PostgreSQL binaries the test skips, unless CI=true.
func pgServer(t *testing.T) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() { pg.server, pg.err = pgtest.Start() })
	var missing *pgtest.MissingError
	switch {
	case errors.As(pg.err, &missing) && os.Getenv("CI") != "true":
		t.Skipf("PostgreSQL tests skipped: %v", pg.err)
	case pg.err != nil:
		t.Fatalf("PostgreSQL server for the tests: %v", pg.err)
	}
	return pg.server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.server != nil {
		pg.server.Stop()
	}
	os.Exit(code)
}
