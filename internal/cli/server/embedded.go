package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
	"github.com/a2aflow/a2aflow/internal/wire"
)

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
