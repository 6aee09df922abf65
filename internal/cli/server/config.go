package server

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// config holds every setting of the a2aflow processes. Each field is bound
// to a flag whose default comes from an A2AFLOW_* environment variable.
type config struct {
	// app is what the program serves: its agents, LLM, routes and logger.
	app       *App
	HTTPAddr  string
	PublicURL string
	DataDir   string
	// DiskReserve is serve's --disk-reserve, the free space its data
	// directory keeps (diskguard.go).
	DiskReserve  string
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
	// UI holds the Web UI's access flags of serve and temporal (embedded.go).
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
	// Secrets holds the key sealing every secret a2aflow keeps, of serve,
	// api and worker, and the credential store it seals (secrets.go).
	Secrets secretsConfig
	// ApprovalWebhooks holds the approval webhook flags of serve and worker
	// (approvals_webhook.go).
	ApprovalWebhooks approvalWebhooksConfig
	// ApproverGroups maps approvers to their groups (api.ParseApproverGroups).
	ApproverGroups string
	// PolicyAdmins maps principals to the tenants whose approval policies
	// they administer, * for operators (guard.PolicyAdminOf).
	PolicyAdmins string
	// PolicyRequestsRetention is how long the requests the policy gates
	// judged are kept (for `policies try`); 0 keeps them forever.
	PolicyRequestsRetention time.Duration
	// TemporalUIURL links approvals to runs in the Temporal UI; serve sets it.
	TemporalUIURL string
	// Peers are the NAME=URL agents serve puts into its directory (peers.go).
	Peers []string
	// OutboundCredentialsFile is the keyring of the credentials this worker
	// calls remote agents with, which agent directory entries name by auth
	// reference (see remote.LoadKeyring).
	OutboundCredentialsFile string
	// keyring is OutboundCredentialsFile loaded, for the delegation
	// activities and the peer checks.
	keyring *remote.Keyring
	// OutboundAllowHosts are the non-public addresses the worker's outbound
	// requests (agent cards, delegation, directory tools) may reach besides
	// the hosts of the operator's agents (outbound.ParsePolicy).
	// SafeByDefault, when set, makes every agent's LLM tool loop safe by
	// default (llm.WithDefaultSafeByDefault) unless it sets its own.
	SafeByDefault      []string
	OutboundAllowHosts []string
	// RetryBudget is how long delegation retries an unreachable remote agent.
	RetryBudget time.Duration
	// WorkflowCacheSize is the worker's sticky workflow cache: how many
	// task workflows it keeps in memory between turns (run.go).
	WorkflowCacheSize int
	// EagerActivities lets the worker start the activities a workflow task
	// schedules at once, from that task's completion, instead of through
	// the task queue (worker.Options.DisableEagerActivities when false).
	EagerActivities bool
	// Deployment is Worker Versioning of serve and worker (deployments.go).
	Deployment deploymentConfig
	// Conn is how clients reach Temporal, and the embedded frontend's TLS
	// (temporal_conn.go).
	Conn temporalConn
	// WaitTimeout bounds how long an API request waits for a worker.
	WaitTimeout time.Duration
	// LeanWrites starts tasks with lean writes (api.Config.NoLeanWrites
	// when false).
	LeanWrites bool
	// LocalModelCalls starts tasks whose LLM calls are local activities
	// (api.Config.NoLocalModelCalls when false).
	LocalModelCalls bool
	// DefaultHistoryLength is the history a read without historyLength gets.
	DefaultHistoryLength int
	// IdleTimeouts cancel tasks left input-required, per agent name.
	IdleTimeouts map[string]string
	// UICodecOrigins are the origins of a separate Temporal Web UI that the
	// api serves the codec endpoint to.
	UICodecOrigins []string
	// PayloadStore is where payloads too large for Temporal history go: a
	// folder, file:// or s3:// URL (payloads.go).
	PayloadStore string
	// payloads is PayloadStore opened, once, by payloadStore: the same
	// Store for the Temporal client, the worker, the API and activities.
	payloads blobstore.Store
	// CardKey is the key serve and api sign agent cards with, and serve and
	// worker push notifications (keys.go).
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
	// fileMCPServers are the file's [[mcp-servers]] sections.
	fileMCPServers []activities.MCPServer
	// filePrices are the file's [[llm-prices]] sections.
	filePrices activities.Prices
	// fileLimits are the file's [[llm-limits]] sections.
	fileLimits activities.Limits
	// fileBudgets are the file's [[llm-budgets]] sections.
	fileBudgets activities.TenantBudgets
	// warnings gets the file's deprecated keys (the command's stderr).
	warnings io.Writer
}

func (c *config) bindHTTP(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.String(&c.HTTPAddr, "http-addr", cmdutil.EnvHTTPAddr, cmdutil.DefaultHTTPAddr, "A2A HTTP API listen address")
	c.bindPublicURL(fs)
	b.String(&c.ApproverGroups, "approver-groups", "A2AFLOW_APPROVER_GROUPS", "",
		`who may decide for which approver groups, "alice:finance,managers;bob:finance"; empty lets anyone decide for any group`)
	b.String(&c.PolicyAdmins, "policy-admins", "A2AFLOW_POLICY_ADMINS", "",
		`who may read and change the approval policies (/policies, a2aflow policies): "root:*;ann:acme" makes root an operator (every scope) and ann the admin of tenant acme's; empty lets anyone without authentication, and nobody with it`)
	b.Duration(&c.PolicyRequestsRetention, "policy-requests-retention", "A2AFLOW_POLICY_REQUESTS_RETENTION", 90*24*time.Hour,
		"how long the requests the approval policies judged are kept for `a2aflow policies try` (table policy_requests); older ones are deleted at start and every hour; 0 keeps them forever")
	b.String(&c.TemporalUIURL, "temporal-ui-url", cmdutil.EnvTemporalUIURL, "", "Temporal Web UI base URL for links from approvals; serve sets its own")
	b.Int(&c.DefaultHistoryLength, "default-history-length", "A2AFLOW_DEFAULT_HISTORY_LENGTH", 1000,
		"how many of a task's latest messages a read that sets no historyLength gets (a SendMessage without one: the messages since the caller's own, within this); 0 for all, which costs time in proportion to a long task's age")
	b.Duration(&c.WaitTimeout, "wait-timeout", "A2AFLOW_WAIT_TIMEOUT", 30*time.Second,
		"how long a request waits for a worker (to accept a message or cancel, and for a blocking SendMessage to see the task stop); then a write no worker took answers a retryable error, an accepted one the task as it is")
	b.Bool(&c.LeanWrites, "lean-writes", "A2AFLOW_LEAN_WRITES", true,
		"start tasks with lean writes: a task that completes while its A2ATaskState search attribute says working writes none before it ends (ListTasks reads a run closed Completed with A2ATaskState working as completed; in the Temporal UI: ExecutionStatus = 'Completed' AND A2ATaskState IN ('TASK_STATE_COMPLETED', 'TASK_STATE_WORKING')), and approvals' search attributes join the state's upsert; false writes A2ATaskState completed too (one history event and one visibility write more per task)")
	b.Bool(&c.LocalModelCalls, "local-model-calls", "A2AFLOW_LOCAL_MODEL_CALLS", true,
		"start tasks whose LLM calls run as local activities: the worker running the task calls the model and records the answer in one marker event, instead of scheduling an activity (three events and an activity task per call), holding the task's reads until the model answered (the turns of streams and non-blocking sends keep ordinary activities); false schedules ordinary activities. A skill can choose per call (llm.WithLocalActivity); tasks started before keep the way they started")
	c.HTTP.bind(fs)
	c.GRPC.bind(fs)
	c.CardKey.bind(fs)
	c.bindAccessLog(fs)
}

// bindPublicURL binds --public-url, of the API (the URL in its cards) and
// of a worker alone with a card key (the issuer of its signed push
// notifications).
func (c *config) bindPublicURL(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&c.PublicURL, "public-url", cmdutil.EnvPublicURL, "",
		"base URL published in agent cards, and the issuer named by signed push notifications (a worker alone with --card-key needs it); default: each request's own host")
}

func (c *config) bindData(fs *pflag.FlagSet) {
	cmdutil.BindDataDir(fs, &c.DataDir)
}

func (c *config) bindTemporal(fs *pflag.FlagSet, embedded bool) {
	if embedded {
		b := cmdutil.Bind(fs)
		c.Conn.bindServer(fs)
		b.String(&c.TemporalAddr, flagTemporalAddr, envTemporalAddr, defaultTemporalAddress, "listen address of the embedded Temporal frontend")
		b.String(&c.Namespace, flagNamespace, envNamespace, "default", "Temporal namespace")
	} else {
		c.bindTemporalClient(fs)
	}
	c.bindLogLevel(fs, "info")
	c.bindLogFormat(fs)
	c.bindPayloads(fs)
}

// bindTemporalClient binds how a command dials Temporal: the frontend's
// address, the namespace, TLS and API key (temporal_conn.go).
func (c *config) bindTemporalClient(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	c.Conn.bindClient(fs)
	b.String(&c.TemporalAddr, flagTemporalAddr, envTemporalAddr, defaultTemporalAddress, "Temporal frontend address to dial",
		cmdutil.Else("TEMPORAL_ADDRESS or the temporal.toml profile's"))
	b.String(&c.Namespace, flagNamespace, envNamespace, "default", "Temporal namespace",
		cmdutil.Else("TEMPORAL_NAMESPACE or the temporal.toml profile's"))
}

func (c *config) bindUI(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.String(&c.UIAddr, "ui-addr", "A2AFLOW_UI_ADDR", "127.0.0.1:8233", "Temporal Web UI listen address, loopback only by default (0.0.0.0:8233: every interface, then set --ui-oidc-issuer); empty disables the UI")
	c.UI.bind(fs)
	b.Duration(&c.Retention, "retention", "A2AFLOW_RETENTION", 30*24*time.Hour,
		"how long the embedded Temporal keeps finished tasks readable")
	fs.StringToStringVar(&c.DynamicConfig, "temporal-dynamic-config", nil,
		"embedded Temporal dynamic config override, key=value, repeatable (e.g. history.transferProcessorMaxPollRPS=20)")
	b.String(&c.VisibilityIndexes, "temporal-visibility-indexes", "A2AFLOW_TEMPORAL_VISIBILITY_INDEXES", temporalserver.VisibilityIndexesLean,
		"indexes of the embedded Temporal's workflow list: lean drops those no a2aflow or Web UI default view queries, for cheaper writes (Web UI searches on run statistics, parents or schedules then scan); full keeps Temporal's whole set; applied at every start")
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
	cmdutil.Bind(fs).StringArray(&c.Peers, "peer", "A2AFLOW_PEERS",
		"remote A2A agent to put into the directory at start-up, NAME=URL, repeatable; its card is fetched in the background",
		cmdutil.Example(`"name=url,name=url"`))
}

func (c *config) bindWorker(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	c.bindTaskQueue(fs)
	cmdutil.BindDatabase(fs, &c.DatabaseDSN)
	bindOutboundCredentials(fs, &c.OutboundCredentialsFile)
	c.bindIdleTimeout(fs)
	c.Deployment.bind(fs)
	bindRequireSignedPeers(fs, &c.RequireSignedPeers) // keys.go
	c.bindRetryBudget(fs)
	b.Int(&c.WorkflowCacheSize, "workflow-cache-size", "A2AFLOW_WORKFLOW_CACHE_SIZE", DefaultWorkflowCacheSize,
		"how many tasks the worker keeps in memory between turns (Temporal's sticky workflow cache); a task out of it replays its history on its next turn, which costs milliseconds, while each task kept costs memory as long as it waits")
	b.Bool(&c.EagerActivities, "eager-activities", "A2AFLOW_EAGER_ACTIVITIES", true,
		"start the activities a task schedules (tool, model and remote agent calls, webhook deliveries) on this worker at once, in the reply to the workflow task that scheduled them (Temporal's eager activity execution); false sends every activity through the task queue, to any worker polling it")
	b.StringSlice(&c.SafeByDefault, "safe-by-default", "A2AFLOW_SAFE_BY_DEFAULT", nil,
		"approver groups, e.g. ops: every agent's tool calls that no approval policy allows wait for their approval, as an agent's own safe-by-default does (docs/guides/policies.md); an agent that sets its own keeps it; comma-separated")
	b.StringSlice(&c.OutboundAllowHosts, "outbound-allow-hosts", "A2AFLOW_OUTBOUND_ALLOW_HOSTS", nil,
		"non-public addresses that agent card fetches, delegation and the directory tools may reach besides public ones and the hosts of the operator's agents (--peer, agents add): loopback, private, link-local, CIDRs or IPs, or all; comma-separated")
}

// bindOutboundCredentials binds --outbound-credentials, the worker's
// keyring.
func bindOutboundCredentials(fs *pflag.FlagSet, p *string) {
	cmdutil.BindOutboundCredentials(fs, p,
		`JSON file of named credentials this worker calls remote agents with ({"name": {"bearer": "env:TOKEN"}}); directory entries name one with agents add --auth-ref`)
}

// bindTaskQueue binds --task-queue, of the worker and the API.
func (c *config) bindTaskQueue(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&c.TaskQueue, "task-queue", "A2AFLOW_TASK_QUEUE", wire.DefaultTaskQueue, "Temporal task queue of the task workflows")
}

// bindIdleTimeout binds --idle-timeout, of the worker and replay.
func (c *config) bindIdleTimeout(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).StringToString(&c.IdleTimeouts, "idle-timeout", "A2AFLOW_IDLE_TIMEOUTS",
		"cancel an agent's task left waiting for the user's answer longer than this, AGENT=DURATION, repeatable (e.g. support=72h); default none: tasks wait as long as it takes",
		cmdutil.Example(`"support=72h,claims=720h"`))
}

// bindRetryBudget binds --delegation-retry-budget, of the worker and replay.
func (c *config) bindRetryBudget(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).Duration(&c.RetryBudget, "delegation-retry-budget", "A2AFLOW_DELEGATION_RETRY_BUDGET", engine.DefaultRetryBudget,
		"how long a task delegating to a remote agent retries it while unreachable, before failing")
}

// bindLogLevel binds --log-level, whose default is def.
func (c *config) bindLogLevel(fs *pflag.FlagSet, def string) {
	cmdutil.Bind(fs).String(&c.LogLevel, "log-level", "A2AFLOW_LOG_LEVEL", def, "debug, info, warn or error")
}

// DefaultWorkflowCacheSize is --workflow-cache-size's default: the tasks a
// worker keeps in memory between turns, some 3 goroutines and 70-150 KiB
// each. It should cover the tasks that are busy at once (a task out of the
// cache replays its history on its next workflow task), not the tasks that
// wait: a task parked for a person is data in Temporal's store. With 10,000
// travel tasks parked in serve (make bench-peers, 2026-12-01), the cache at
// 1,000 grew resident memory by 462 MB, at 100 by 295 MB (the rest was the
// embedded server's cache of workflow states, now 256 too:
// temporalserver's history.hostLevelCacheMaxSize) and with both at their
// new sizes by 116 MB; answering a parked task took 1.4x a cached one.
const DefaultWorkflowCacheSize = 100

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
