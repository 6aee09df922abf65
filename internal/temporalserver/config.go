package temporalserver

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync/atomic"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

const (
	// clusterName names the single, local cluster; it is stored in the
	// database, so it must not change between versions.
	clusterName = "active"
	// storeName names the main data store, and visibilityStoreName the
	// visibility store when it has a file of its own (serverConfig).
	storeName           = "sqlite"
	visibilityStoreName = "sqlite-visibility"
	// fastPollRPS replaces the history queue processors' default max poll
	// rate of 20/s, which delays each task by up to 50 ms, i.e. every
	// workflow task and timer.
	fastPollRPS = 1000
)

// sqlConfig is the SQLite persistence config for the database at dbPath. All
// users of the file must pass the same attributes: the plugin shares one
// connection pool per resulting DSN.
func sqlConfig(dbPath string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: dbPath,
		ConnectAttributes: map[string]string{
			// Create the file if missing, open it read-write otherwise.
			"mode": "rwc",
			// See the package documentation for the durability trade-off.
			"journal_mode": "wal",
			"synchronous":  "normal",
			// Wait instead of failing at once if another process, such as
			// the sqlite3 shell, briefly holds the write lock.
			"busy_timeout": "5000",
		},
	}
}

// exists reports whether path names an existing file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ensureSchema creates the Temporal schema in dbPath when the file does not
// exist yet, and reports whether it did. The schema is built in a scratch
// file renamed into place at the end, so a crash halfway through never
// leaves a half-built temporal.db that the next start would take as ready.
func ensureSchema(dbPath string) (bool, error) {
	if _, err := os.Stat(dbPath); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("check database %s: %w", dbPath, err)
	}

	// A unique scratch name, because the SQLite plugin never closes pooled
	// connections: reusing a name within one process would hand back a
	// connection to the earlier, already renamed, file.
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return false, fmt.Errorf("scratch database name: %w", err)
	}
	tmp := dbPath + ".init-" + hex.EncodeToString(nonce[:])
	removeTmp := func() {
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			_ = os.Remove(tmp + suffix)
		}
	}

	// The default rollback journal, not WAL: with it every commit lands in
	// the main file, so renaming that one file moves the whole schema.
	cfg := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      tmp,
		ConnectAttributes: map[string]string{"mode": "rwc"},
	}
	if err := sqliteschema.SetupSchema(cfg); err != nil {
		removeTmp()
		return false, fmt.Errorf("set up schema in %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		removeTmp()
		return false, fmt.Errorf("move new database into place: %w", err)
	}
	return true, nil
}

// ensureNamespace creates the namespace with its search attributes directly
// in the database unless it exists. Attributes of an existing namespace are
// left alone here; namespaces.Ensure adds missing ones once the
// server runs.
func ensureNamespace(dbPath, namespace string, searchAttributes map[string]enums.IndexedValueType, retention time.Duration) error {
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, searchAttributes)
	if err != nil {
		return fmt.Errorf("namespace %q config: %w", namespace, err)
	}
	// The schema package creates namespaces with one day of retention; a new
	// namespace gets ours from the start (an existing one is updated later).
	ns.Detail.Config.Retention = durationpb.New(retention)
	if err := sqliteschema.CreateNamespaces(sqlConfig(dbPath), ns); err != nil {
		return fmt.Errorf("create namespace %q: %w", namespace, err)
	}
	return nil
}

// serverPorts are the endpoints the Temporal services listen on.
type serverPorts struct {
	frontend     endpoint
	frontendHTTP endpoint
	history      endpoint
	matching     endpoint
	worker       endpoint
}

// serverConfig is the static Temporal config: all four services on the given
// ports, SQLite persistence, one shard, archival off. The visibility store is
// the SQLite file at visPath, or dbPath's when visPath is empty.
//
// A file of its own for visibility: the SQLite plugin gives each file one
// connection, so in one file every visibility write (two or three per task
// turn: the workflow's start, its search attribute upserts, its close) waits
// for, and makes wait, the writes of workflow state on the path of every
// request. Two files write in parallel.
func serverConfig(dbPath, visPath string, p serverPorts) *config.Config {
	frontend := p.frontend.dialAddr()
	frontendHTTP := p.frontendHTTP.dialAddr()

	var c config.Config
	c.Persistence = config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  storeName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: sqlConfig(dbPath)}},
	}
	if visPath != "" {
		c.Persistence.VisibilityStore = visibilityStoreName
		c.Persistence.DataStores[visibilityStoreName] = config.DataStore{SQL: sqlConfig(visPath)}
	}
	c.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            frontendHTTP,
			},
		},
	}
	c.DCRedirectionPolicy.Policy = "noop"
	service := func(e endpoint) config.Service {
		var s config.Service
		s.RPC.GRPCPort = e.port
		s.RPC.BindOnIP = e.bindHost
		return s
	}
	fe := service(p.frontend)
	if fe.RPC.BindOnIP == "" {
		// An empty BindOnIP makes the server guess an outbound interface;
		// the caller asked for all interfaces.
		fe.RPC.BindOnIP = "0.0.0.0"
	}
	fe.RPC.HTTPPort = p.frontendHTTP.port
	c.Services = map[string]config.Service{
		"frontend": fe,
		"history":  service(p.history),
		"matching": service(p.matching),
		"worker":   service(p.worker),
	}
	c.Archival.History.State = "disabled"
	c.Archival.Visibility.State = "disabled"
	c.NamespaceDefaults.Archival.History.State = "disabled"
	c.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The worker service's system workflows dial the frontend here.
	c.PublicClient.HostPort = frontend
	c.PublicClient.HTTPHostPort = frontendHTTP
	return &c
}

// dynamicConfig is the server's dynamic config: latency and rate settings
// suited to a single-user local server, then the caller's extra values.
func dynamicConfig(extra map[string]any) dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		// The history queue processors rate-limit their polls to 20/s by
		// default, which adds up to 50 ms to every workflow task, timer and
		// visibility update. Idle polling is driven by the poll interval,
		// not by this rate, so raising it costs nothing when idle.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   fastPollRPS,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      fastPollRPS,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): fastPollRPS,
		dynamicconfig.OutboundProcessorMaxPollRPS.Key():   fastPollRPS,
		// New tasks go to one partition of a task queue instead of 4.
		// Partitions spread a queue over matching hosts; on this single
		// host they only cost: a workflow task lands on a random partition,
		// three in four of them have no poller of their own and forward it
		// to the root (rate-limited to 10/s per partition), and a task that
		// misses the forward is written to the backlog in SQLite and read
		// back, tens of ms later. Pollers still read all 4 partitions (the
		// default), so tasks queued in the others by an earlier version are
		// still dispatched; they forward their polls to the root. With
		// serve's echo agent, 8 clients: 12 of 700 workflow tasks through
		// the backlog instead of ~400 (with WorkflowTaskPollers).
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// Update and Update-with-Start. Both are on by default in v1.32;
		// set explicitly so a changed default cannot break a2aflow.
		// (ExecuteMultiOperation, used by Update-with-Start, has no switch
		// any more in v1.32.)
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
		// The default of 10/s throttles the Web UI, which lists and counts
		// workflows on every page.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The history service's cache of workflow states (mutable state):
		// Temporal's default of 128k entries is sized for big hosts. One
		// entry per task that had a turn lately, parked or not: with 8k,
		// 10,000 tasks parked for a person kept some 28 KiB each resident
		// (make bench-peers, 2026-12-01). 256 covers the tasks busy at once
		// on one machine; a task out of it is read from SQLite on its next
		// turn (a few reads). history.hostLevelCacheMaxSize in
		// --temporal-dynamic-config sets it.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 256,
	}
	for k, v := range extra {
		dc[dynamicconfig.MakeKey(k)] = normalizeDynamicValue(v)
	}
	return dc
}

// serverLogger is the Temporal server's logger: stderr, console format,
// the given minimum level, and a switch to silence it. Stop flips the switch
// because shutting the services down logs a burst of expected errors
// (canceled polls, refused dials) that would only alarm users. Panic and
// Fatal, promoted from the embedded Logger, are never silenced: they end the
// goroutine or the process, and the message is the only trace of why.
type serverLogger struct {
	log.Logger
	quiet *atomic.Bool
}

// newServerLogger builds a serverLogger at level.
func newServerLogger(level slog.Level) serverLogger {
	var name string
	switch {
	case level < slog.LevelInfo:
		name = "debug"
	case level < slog.LevelWarn:
		name = "info"
	case level < slog.LevelError:
		name = "warn"
	default:
		name = "error"
	}
	var l log.Logger = log.NewZapLogger(log.BuildZapLogger(log.Config{Level: name, Format: "console"}))
	if sl, ok := l.(log.SkipLogger); ok {
		// Report the caller of this wrapper, not the wrapper, as the
		// logging-call-at location.
		l = sl.Skip(1)
	}
	return serverLogger{Logger: l, quiet: new(atomic.Bool)}
}

// Debug logs at debug level unless silenced.
func (l serverLogger) Debug(msg string, tags ...tag.Tag) {
	if !l.quiet.Load() {
		l.Logger.Debug(msg, tags...)
	}
}

// Info logs at info level unless silenced.
func (l serverLogger) Info(msg string, tags ...tag.Tag) {
	if !l.quiet.Load() {
		l.Logger.Info(msg, tags...)
	}
}

// Warn logs at warn level unless silenced.
func (l serverLogger) Warn(msg string, tags ...tag.Tag) {
	if !l.quiet.Load() {
		l.Logger.Warn(msg, tags...)
	}
}

// Error logs at error level unless silenced.
func (l serverLogger) Error(msg string, tags ...tag.Tag) {
	if !l.quiet.Load() {
		l.Logger.Error(msg, tags...)
	}
}

// DPanic logs at error level unless silenced (it panics only in
// development mode, which is off).
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) {
	if !l.quiet.Load() {
		l.Logger.DPanic(msg, tags...)
	}
}
