package cmdutil

import (
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/models"
)

// The environment variables that commands of more than one part of the
// program read: the server binds them, the client and the REPL derive
// their defaults from them or keep them from a child process.
const (
	// EnvHTTPAddr is --http-addr's: where serve and api listen.
	EnvHTTPAddr = "A2AFLOW_HTTP_ADDR"
	// EnvAPIURL is the a2aflow server the operator commands and the REPL
	// talk to (--api; the client verbs' default agent).
	EnvAPIURL = "A2AFLOW_API_URL"
	// EnvPublicURL is --public-url's.
	EnvPublicURL = "A2AFLOW_PUBLIC_URL"
	// EnvTemporalUIURL is --temporal-ui-url's.
	EnvTemporalUIURL = "A2AFLOW_TEMPORAL_UI_URL"
	// EnvDataDir is --data-dir's.
	EnvDataDir = "A2AFLOW_DATA_DIR"
	// EnvDatabase is --database's.
	EnvDatabase = "A2AFLOW_DATABASE"
)

// DefaultHTTPAddr is --http-addr's default.
const DefaultHTTPAddr = ":8080"

// LocalServerURL is the URL of the a2aflow server this host runs by
// default: where serve listens with $A2AFLOW_HTTP_ADDR, else :8080, as a
// URL (http://localhost:8080).
func LocalServerURL() string {
	addr := os.Getenv(EnvHTTPAddr)
	if addr == "" {
		addr = DefaultHTTPAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://localhost" + DefaultHTTPAddr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// a2aflow's own records (the agent directory, sealed credentials, the Temporal
// database of serve) are kept under --data-dir, in --database.
const (
	defaultDataDir = "./data"
	databaseFile   = "a2aflow.db"
)

// BindDataDir binds --data-dir.
func BindDataDir(fs *pflag.FlagSet, p *string) {
	Bind(fs).String(p, "data-dir", EnvDataDir, defaultDataDir,
		"folder for the embedded Temporal database and a2aflow's own database")
}

// DataDir is the data dir of a command without --data-dir (api's default
// payload store): $A2AFLOW_DATA_DIR or ./data.
func DataDir() string {
	if d := os.Getenv(EnvDataDir); d != "" {
		return d
	}
	return defaultDataDir
}

// BindDatabase binds --database: a2aflow's own records, the worker's,
// serve's and the agent directory's.
func BindDatabase(fs *pflag.FlagSet, p *string) {
	bindDatabase(fs, p, "database for a2aflow's own records (agent directory, sealed credentials) and the tables agents' activities keep there: a SQLite file, or a PostgreSQL DSN (postgres://... or host=... dbname=...); default <data-dir>/"+databaseFile)
}

// BindWorkersDatabase binds api's --database: the workers' database, where
// it hears of their new task events.
func BindWorkersDatabase(fs *pflag.FlagSet, p *string) {
	bindDatabase(fs, p, "the workers' database (their --database): the API listens for their hints of new task events, so a stream gets each event at once instead of at its next poll: on PostgreSQL (LISTEN a2aflow_task_events), or for a SQLite file on Unix sockets in the folder FILE.hints beside it (workers on this host); none: streams poll every 250 ms")
}

func bindDatabase(fs *pflag.FlagSet, p *string, usage string) {
	Bind(fs).String(p, "database", EnvDatabase, "", usage)
}

// DatabaseDSN is --database, or the SQLite file in the data dir when it is
// empty.
func DatabaseDSN(dataDir, dsn string) string {
	if dsn != "" {
		return dsn
	}
	return filepath.Join(dataDir, databaseFile)
}

// Database is --data-dir and --database of a command that opens a2aflow's
// own database itself (agents, repl), the same one serve and worker use
// (SQLite in WAL mode, which this process can share with a running server,
// or PostgreSQL).
type Database struct {
	DataDir string
	DSN     string
}

// Bind binds --data-dir and --database.
func (d *Database) Bind(fs *pflag.FlagSet) {
	BindDataDir(fs, &d.DataDir)
	BindDatabase(fs, &d.DSN)
}

// Path is --database, or the default SQLite file in the data dir as an
// absolute path (so that a child process in another directory finds it).
func (d *Database) Path() string {
	if d.DSN != "" {
		return d.DSN
	}
	return AbsPath(DatabaseDSN(d.DataDir, ""))
}

// Open opens the database.
func (d *Database) Open() (*models.Store, error) { return models.Open(d.Path()) }

// BindOutboundCredentials binds --outbound-credentials: the keyring file of
// named credentials (remote.LoadKeyring) for calling remote agents, the
// worker's and the client's. It was --credentials.
func BindOutboundCredentials(fs *pflag.FlagSet, p *string, usage string) {
	Bind(fs).String(p, "outbound-credentials", "A2AFLOW_OUTBOUND_CREDENTIALS", "", usage,
		Formerly("credentials", "A2AFLOW_CREDENTIALS"))
}
