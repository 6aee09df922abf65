// Package temporalserver runs an embedded Temporal server, with the Temporal
// Web UI, inside the current process. It backs the `a2aflow serve` and
// `a2aflow temporal` commands, so a2aflow works without an external Temporal
// cluster.
//
// It is the only package of the module that imports go.temporal.io/server and
// github.com/temporalio/ui-server: linking them is heavy (minutes of cold
// build, large binaries), so everything else talks to the server through the
// Temporal SDK only.
//
// # What runs
//
// [Start] runs the four Temporal services (frontend, history, matching and
// worker) in-process, wired to each other through static membership on
// 127.0.0.1, plus the Web UI (unless disabled). It returns once the frontend
// answers calls, so callers can dial it right away.
//
// # Persistence
//
// Workflow state is stored in the SQLite file <DataDir>/temporal.db and the
// visibility store (the workflow list, with its search attributes) in
// <DataDir>/temporal-visibility.db, through the server's pure-Go SQLite
// plugin (modernc.org/sqlite, no cgo). The plugin gives each file one
// connection; with two files, visibility writes no longer queue with the
// workflow state writes on the path of every request (measured with serve's
// echo agent and 8 clients on a loaded 2-core machine: 30-70% more tasks per
// second). A data dir whose temporal.db was made before the second file
// existed keeps its visibility store in temporal.db, so that no workflow
// drops out of the list. Each schema is created when its file does not
// exist, and the namespace is created (with the configured search
// attributes) on every start if it is missing. Closed
// workflows are kept for the namespace's retention period, 24 hours for a
// namespace created here, after which the server deletes them.
//
// The visibility store keeps the lean set of indexes by default
// (Options.VisibilityIndexes, visindexes.go): Temporal's schema indexes 58
// columns, every visibility write updates them all, and 28 serve queries
// nothing a2aflow runs, so they are dropped at start (a query on one of their
// columns still answers, scanning); the full set re-creates them.
//
// The connections use the pragmas journal_mode=wal and synchronous=normal.
// That pair is about twice as fast as the SQLite defaults for Temporal's
// write-heavy load. The trade-off: a process crash (including kill -9) loses
// nothing, because committed transactions are already in the WAL file, but an
// operating system crash or a power loss may lose the last few commits, since
// the WAL is not synced to disk on every commit.
//
// The server uses a single history shard, which is plenty for one machine and
// keeps the SQLite writes serialized.
//
// A lock file (<DataDir>/temporal.lock) keeps two servers from sharing one
// data folder on systems with flock (Linux, macOS, BSD): two servers would
// both claim the same shard and corrupt each other's state.
//
// # Ports
//
// The Temporal server and the UI library end the whole process (os.Exit) when
// they cannot bind a port. So [Start] first checks every port it needs by
// listening on it briefly and returns an error wrapping [ErrAddrInUse] when one
// is taken. A port of 0 picks a free port; [Server.FrontendAddr] and
// [Server.UIURL] report the chosen ones. A small window remains between the
// check and the real bind, during which another process could take the port.
//
// # Web UI and payloads kept outside history
//
// a2aflow's clients and workers keep payloads of 256 KiB or more outside
// history (package blobstore); history holds references. The Web UI shows
// them through a "codec server", which the browser calls. Because the UI
// library (temporalio/ui-server) takes no extra handlers, the UI's address
// is served by a small front server of this package: it answers
// [CodecPath] with blobstore.CodecHandler over [Options.CodecStore] and
// passes every other request, Host header included, to the UI library
// listening on a loopback port. The UI is configured with the relative
// codec endpoint [CodecPath], so the codec shares the UI's origin (no CORS,
// whatever host name the UI is opened by) and is reachable exactly where
// the UI is. UI 2.55 asks the codec to keep references
// (?preserveStorageRefs=true) and shows a kept one with its size and a
// download button; the codec resolves those up to 1 MiB in place anyway, so
// most payloads read as before.
//
// # Who can reach it
//
// By default the frontend and the UI listen on 127.0.0.1 only: the frontend
// has no authentication, and anyone who reaches it can do anything to any
// workflow. The UI is read-only unless [Options.UIWriteActions] is set: the
// UI server then refuses terminate, cancel, reset, signal, update and the
// other changes with 405 (queries still work). [Options.UIOIDC] puts the UI
// behind an OpenID Connect login (the UI server's own OIDC support): a
// browser without a session goes to the issuer, and the UI's API calls need
// the issuer's token. Start reads the issuer's discovery document first and
// returns an error when it cannot, because the UI library ends the process
// when its own read fails.
//
// [Options.FrontendTLS] makes the frontend serve TLS, and with a client CA
// require client certificates (mutual TLS), which is then its
// authentication: every certificate of those CAs has full access. The
// server's own clients keep reaching it: the system worker, the Web UI's
// server, Start's checks and the callers of [Server.ClientTLS] trust exactly
// the frontend's certificate, under one of its names, and present a client
// certificate of an internal CA generated at every start and never written
// to disk. The history, matching and worker services keep talking plain
// gRPC to each other on 127.0.0.1.
//
// # Logging
//
// The server's own logs go to stderr at [Options.LogLevel], warn by default,
// so normal runs are quiet. Messages of this package go to [Options.Logger].
package temporalserver
