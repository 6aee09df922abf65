package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// The worker's health port (--health-addr): the worker serves no API, so
// orchestrators (compose healthchecks, Kubernetes probes) ask it here.
//
//	GET /healthz  liveness: 200 while the process answers
//	GET /readyz   readiness: the worker started and polls ("worker"), and
//	              Temporal answers ("temporal") with the namespace
//	              ("namespace"); 503 names the check that failed
//	GET /metrics  Prometheus series: a2aflow's and the Temporal SDK's
//
// Off by default; nothing but these three routes is served on it.

func (l *lifecycle) bindHealth(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&l.HealthAddr, "health-addr", "A2AFLOW_HEALTH_ADDR", "",
		`serve GET /healthz (liveness) and /readyz (readiness: polling, Temporal reachable) and /metrics (Prometheus) on this address, e.g. ":8081"; empty: off`)
}

// workerPhase is where a worker is in its life.
type workerPhase int32

const (
	workerNotStarted workerPhase = iota
	workerRunning
	workerStopping
	workerFailed
)

// workerState is the state of the worker a process runs, for readiness.
type workerState struct {
	phase atomic.Int32

	mu       sync.Mutex
	err      error // the fatal error, once failed
	failed   chan struct{}
	failOnce sync.Once
}

func newWorkerState() *workerState { return &workerState{failed: make(chan struct{})} }

// set moves the worker to p, unless it failed.
func (s *workerState) set(p workerPhase) {
	for {
		cur := s.phase.Load()
		if workerPhase(cur) == workerFailed || s.phase.CompareAndSwap(cur, int32(p)) {
			return
		}
	}
}

// fail records the fatal error that stopped the worker (the SDK's
// OnFatalError: the namespace is gone, the server refuses the client...).
func (s *workerState) fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.phase.Store(int32(workerFailed))
	s.failOnce.Do(func() { close(s.failed) })
}

// fatal returns the error that stopped the worker, or nil.
func (s *workerState) fatal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// check is the "worker" readiness check.
func (s *workerState) check(context.Context) error {
	switch workerPhase(s.phase.Load()) {
	case workerRunning:
		return nil
	case workerNotStarted:
		return errors.New("the worker has not started yet")
	case workerStopping:
		return errors.New("the worker is stopping")
	default:
		return fmt.Errorf("the worker stopped: %w", s.fatal())
	}
}

// healthServer is worker's health port.
type healthServer struct {
	srv    *http.Server
	served chan error
	// temporal is the client once dialled; until then the Temporal checks
	// fail with "not connected yet".
	temporal atomic.Pointer[client.Client]
}

// serveHealth starts the health port at l.HealthAddr for worker, before it
// dials Temporal, so that liveness answers while it waits; nil when off.
func (l *lifecycle) serveHealth(namespace string, logger *slog.Logger) (*healthServer, error) {
	if l.HealthAddr == "" {
		return nil, nil
	}
	if l.worker == nil {
		l.worker = newWorkerState()
	}
	ln, err := listen(l.HealthAddr, "the worker's health port")
	if err != nil {
		return nil, err
	}
	h := &healthServer{served: make(chan error, 1)}
	temporal := func() (client.Client, error) {
		c := h.temporal.Load()
		if c == nil {
			return nil, errors.New("not connected to Temporal yet")
		}
		return *c, nil
	}
	checks := []api.Check{
		{Name: "worker", Run: l.worker.check},
		{Name: "temporal", Run: func(ctx context.Context) error {
			c, err := temporal()
			if err != nil {
				return err
			}
			return api.TemporalChecks(c, namespace)[0].Run(ctx)
		}},
		{Name: "namespace", After: "temporal", Run: func(ctx context.Context) error {
			c, err := temporal()
			if err != nil {
				return err
			}
			return api.TemporalChecks(c, namespace)[1].Run(ctx)
		}},
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", api.Liveness())
	mux.Handle("GET /readyz", api.NewReadiness(logger, nil, checks...))
	mux.Handle("GET /metrics", metricsHandler()) // metrics.go
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() { h.served <- h.srv.Serve(ln) }()
	logger.Info("worker health port", "healthz", httpURL(ln)+"/healthz", "readyz", httpURL(ln)+"/readyz")
	return h, nil
}

// connected gives the health port the Temporal client.
func (h *healthServer) connected(c client.Client) {
	if h != nil {
		h.temporal.Store(&c)
	}
}

// close stops the health port, last of all: liveness answers until the
// worker has stopped.
func (h *healthServer) close() {
	if h == nil {
		return
	}
	_ = h.srv.Close()
	<-h.served
}
