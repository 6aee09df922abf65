package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Health: two endpoints, for two questions.
//
//	GET /healthz  liveness: the process answers HTTP. It calls nothing, so a
//	              Temporal outage never makes an orchestrator restart a
//	              healthy API (which would not bring Temporal back).
//	GET /readyz   readiness: Temporal answers, the namespace exists, and
//	              whatever Config.ReadinessChecks add (serve: its worker
//	              started). 200 or 503, with the name of each check.
//
// Both are public (no credentials: probes have none) and never rate
// limited. Their answers name which check failed and nothing more: the
// Temporal error behind a failure (addresses, namespaces, TLS details) is
// logged, and shown in the answer only to an authenticated caller.

// Check is one named check of /readyz.
type Check struct {
	// Name names the check in the answer: "temporal", "namespace", "worker"...
	Name string
	// Run returns nil when what it checks is ready. Its error is logged and
	// shown to authenticated callers only.
	Run func(ctx context.Context) error
	// After, when set, names an earlier check this one needs: when that one
	// fails, this one is "skipped" rather than failed for the same cause.
	After string
}

// TemporalChecks returns the checks of a Temporal client: "temporal", the
// frontend answers its health check, and "namespace", the namespace exists.
func TemporalChecks(c client.Client, namespace string) []Check {
	return []Check{
		{Name: "temporal", Run: func(ctx context.Context) error {
			_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
		{Name: "namespace", After: "temporal", Run: func(ctx context.Context) error {
			_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
			return err
		}},
	}
}

// Check states in a readiness answer.
const (
	CheckOK      = "ok"
	CheckFailed  = "failed"
	CheckSkipped = "skipped"
)

// ReadinessAnswer is the body of /readyz.
type ReadinessAnswer struct {
	// Status is "ready", "unavailable" (a check failed) or "shutting_down".
	Status string `json:"status"`
	// Checks maps each check's name to ok, failed or skipped.
	Checks map[string]string `json:"checks,omitempty"`
	// Failed lists the checks that failed, in order.
	Failed []string `json:"failed,omitempty"`
	// Errors holds the failed checks' errors, for authenticated callers only.
	Errors map[string]string `json:"errors,omitempty"`
}

// Readiness runs readiness checks for a /readyz endpoint. Results are kept
// for a second, so that probes and anonymous callers in any number cost
// Temporal at most one round of checks a second; concurrent callers share
// one round.
type Readiness struct {
	checks   []Check
	logger   *slog.Logger
	draining <-chan struct{}

	mu      sync.Mutex
	at      time.Time
	answer  ReadinessAnswer
	errs    map[string]string
	logged  map[string]time.Time // failing check -> when its error was last logged
	lastErr map[string]string    // failing check -> the error last logged
}

// readinessCacheFor is how long a round of checks answers /readyz.
const readinessCacheFor = time.Second

// readinessTimeout bounds one round of checks.
const readinessTimeout = 3 * time.Second

// relogFailureEvery is how often a check that keeps failing with the same
// error is logged again.
const relogFailureEvery = time.Minute

// NewReadiness returns the readiness of checks. Once draining is closed
// (nil: never) it answers 503 "shutting_down" without running them.
func NewReadiness(logger *slog.Logger, draining <-chan struct{}, checks ...Check) *Readiness {
	if logger == nil {
		logger = slog.Default()
	}
	return &Readiness{checks: checks, logger: logger, draining: draining,
		logged: map[string]time.Time{}, lastErr: map[string]string{}}
}

// Check runs the checks (or reuses a round under a second old) and returns
// the answer, errors included, and whether every check passed.
func (r *Readiness) Check(ctx context.Context) (ReadinessAnswer, bool) {
	if closed(r.draining) {
		return ReadinessAnswer{Status: "shutting_down"}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() || time.Since(r.at) >= readinessCacheFor {
		r.run(ctx)
	}
	answer := r.answer
	if len(r.errs) > 0 {
		answer.Errors = r.errs
	}
	return answer, answer.Status == "ready"
}

// run runs every check once, with r.mu held.
func (r *Readiness) run(ctx context.Context) {
	// A caller that hangs up must not fail the round the next callers reuse.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readinessTimeout)
	defer cancel()
	answer := ReadinessAnswer{Status: "ready", Checks: map[string]string{}}
	errs := map[string]string{}
	now := time.Now()
	for _, c := range r.checks {
		if c.After != "" && answer.Checks[c.After] != CheckOK && answer.Checks[c.After] != "" {
			answer.Checks[c.Name] = CheckSkipped
			continue
		}
		err := c.Run(ctx)
		if err == nil {
			answer.Checks[c.Name] = CheckOK
			if _, was := r.lastErr[c.Name]; was {
				r.logger.Info("readiness check passes again", "check", c.Name)
				delete(r.lastErr, c.Name)
				delete(r.logged, c.Name)
			}
			continue
		}
		answer.Checks[c.Name] = CheckFailed
		answer.Failed = append(answer.Failed, c.Name)
		answer.Status = "unavailable"
		msg := err.Error()
		errs[c.Name] = msg
		if r.lastErr[c.Name] != msg || now.Sub(r.logged[c.Name]) >= relogFailureEvery {
			r.logger.Warn("readiness check failed", "check", c.Name, "error", msg)
			r.lastErr[c.Name], r.logged[c.Name] = msg, now
		}
	}
	r.answer, r.errs, r.at = answer, errs, time.Now()
}

// ServeHTTP answers GET /readyz: 200 when every check passes, else 503,
// with a ReadinessAnswer whose Errors only an authenticated caller (a
// principal in the request's context) sees.
func (r *Readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	answer, ok := r.Check(req.Context())
	if PrincipalFrom(req.Context()) == "" {
		answer.Errors = nil
	}
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	writeHealth(w, status, answer)
}

// Liveness answers GET /healthz: 200 {"status":"ok"} as long as the process
// serves HTTP. It checks nothing else.
func Liveness() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeHealth(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func writeHealth(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// closed reports whether ch is closed; a nil channel never is.
func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
