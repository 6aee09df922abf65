package server

import (
	"context"
	"log/slog"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/hints/pghints"
	"github.com/a2aflow/a2aflow/internal/hints/unixhints"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// hintTransport is how the workflow's hints of new task events travel from
// a worker to the API processes of other processes, chosen here once from
// the worker's database (--database, which an api is given too): PostgreSQL's
// LISTEN/NOTIFY (package pghints), else Unix sockets in a folder beside the
// SQLite file (package unixhints: processes of the same host). An api
// without the database hears nothing: its streams poll.
type hintTransport struct{ dsn string }

func hintTransportOf(dsn string) hintTransport { return hintTransport{dsn: dsn} }

// hintSender is a worker's end of the transport.
type hintSender interface {
	wire.Notifier
	Close()
}

// sender returns the worker's end.
func (t hintTransport) sender(logger *slog.Logger) (hintSender, error) {
	if models.IsPostgresDSN(t.dsn) {
		return pghints.NewSender(t.dsn, logger)
	}
	return unixhints.NewSender(unixhints.Dir(t.dsn), logger)
}

// listen starts an api's end, hinting the broker it returns until ctx ends,
// and says where it listens. On Unix sockets a failure is only a warning:
// the streams poll (nil broker).
func (t hintTransport) listen(ctx context.Context, logger *slog.Logger) (*hints.Broker, string, error) {
	b := hints.New()
	if models.IsPostgresDSN(t.dsn) {
		if err := pghints.Listen(ctx, t.dsn, b, logger); err != nil {
			return nil, "", err
		}
		return b, "PostgreSQL LISTEN " + pghints.Channel, nil
	}
	dir := unixhints.Dir(t.dsn)
	if err := unixhints.Listen(ctx, dir, b, logger); err != nil {
		logger.Warn("no task event hints from the workers: streams poll", "error", err)
		return nil, "", nil
	}
	return b, "Unix sockets in " + dir, nil
}

// hintFanout hints each of its notifiers: serve's worker hints its own API
// and the API processes of other processes.
type hintFanout []wire.Notifier

func (ns hintFanout) Notify(taskID string, seq int64) {
	for _, n := range ns {
		n.Notify(taskID, seq)
	}
}

// Live sends the deltas of the answers being written to each notifier that
// takes them (hints.LiveNotifier).
func (ns hintFanout) Live(d hints.Delta) {
	for _, n := range ns {
		if l, ok := n.(hints.LiveNotifier); ok {
			l.Live(d)
		}
	}
}

// liveOf is where a worker whose hints go to n sends the deltas of the
// answers being written: n itself when it takes them.
func liveOf(n wire.Notifier) hints.LiveNotifier {
	if l, ok := n.(hints.LiveNotifier); ok {
		return l
	}
	return nil
}
