package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// config holds every setting of the a2aflow processes. Each field is bound
// to a flag whose default comes from an A2AFLOW_* environment variable.
type config struct {
	// app is what the program serves: its agents, LLM, routes and logger.
	app          *App
	HTTPAddr     string
	PublicURL    string
	DataDir      string
	TemporalAddr string
	UIAddr       string
	Namespace    string
	TaskQueue    string
	DatabaseDSN  string
	LogLevel     string
	// LogFormat is --log-format, text or json; AccessLog is --access-log
	// (logging.go).
	LogFormat string
	AccessLog bool
	// UI holds the Web UI's access flags of serve and temporal (serve.go).
	UI uiConfig
	// HTTP holds the A2A API's timeouts and limits (http_limits.go).
	HTTP httpConfig
	// GRPC holds the gRPC binding's flags (grpc.go).
	GRPC grpcConfig
	// Retention is how long the embedded server keeps finished tasks.
	Retention time.Duration
	// DynamicConfig overrides the embedded server's dynamic config, key=value.
	DynamicConfig map[string]string
	// VisibilityIndexes is the embedded server's visibility index set, lean
	// or full (temporalserver.Options.VisibilityIndexes).
	VisibilityIndexes string
	// Auth holds the authentication flags of serve and api (auth.go).
	Auth authConfig
	// Push holds the push notification flags of serve, api and worker (push.go).
	Push pushConfig
	// ApprovalWebhooks holds the approval webhook flags of serve and worker
	// (approvals_webhook.go).
	ApprovalWebhooks approvalWebhooksConfig
	// ApproverGroups maps approvers to their groups (approvals.go).
	ApproverGroups string
	// TemporalUIURL links approvals to runs in the Temporal UI; serve sets it.
	TemporalUIURL string
	// Peers are the NAME=URL agents serve puts into its directory (peers.go).
	Peers []string
	// CredentialsFile is the keyring of outbound credentials that agent
	// directory entries name by auth reference (see remote.LoadKeyring).
	CredentialsFile string
	// keyring is CredentialsFile loaded, for the delegation activities.
	keyring *remote.Keyring
	// OutboundAllowHosts are the non-public addresses the worker's outbound
	// requests (agent cards, delegation, directory tools) may reach besides
	// the hosts of the operator's agents (outbound.ParsePolicy).
	OutboundAllowHosts []string
	// RetryBudget is how long delegation retries an unreachable remote agent.
	RetryBudget time.Duration
	// WorkflowCacheSize is the worker's sticky workflow cache: how many
	// task workflows it keeps in memory between turns (run.go).
	WorkflowCacheSize int
	// Deployment is Worker Versioning of serve and worker (deployments.go).
	Deployment deploymentConfig
	// Conn is how clients reach Temporal, and the embedded frontend's TLS
	// (temporal_conn.go).
	Conn temporalConn
	// WaitTimeout bounds how long an API request waits for a worker.
	WaitTimeout time.Duration
	// DefaultHistoryLength is the history a read without historyLength gets.
	DefaultHistoryLength int
	// IdleTimeouts cancel tasks left input-required, per agent name.
	IdleTimeouts map[string]string
	// UICodecOrigins are the origins of a separate Temporal Web UI that the
	// api serves the codec endpoint to.
	UICodecOrigins []string
	// Credentials holds what credentials given in auth-required need
	// (credentials.go).
	Credentials credentialsConfig
	// PayloadStore is where payloads too large for Temporal history go: a
	// folder, file:// or s3:// URL (payloads.go).
	PayloadStore string
	// payloads is PayloadStore opened, once, by payloadStore: the same
	// Store for the Temporal client, the worker, the API and activities.
	payloads blobstore.Store
	// CardKey is the key serve and api sign agent cards with (keys.go).
	CardKey cardKeyConfig
	// RequireSignedPeers makes delegation refuse remote agents whose card
	// does not verify (keys.go).
	RequireSignedPeers bool
	// Lifecycle is how serve, api and worker stop (--shutdown-timeout) and
	// the worker's health port (shutdown.go, health.go).
	Lifecycle lifecycle
	// Metrics is where the embedded Temporal server's metrics go (serve,
	// temporal: metrics.go).
	Metrics metricsConfig
	// ConfigFile is --config, the TOML file of these settings
	// (configfile.go); sources says where each flag's value came from, and
	// fileAgents are the file's [[agents]] sections (configagents.go).
	ConfigFile string
	sources    map[string]string
	fileAgents []agentSection
}

func (c *config) bindHTTP(fs *pflag.FlagSet) {
	fs.StringVar(&c.HTTPAddr, "http-addr", env("A2AFLOW_HTTP_ADDR", ":8080"), "A2A HTTP API listen address (A2AFLOW_HTTP_ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", env("A2AFLOW_PUBLIC_URL", ""), "base URL published in agent cards; default: each request's own host (A2AFLOW_PUBLIC_URL)")
	fs.StringVar(&c.ApproverGroups, "approver-groups", env("A2AFLOW_APPROVER_GROUPS", ""),
		`who may decide for which approver groups, "alice:finance,managers;bob:finance"; empty lets anyone decide for any group (A2AFLOW_APPROVER_GROUPS)`)
	fs.StringVar(&c.TemporalUIURL, "temporal-ui-url", env("A2AFLOW_TEMPORAL_UI_URL", ""), "Temporal Web UI base URL for links from approvals; serve sets its own (A2AFLOW_TEMPORAL_UI_URL)")
	fs.IntVar(&c.DefaultHistoryLength, "default-history-length", envInt("A2AFLOW_DEFAULT_HISTORY_LENGTH", 1000),
		"how many of a task's latest messages a read that sets no historyLength gets; 0 for all, which costs time in proportion to a long task's age (A2AFLOW_DEFAULT_HISTORY_LENGTH)")
	fs.DurationVar(&c.WaitTimeout, "wait-timeout", envDuration("A2AFLOW_WAIT_TIMEOUT", 30*time.Second),
		"how long a request waits for a worker (to accept a message or cancel, and for a blocking SendMessage to see the task stop); then a write no worker took answers a retryable error, an accepted one the task as it is (A2AFLOW_WAIT_TIMEOUT)")
	c.HTTP.bind(fs)
	c.GRPC.bind(fs)
	c.CardKey.bind(fs)
	c.bindAccessLog(fs)
}

func (c *config) bindData(fs *pflag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", env("A2AFLOW_DATA_DIR", "./data"), "folder for the embedded Temporal database and a2aflow's own database (A2AFLOW_DATA_DIR)")
}

func (c *config) bindTemporal(fs *pflag.FlagSet, embedded bool) {
	usage := "Temporal frontend address to dial (A2AFLOW_TEMPORAL_ADDR; else TEMPORAL_ADDRESS or the temporal.toml profile's)"
	nsUsage := "Temporal namespace (A2AFLOW_NAMESPACE; else TEMPORAL_NAMESPACE or the temporal.toml profile's)"
	if embedded {
		usage = "listen address of the embedded Temporal frontend (A2AFLOW_TEMPORAL_ADDR)"
		nsUsage = "Temporal namespace (A2AFLOW_NAMESPACE)"
		c.Conn.bindServer(fs)
	} else {
		c.Conn.bindClient(fs)
	}
	fs.StringVar(&c.TemporalAddr, "temporal-addr", env("A2AFLOW_TEMPORAL_ADDR", "127.0.0.1:7233"), usage)
	fs.StringVar(&c.Namespace, "namespace", env("A2AFLOW_NAMESPACE", "default"), nsUsage)
	fs.StringVar(&c.LogLevel, "log-level", env("A2AFLOW_LOG_LEVEL", "info"), "debug, info, warn or error (A2AFLOW_LOG_LEVEL)")
	c.bindLogFormat(fs)
	c.bindPayloads(fs)
}

func (c *config) bindUI(fs *pflag.FlagSet) {
	fs.StringVar(&c.UIAddr, "ui-addr", env("A2AFLOW_UI_ADDR", "127.0.0.1:8233"), "Temporal Web UI listen address, loopback only by default (0.0.0.0:8233: every interface, then set --ui-oidc-issuer); empty disables the UI (A2AFLOW_UI_ADDR)")
	c.UI.bind(fs)
	fs.DurationVar(&c.Retention, "retention", envDuration("A2AFLOW_RETENTION", 30*24*time.Hour),
		"how long the embedded Temporal keeps finished tasks readable (A2AFLOW_RETENTION)")
	fs.StringToStringVar(&c.DynamicConfig, "temporal-dynamic-config", nil,
		"embedded Temporal dynamic config override, key=value, repeatable (e.g. history.transferProcessorMaxPollRPS=20)")
	fs.StringVar(&c.VisibilityIndexes, "temporal-visibility-indexes", env("A2AFLOW_TEMPORAL_VISIBILITY_INDEXES", temporalserver.VisibilityIndexesLean),
		"indexes of the embedded Temporal's workflow list: lean drops those no a2aflow or Web UI default view queries, for cheaper writes (Web UI searches on run statistics, parents or schedules then scan); full keeps Temporal's whole set; applied at every start (A2AFLOW_TEMPORAL_VISIBILITY_INDEXES)")
}

// dynamicConfigValues types the --temporal-dynamic-config values the way the
// server wants them: int, bool or duration when they parse as one, else string.
func (c *config) dynamicConfigValues() map[string]any {
	out := map[string]any{}
	for k, v := range c.DynamicConfig {
		if n, err := strconv.Atoi(v); err == nil {
			out[k] = n
		} else if b, err := strconv.ParseBool(v); err == nil {
			out[k] = b
		} else if d, err := time.ParseDuration(v); err == nil {
			out[k] = d
		} else {
			out[k] = v
		}
	}
	return out
}

func (c *config) bindPeers(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.Peers, "peer", envPeers(os.Getenv("A2AFLOW_PEERS")),
		`remote A2A agent to put into the directory at start-up, NAME=URL, repeatable; its card is fetched in the background (A2AFLOW_PEERS="name=url,name=url")`)
}

func (c *config) bindWorker(fs *pflag.FlagSet) {
	fs.StringVar(&c.TaskQueue, "task-queue", env("A2AFLOW_TASK_QUEUE", wire.DefaultTaskQueue), "Temporal task queue of the task workflows (A2AFLOW_TASK_QUEUE)")
	fs.StringVar(&c.DatabaseDSN, "database", env("A2AFLOW_DATABASE", ""), "database for a2aflow's own records (agent directory, sealed credentials) and the tables agents' activities keep there: a SQLite file, or a PostgreSQL DSN (postgres://... or host=... dbname=...); default <data-dir>/a2aflow.db (A2AFLOW_DATABASE)")
	fs.StringVar(&c.CredentialsFile, "credentials", env("A2AFLOW_CREDENTIALS", ""),
		`JSON file of named outbound credentials for calling remote agents ({"name": {"bearer": "env:TOKEN"}}); directory entries name one with --auth-ref (A2AFLOW_CREDENTIALS)`)
	fs.StringToStringVar(&c.IdleTimeouts, "idle-timeout", envMap("A2AFLOW_IDLE_TIMEOUTS"),
		`cancel an agent's task left waiting for the user's answer longer than this, AGENT=DURATION, repeatable (e.g. support=72h); default none: tasks wait as long as it takes (A2AFLOW_IDLE_TIMEOUTS="support=72h,claims=720h")`)
	c.Deployment.bind(fs)
	bindRequireSignedPeers(fs, &c.RequireSignedPeers) // keys.go
	fs.DurationVar(&c.RetryBudget, "delegation-retry-budget", envDuration("A2AFLOW_DELEGATION_RETRY_BUDGET", engine.DefaultRetryBudget),
		"how long a task delegating to a remote agent retries it while unreachable, before failing (A2AFLOW_DELEGATION_RETRY_BUDGET)")
	fs.IntVar(&c.WorkflowCacheSize, "workflow-cache-size", envInt("A2AFLOW_WORKFLOW_CACHE_SIZE", DefaultWorkflowCacheSize),
		"how many tasks the worker keeps in memory between turns (Temporal's sticky workflow cache); a task out of it replays its history on its next turn, which costs milliseconds, while each task kept costs memory as long as it waits (A2AFLOW_WORKFLOW_CACHE_SIZE)")
	fs.StringSliceVar(&c.OutboundAllowHosts, "outbound-allow-hosts", splitList(env("A2AFLOW_OUTBOUND_ALLOW_HOSTS", "")),
		"non-public addresses that agent card fetches, delegation and the directory tools may reach besides public ones and the hosts of the operator's agents (--peer, agents add): loopback, private, link-local, CIDRs or IPs, or all; comma-separated (A2AFLOW_OUTBOUND_ALLOW_HOSTS)")
}

// DefaultWorkflowCacheSize is --workflow-cache-size's default: the tasks a
// worker keeps in memory between turns. The SDK's default, 10,000, keeps
// every task parked in input-required of a busy serve in memory, some 3
// goroutines and 70 KiB of heap each: BenchmarkParkedTasks measured 1,233
// MiB RSS for 10,000 parked tasks with it, 749 MiB with 1,000, while
// answering a task out of the cache (which replays its history) took p50
// 19.8 ms against 16.6 ms for a hot one (1.19x).
const DefaultWorkflowCacheSize = 1000

// envDuration returns the duration in environment variable key, or def.
func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil && d > 0 {
		return d
	}
	return def
}

// envMap reads "k=v,k=v" from environment variable key.
func envMap(key string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(os.Getenv(key), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// logger returns the program's logger, or one on standard error at
// --log-level in --log-format.
func (c *config) logger() *slog.Logger {
	if c.app != nil && c.app.Logger != nil {
		return c.app.Logger
	}
	return newLogger(c.LogLevel, c.LogFormat)
}

// agentNames names the agents served, the default first.
func (c *config) agentNames() []string {
	reg, err := c.registry()
	if err != nil {
		return nil
	}
	return reg.Names()
}

// workerAgents returns the agents the worker runs, with their idle timeouts
// from --idle-timeout.
func (c *config) workerAgents() (*engine.Registry, error) {
	reg, err := c.registry()
	if err != nil {
		return nil, err
	}
	for name, v := range c.IdleTimeouts {
		a, ok := reg.Get(name)
		if !ok {
			return nil, fmt.Errorf("--idle-timeout: no agent named %q (agents: %v)", name, reg.Names())
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--idle-timeout %s=%s: want a positive duration such as 72h", name, v)
		}
		a.IdleTimeout = d
	}
	return reg, nil
}

// envList reads a comma-separated list from environment variable key.
func envList(key string) []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(key), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
