package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/worker"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// How serve, api and worker stop on SIGTERM or SIGINT, within
// --shutdown-timeout of the signal:
//
//  1. The API stops accepting connections (http.Server.Shutdown), ends
//     every open stream at once, cleanly (its client resubscribes to
//     another replica, or to the restarted server: the events wait in the
//     workflow, numbered, so nothing is lost), and lets the requests in
//     flight finish until the deadline; past it, it cuts them.
//  2. The worker stops polling, and its running activities get until the
//     deadline to finish (worker.Options.WorkerStopTimeout); past it, the
//     SDK cancels them and Temporal retries them, on another worker or
//     after the restart.
//  3. serve then stops its embedded Temporal server.
//
// The process exits 0 after a clean stop.

// defaultShutdownTimeout is --shutdown-timeout's default.
const defaultShutdownTimeout = 30 * time.Second

// stopGrace is how long past the deadline a2aflow still waits for the
// worker: after its WorkerStopTimeout the SDK cancels the activities left
// and reports them, which takes a moment.
const stopGrace = 5 * time.Second

// lifecycle holds the flags of how a server process stops and reports its
// health (--shutdown-timeout, worker's --health-addr), and the state they
// work on: the shutdown deadline and the worker's.
type lifecycle struct {
	ShutdownTimeout time.Duration
	// HealthAddr is where worker serves /healthz and /readyz (health.go).
	HealthAddr string

	// deadline is the end of the shutdown, set by begin. The command's
	// goroutine alone stops things, one after the other: no lock.
	deadline time.Time
	// worker is the state of the worker this process runs, set by
	// startWorker; nil in api.
	worker *workerState
}

func (l *lifecycle) bind(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).Duration(&l.ShutdownTimeout, "shutdown-timeout", "A2AFLOW_SHUTDOWN_TIMEOUT", defaultShutdownTimeout,
		"on SIGTERM, how long requests in flight and running activities get to finish; open streams end at once (clients resubscribe), and what is left at the deadline is cut, activities cancelled and retried by Temporal")
}

// begin starts the shutdown clock, at the first call, and returns the
// deadline of the whole shutdown.
func (l *lifecycle) begin() time.Time {
	if l.deadline.IsZero() {
		timeout := l.ShutdownTimeout
		if timeout <= 0 {
			timeout = defaultShutdownTimeout
		}
		l.deadline = time.Now().Add(timeout)
	}
	return l.deadline
}

// shutdownHTTP shuts srv down, whose Serve returns into served: open
// streams end at once (draining is closed once the listener is), requests
// in flight get until the deadline.
func (l *lifecycle) shutdownHTTP(srv *http.Server, served <-chan error, draining chan struct{}, logger *slog.Logger) error {
	deadline := l.begin()
	start := time.Now()
	// After the listener closes, so that a client resubscribing at once
	// reaches another replica (or waits for the restart) rather than this
	// server again.
	srv.RegisterOnShutdown(func() { close(draining) })
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("requests still in flight at the shutdown deadline were cut", "shutdown_timeout", l.ShutdownTimeout)
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("API stopped", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// workerOptions sets the worker options of a clean stop: running
// activities get the shutdown timeout to finish, and a fatal error of the
// worker is recorded (readiness, and worker's exit).
func (l *lifecycle) workerOptions(opts worker.Options) worker.Options {
	if l.worker == nil {
		l.worker = newWorkerState()
	}
	opts.WorkerStopTimeout = l.ShutdownTimeout
	if opts.WorkerStopTimeout <= 0 {
		opts.WorkerStopTimeout = defaultShutdownTimeout
	}
	next, state := opts.OnFatalError, l.worker
	opts.OnFatalError = func(err error) {
		state.fail(err)
		if next != nil {
			next(err)
		}
	}
	return opts
}

// workerStarted records that the worker polls.
func (l *lifecycle) workerStarted() {
	if l.worker != nil {
		l.worker.set(workerRunning)
	}
}

// stopWorker runs stop, the worker's Stop, and waits for it until the
// shutdown deadline (and stopGrace): running activities finish or are
// cancelled by the SDK at its WorkerStopTimeout.
func (l *lifecycle) stopWorker(stop func(), logger *slog.Logger) {
	if l.worker != nil {
		l.worker.set(workerStopping)
	}
	deadline := l.begin()
	start := time.Now()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
		logger.Info("worker stopped", "took", time.Since(start).Round(time.Millisecond))
	case <-time.After(time.Until(deadline) + stopGrace):
		logger.Warn("the worker did not stop by the shutdown deadline; exiting with activities still running (Temporal retries them after their timeout)",
			"shutdown_timeout", l.ShutdownTimeout)
	}
}

// readinessChecks are the checks a process adds to /readyz: the worker's
// when it runs one (serve).
func (l *lifecycle) readinessChecks() []api.Check {
	if l.worker == nil {
		return nil
	}
	return []api.Check{{Name: "worker", Run: l.worker.check}}
}

// workerFailed is closed when the worker stopped on a fatal error; nil
// (never) without a worker.
func (l *lifecycle) workerFailed() <-chan struct{} {
	if l.worker == nil {
		return nil
	}
	return l.worker.failed
}
