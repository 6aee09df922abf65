package taskservice

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// closedWatch hints the streams of tasks whose workflow ended outside its
// handler: terminated by an operator (or a reset) or timed out. Nothing in
// the workflow runs then, so no hint comes from it, and with hints the
// streams' own polls are minutes apart (Config.PollInterval). While any
// follower with hints runs, one goroutine per API process lists the task
// workflows that so ended lately, every closedWatchEvery, one Temporal
// visibility call whatever the number of followed tasks, and hints each
// (a hint for a task nobody follows costs nothing).
type closedWatch struct {
	temporal client.Client
	ns       string
	notifier *hints.Broker
	logger   *slog.Logger
	every    time.Duration

	mu     sync.Mutex
	n      int // followers running
	cancel context.CancelFunc
	// down is when this process lost Temporal: the start of the first
	// failed list after which the frontend's health check failed too
	// (zero while Temporal answers). See unreachableSince.
	down time.Time
}

const (
	// closedWatchEvery is how often the watch lists the task workflows
	// that ended outside their handler: the latency of a stream learning of
	// a termination.
	closedWatchEvery = 5 * time.Second
	// closedWatchOverlap is how far each list looks back before the last
	// one: visibility records are written after the close they record.
	closedWatchOverlap = time.Minute
)

func newClosedWatch(c client.Client, ns string, notifier *hints.Broker, logger *slog.Logger) *closedWatch {
	return &closedWatch{temporal: c, ns: ns, notifier: notifier, logger: logger, every: closedWatchEvery}
}

// acquire notes a follower starting; the first starts the watch.
func (w *closedWatch) acquire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.n == 1 {
		w.down = time.Time{} // as seen by an earlier run of the watch: stale
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		go w.run(ctx)
	}
}

// release notes a follower ending; the last stops the watch.
func (w *closedWatch) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 {
		w.cancel()
	}
}

func (w *closedWatch) run(ctx context.Context) {
	since := time.Now().Add(-closedWatchOverlap)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		started := time.Now()
		err := w.list(ctx, since)
		switch {
		case err == nil:
			since = started.Add(-closedWatchOverlap)
			failing = false
			w.setDown(time.Time{})
		case ctx.Err() != nil:
			return
		default:
			// Temporal itself, or only its visibility store? The frontend's
			// health check tells (a visibility outage leaves queries, and
			// so the streams, working).
			hctx, cancel := context.WithTimeout(ctx, closedWatchHealthTimeout)
			_, herr := w.temporal.CheckHealth(hctx, &client.CheckHealthRequest{})
			cancel()
			if herr == nil {
				w.setDown(time.Time{})
			} else if w.unreachableSince().IsZero() {
				w.setDown(started)
			}
		}
		if err != nil && ctx.Err() == nil && !failing {
			failing = true
			w.logger.Warn("cannot list the tasks that ended outside their handler (streams hear of it at their next poll)", "error", err)
			// Temporal may be unreachable from this process. A follower
			// learns that only when it queries, and with hints an idle one
			// queries when the next hint comes, which is when its clock
			// towards ending its streams (Config.UnreachableAfter,
			// so that their clients go to another replica) would start.
			// Every follower queries now instead; where Temporal answers,
			// that costs one query each.
			w.notifier.NotifyAll()
		}
	}
}

// closedWatchHealthTimeout bounds the health check after a failed list.
const closedWatchHealthTimeout = 2 * time.Second

func (w *closedWatch) setDown(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.down = t
}

// unreachableSince is when this process lost Temporal, as far as the watch
// saw (its list failed, and then the frontend's health check), or zero. A
// follower whose own query fails counts its time unreachable from then when
// that is earlier: a stream that had nothing to query while Temporal was
// already gone ends StreamUnreachableAfter after Temporal went, not after
// its own first failed query, which a Temporal node that went away holds
// for a whole StreamQueryTimeout.
func (w *closedWatch) unreachableSince() time.Time {
	if w == nil {
		return time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down
}

// list hints the tasks whose workflows were terminated or timed out since.
func (w *closedWatch) list(ctx context.Context, since time.Time) error {
	query := fmt.Sprintf("WorkflowType = '%s' AND (ExecutionStatus = 'Terminated' OR ExecutionStatus = 'TimedOut') AND CloseTime >= '%s'",
		wire.TaskWorkflowName, since.UTC().Format(time.RFC3339Nano))
	var token []byte
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		page, err := w.temporal.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: w.ns, Query: query, NextPageToken: token, PageSize: 1000,
		})
		cancel()
		if err != nil {
			return err
		}
		for _, e := range page.GetExecutions() {
			w.notifier.Notify(e.GetExecution().GetWorkflowId(), 0)
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}
