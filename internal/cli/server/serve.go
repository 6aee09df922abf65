package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
	"github.com/a2aflow/a2aflow/internal/wire"
)

func newServeCmd(app *App) *cobra.Command {
	cfg := &config{app: app, Metrics: metricsConfig{Embedded: true}}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run everything in one process: embedded Temporal + Web UI, worker and the A2A HTTP API",
		Long: `serve runs a2aflow with nothing else to install: an embedded Temporal
server persisted to a SQLite file under the data dir, the Temporal Web UI, the
worker that runs every A2A task as a workflow, and the A2A HTTP API serving
this program's agents.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), cfg) },
	}
	cfg.bindHTTP(cmd.Flags())
	cfg.bindData(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), true)
	cfg.bindUI(cmd.Flags())
	cfg.bindWorker(cmd.Flags())
	cfg.Auth.bind(cmd.Flags())
	cfg.Push.bind(cmd.Flags(), true)
	cfg.ApprovalWebhooks.bind(cmd.Flags())
	cfg.bindPeers(cmd.Flags())
	cfg.Lifecycle.bind(cmd.Flags())
	cfg.bindConfigFile(cmd) // configfile.go
	return cmd
}

func runServe(ctx context.Context, cfg *config) error {
	logger := cfg.logger()
	peers, err := parsePeers(cfg.Peers)
	if err != nil {
		return err
	}
	if _, err := cfg.workerAgents(); err != nil {
		return err
	}
	if err := cfg.setWorkflowCache(); err != nil {
		return err
	}
	// The HTTP flags are checked here too, so that a mistake in them is not
	// found after Temporal started.
	if err := cfg.HTTP.check(cfg.WaitTimeout); err != nil {
		return err
	}
	// Claim the API port first: failing after Temporal started would be slower
	// and noisier for the same mistake.
	ln, err := listen(cfg.HTTPAddr, "the A2A API")
	if err != nil {
		return err
	}
	defer ln.Close()
	grpcLn, err := cfg.GRPC.listen()
	if err != nil {
		return err
	}
	if grpcLn != nil {
		defer grpcLn.Close()
	}
	if err := cfg.Auth.build(ctx, logger); err != nil {
		return err
	}
	if err := cfg.Push.build(cfg.DataDir, logger); err != nil {
		return err
	}
	if err := cfg.buildCredentials(logger); err != nil {
		return err
	}
	apiURL := cfg.PublicURL
	if apiURL == "" {
		apiURL = httpURL(ln)
	}
	if err := cfg.ApprovalWebhooks.build(cfg.Push.policy, apiURL, logger); err != nil {
		return err
	}

	frontendListen := cfg.TemporalAddr // startEmbedded sets the address to dial
	srv, err := startEmbedded(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer srv.Stop()
	defer cfg.Metrics.include(srv)() // metrics.go: the server's series on the API's /metrics

	c, err := dialTemporal(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer c.Close()
	// Worker and API share a process: the workflow hints new task events
	// straight to the API's streams.
	hints := hints.New()
	stopWorker, err := startWorker(c, cfg, hints, logger)
	if err != nil {
		return err
	}
	defer stopWorker()

	// Peers go into the directory before the API serves, so the first
	// delegation finds them; their cards are fetched in the background, as
	// they may be starting at the same time.
	if len(peers) > 0 {
		store, err := registerPeers(cfg, peers, logger)
		if err != nil {
			return err
		}
		defer store.Close()
		checkCtx, cancelChecks := context.WithCancel(ctx)
		waitChecks := checkPeers(checkCtx, store, cfg.keyring, peers, logger)
		defer waitChecks()
		defer cancelChecks()
	}

	if cfg.TemporalUIURL == "" {
		cfg.TemporalUIURL = srv.UIURL()
	}
	base := httpURL(ln)
	fmt.Fprintf(os.Stdout, "a2aflow is serving\n")
	fmt.Fprintf(os.Stdout, "  A2A API      %s  (agents: %v; default card %s/.well-known/agent-card.json)\n", base, cfg.agentNames(), base)
	if grpcLn != nil {
		fmt.Fprintf(os.Stdout, "  A2A gRPC     %s  (A2A 1.0 and 0.3; an agent is the tenant of its requests)\n", grpcLn.Addr())
	}
	if srv.UIURL() != "" {
		fmt.Fprintf(os.Stdout, "  Temporal UI  %s/namespaces/%s/workflows%s\n", srv.UIURL(), srv.Namespace(), cfg.UI.notes(cfg.UIAddr))
	}
	fmt.Fprintf(os.Stdout, "  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(frontendListen, srv))
	fmt.Fprintf(os.Stdout, "  Data dir     %s\n", absPath(cfg.DataDir))
	for _, p := range peers {
		fmt.Fprintf(os.Stdout, "  Peer         %s = %s\n", p.Name, p.URL)
	}
	return serveAPI(ctx, ln, grpcLn, c, cfg, hints, logger)
}

// startEmbedded starts the embedded Temporal server (and UI) from cfg and
// points cfg.TemporalAddr at it.
func startEmbedded(ctx context.Context, cfg *config, logger *slog.Logger) (*temporalserver.Server, error) {
	oidc, err := cfg.UI.oidc()
	if err != nil {
		return nil, err
	}
	if cfg.UIAddr != "" {
		cfg.UI.warn(cfg.UIAddr, logger)
	}
	frontendTLS, err := cfg.Conn.frontendTLS()
	if err != nil {
		return nil, err
	}
	if exposed(cfg.TemporalAddr) && (frontendTLS == nil || frontendTLS.ClientCAFile == "") {
		logger.Warn("the Temporal frontend listens beyond loopback and has no authentication: whoever reaches it can read, change or end any task; keep it behind a firewall", "addr", cfg.TemporalAddr)
	}
	// The Web UI's codec reads the payloads kept outside history.
	payloads, err := cfg.payloadStore()
	if err != nil {
		return nil, err
	}
	srv, err := temporalserver.Start(ctx, temporalserver.Options{
		CodecStore:        payloads,
		DataDir:           cfg.DataDir,
		FrontendAddr:      cfg.TemporalAddr,
		FrontendTLS:       frontendTLS,
		UIAddr:            cfg.UIAddr,
		DisableUI:         cfg.UIAddr == "",
		UIWriteActions:    cfg.UI.WriteActions,
		UIOIDC:            oidc,
		Namespace:         cfg.Namespace,
		SearchAttributes:  wire.SearchAttributes(),
		DynamicConfig:     cfg.dynamicConfigValues(),
		VisibilityIndexes: cfg.VisibilityIndexes,
		Retention:         cfg.Retention,
		Metrics:           cfg.Metrics.serverMetrics(),
	})
	if err != nil {
		return nil, fmt.Errorf("start embedded Temporal: %w", err)
	}
	cfg.TemporalAddr = srv.FrontendAddr()
	cfg.Conn.useEmbedded(srv)
	return srv, nil
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func newTemporalCmd(app *App) *cobra.Command {
	cfg := &config{app: app}
	cmd := &cobra.Command{
		Use:   "temporal",
		Short: "Run the embedded Temporal server and Web UI alone, for separate api and worker processes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := cfg.logger()
			frontendListen := cfg.TemporalAddr
			stopMetrics, err := cfg.Metrics.serve(cmd.Context(), logger) // metrics.go
			if err != nil {
				return err
			}
			defer stopMetrics()
			srv, err := startEmbedded(cmd.Context(), cfg, logger)
			if err != nil {
				return err
			}
			defer srv.Stop()
			defer cfg.Metrics.include(srv)()
			fmt.Fprintf(os.Stdout, "Temporal is serving\n  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(frontendListen, srv))
			if srv.UIURL() != "" {
				fmt.Fprintf(os.Stdout, "  Temporal UI  %s%s\n", srv.UIURL(), cfg.UI.notes(cfg.UIAddr))
			}
			fmt.Fprintf(os.Stdout, "  Data dir     %s\n", absPath(cfg.DataDir))
			<-cmd.Context().Done()
			return nil
		},
	}
	cfg.bindData(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), true)
	cfg.bindUI(cmd.Flags())
	cfg.Metrics.bind(cmd.Flags())
	cfg.bindConfigFile(cmd) // configfile.go
	return cmd
}

// uiConfig holds the flags of the Web UI's access (serve, temporal): write
// actions and the OpenID Connect login.
type uiConfig struct {
	WriteActions         bool
	OIDCIssuer           string
	OIDCClientID         string
	OIDCClientSecretFile string
	OIDCCallbackURL      string
	OIDCScopes           []string
}

// uiClientSecretEnv holds the Web UI's OIDC client secret itself, for
// deployments that pass secrets in the environment rather than in files.
const uiClientSecretEnv = "A2AFLOW_UI_OIDC_CLIENT_SECRET"

func (c *uiConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.Bool(&c.WriteActions, "ui-write-actions", "A2AFLOW_UI_WRITE_ACTIONS", false,
		"let the Temporal Web UI terminate, cancel, reset, signal and update workflows; off, the UI only reads", cmdutil.Example("true"))
	b.String(&c.OIDCIssuer, "ui-oidc-issuer", "A2AFLOW_UI_OIDC_ISSUER", "",
		"OpenID Connect issuer URL: the Web UI requires a login there; its discovery document is read at start")
	b.String(&c.OIDCClientID, "ui-oidc-client-id", "A2AFLOW_UI_OIDC_CLIENT_ID", "",
		"the Web UI's OAuth client ID at the issuer")
	b.String(&c.OIDCClientSecretFile, "ui-oidc-client-secret-file", "A2AFLOW_UI_OIDC_CLIENT_SECRET_FILE", "",
		"file holding the client's secret; or the secret itself in "+uiClientSecretEnv)
	b.String(&c.OIDCCallbackURL, "ui-oidc-callback-url", "A2AFLOW_UI_OIDC_CALLBACK_URL", "",
		"where the issuer sends the browser back: the UI's URL as browsers reach it + /auth/sso/callback, e.g. https://temporal.example.com/auth/sso/callback")
	b.StringSlice(&c.OIDCScopes, "ui-oidc-scopes", "A2AFLOW_UI_OIDC_SCOPES", nil,
		"OAuth scopes the UI asks for; default openid,profile,email")
}

// oidc returns the UI's OIDC login from the flags, nil when none is set.
func (c *uiConfig) oidc() (*temporalserver.UIOIDC, error) {
	secret := os.Getenv(uiClientSecretEnv)
	if c.OIDCClientSecretFile != "" {
		if secret != "" {
			return nil, errors.New("set --ui-oidc-client-secret-file or " + uiClientSecretEnv + ", not both")
		}
		raw, err := os.ReadFile(c.OIDCClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--ui-oidc-client-secret-file: %w", err)
		}
		// Editors end files with a newline that is not part of the secret.
		secret = strings.TrimRight(string(raw), "\r\n")
	}
	if c.OIDCIssuer == "" {
		if c.OIDCClientID != "" || c.OIDCCallbackURL != "" || secret != "" || len(c.OIDCScopes) > 0 {
			return nil, errors.New("the Web UI's OIDC settings need --ui-oidc-issuer")
		}
		return nil, nil
	}
	return &temporalserver.UIOIDC{IssuerURL: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: secret,
		CallbackURL: c.OIDCCallbackURL, Scopes: c.OIDCScopes}, nil
}

// warn logs a UI on addr that anyone on the network may use.
func (c *uiConfig) warn(addr string, logger *slog.Logger) {
	switch {
	case exposed(addr) && c.OIDCIssuer == "":
		logger.Warn("the Temporal Web UI listens beyond loopback without a login: whoever reaches it reads every task; set --ui-oidc-issuer or put it behind an authenticating proxy", "addr", addr)
	case c.WriteActions && c.OIDCIssuer == "":
		logger.Warn("the Temporal Web UI's write actions are on without a login: any local user or browser tab reaching it can end or change tasks", "addr", addr)
	}
}

// notes is what serve's and temporal's printout say about the UI on addr:
// nothing for the default (loopback, read-only, no login).
func (c *uiConfig) notes(addr string) string {
	var notes []string
	if exposed(addr) {
		notes = append(notes, "open to the network")
	}
	if c.OIDCIssuer != "" {
		notes = append(notes, "OIDC login")
	}
	if c.WriteActions {
		notes = append(notes, "write actions on")
	}
	if len(notes) == 0 {
		return ""
	}
	return "  (" + strings.Join(notes, ", ") + ")"
}

// frontendNote is what the printout adds to the frontend's line when it
// listens on addr beyond loopback.
func frontendNote(addr string) string {
	if exposed(addr) {
		return "; open to the network, no authentication"
	}
	return ""
}

// exposed reports whether a listen address reaches beyond loopback: an empty
// or unspecified host (every interface) or any address but a loopback one.
func exposed(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false // not an address; the server reports it
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
