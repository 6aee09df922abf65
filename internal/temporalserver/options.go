package temporalserver

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/a2aflow/a2aflow/internal/blobstore"
)

// Defaults of Options.
const (
	defaultDataDir      = "./data"
	defaultFrontendAddr = "127.0.0.1:7233"
	defaultUIAddr       = "127.0.0.1:8233"
	defaultNamespace    = "default"
	defaultRetention    = 30 * 24 * time.Hour
	// defaultBlobsDir is the default CodecStore's folder under DataDir, the
	// same as `a2aflow serve`'s default payload store.
	defaultBlobsDir = "blobs"
)

// Options configures an embedded server. The zero value works.
type Options struct {
	// DataDir is the folder holding the SQLite files temporal.db and
	// temporal-visibility.db; it is created if missing. Default "./data".
	DataDir string

	// FrontendAddr is the gRPC listen address (host:port) of the frontend,
	// the address workers and clients dial. Default "127.0.0.1:7233". Port 0
	// picks a free port. The host must be an IP address or "localhost"; an
	// empty or unspecified host (":7233", "0.0.0.0:7233") listens on all
	// interfaces.
	FrontendAddr string

	// FrontendTLS, when set, makes the frontend (gRPC and HTTP API) serve
	// TLS, and with its ClientCAFile require client certificates (mutual
	// TLS). The server's own clients (system worker, Web UI, Start's checks
	// and [Server.ClientTLS]) keep working. Default nil: plain gRPC.
	FrontendTLS *FrontendTLS

	// UIAddr is the listen address (host:port) of the Web UI. Default
	// "127.0.0.1:8233". Port 0 picks a free port.
	UIAddr string

	// DisableUI, when true, starts no Web UI.
	DisableUI bool

	// UIWriteActions, when true, lets the Web UI change workflows:
	// terminate, cancel, reset, signal, update, pause, start and batch
	// operations. Default false: the UI reads only (queries such as the
	// stack trace still work), and the UI server answers 405 to those calls
	// whoever sends them. Anyone who reaches a UI with write actions on can
	// end or rewrite any task, or send it an update with a forged owner or
	// approver, so turn them on only for a UI behind UIOIDC or on loopback.
	UIWriteActions bool

	// UIOIDC, when set, makes the Web UI require an OpenID Connect login:
	// a browser without a session is sent to the issuer's authorize page,
	// and the UI's API calls need the issuer's tokens. Default nil: no
	// login, which suits a UI listening on loopback only.
	UIOIDC *UIOIDC

	// CodecStore is the store of the payloads that a2aflow's clients and
	// workers keep outside history (blobstore.ExternalStorage). The Web UI
	// shows them through a codec endpoint, CodecPath on the UI's own
	// address, that reads this store. Default: the folder <DataDir>/blobs,
	// read only (it is created by the first payload stored).
	CodecStore blobstore.Store

	// Namespace is the namespace created on first start and used by
	// a2aflow. Default "default".
	Namespace string

	// SearchAttributes are custom search attributes to register in the
	// namespace, by name. Missing ones are added on every start, so new
	// attributes also reach namespaces created by an earlier version.
	SearchAttributes map[string]enums.IndexedValueType

	// Retention is how long closed workflows (finished tasks) are kept
	// before the server deletes them. Default 30 days (the server's own
	// default is one day, too short to look up last week's task).
	Retention time.Duration

	// Logger receives this package's own messages. Default slog.Default().
	Logger *slog.Logger

	// LogLevel is the level of the Temporal server's own logs, written to
	// stderr. Its zero value, slog.LevelInfo, is read as "unset" and selects
	// the default slog.LevelWarn, because the server's info logs are very
	// chatty; to see them anyway use a level between info and warn such as
	// slog.LevelInfo+1.
	LogLevel slog.Level

	// Metrics, when true, makes the server record its own metrics (the
	// series a Temporal server exports to Prometheus: service_requests,
	// persistence_latency...), served by [Server.Metrics] (metrics.go).
	// Default false: the server records none, as without a metrics
	// configuration.
	Metrics bool

	// DynamicConfig holds extra dynamic config values by key (for example
	// "history.transferProcessorMaxPollRPS"), applied on top of this
	// package's settings. Values must be Go int, bool, string or
	// time.Duration (float64 only for float settings): the server drops a
	// value of the wrong type and silently uses the default. Integral
	// float64 values, as produced by JSON or YAML decoding, are converted to
	// int for that reason.
	DynamicConfig map[string]any

	// VisibilityIndexes is the set of indexes the visibility store keeps:
	// VisibilityIndexesLean (the default) drops those of Temporal's schema
	// that nothing a2aflow serves queries, which makes every visibility
	// write cheaper (visindexes.go); VisibilityIndexesFull keeps, or brings
	// back, Temporal's full set. Applied at every start.
	VisibilityIndexes string
}

// UIOIDC configures the Web UI's OpenID Connect login (the UI server's auth
// provider settings). Start reads the issuer's discovery document first and
// fails when it cannot: the UI library would end the process instead.
type UIOIDC struct {
	// IssuerURL is the issuer, whose discovery document is at
	// IssuerURL + "/.well-known/openid-configuration" and must name the
	// same issuer. Required.
	IssuerURL string
	// ClientID is the UI's OAuth client ID at the issuer; ID tokens must be
	// issued to it. Required.
	ClientID string
	// ClientSecret is the client's secret; empty for a public client.
	ClientSecret string
	// CallbackURL is where the issuer sends the browser back after login:
	// the UI's address as the browser sees it plus "/auth/sso/callback"
	// (register it at the issuer). Required; http or https. With https the
	// UI's cookies are Secure, so serve the UI through TLS then.
	CallbackURL string
	// Scopes are the OAuth scopes asked for. Default openid, profile, email.
	Scopes []string
}

// uiOIDCCallbackPath is the UI server's OIDC callback route.
const uiOIDCCallbackPath = "/auth/sso/callback"

// defaultOIDCScopes are UIOIDC.Scopes' default.
var defaultOIDCScopes = []string{"openid", "profile", "email"}

// withDefaults returns a copy of u with defaults filled in, or an error when
// a required field is missing or a URL is unusable.
func (u UIOIDC) withDefaults() (UIOIDC, error) {
	var errs []error
	for _, f := range []struct{ name, url string }{{"issuer URL", u.IssuerURL}, {"callback URL", u.CallbackURL}} {
		if f.url == "" {
			errs = append(errs, fmt.Errorf("the %s is required", f.name))
			continue
		}
		parsed, err := url.Parse(f.url)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			errs = append(errs, fmt.Errorf("the %s %q is not an http or https URL", f.name, f.url))
		}
	}
	if u.CallbackURL != "" && !strings.HasSuffix(strings.SplitN(u.CallbackURL, "?", 2)[0], uiOIDCCallbackPath) {
		// The UI serves no other callback route.
		errs = append(errs, fmt.Errorf("the callback URL %q must end with %s", u.CallbackURL, uiOIDCCallbackPath))
	}
	if u.ClientID == "" {
		errs = append(errs, errors.New("the client ID is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return u, fmt.Errorf("temporal UI OIDC: %w", err)
	}
	if len(u.Scopes) == 0 {
		u.Scopes = defaultOIDCScopes
	}
	return u, nil
}

// withDefaults returns a copy of o with defaults filled in, or an error when
// o cannot work.
func (o Options) withDefaults() (Options, error) {
	if o.DataDir == "" {
		o.DataDir = defaultDataDir
	}
	// The SQLite plugin builds a "file:<path>?<params>" URI without escaping
	// the path, so these characters would corrupt it.
	if strings.ContainsAny(o.DataDir, "?#") {
		return o, fmt.Errorf("temporal data dir %q: must not contain '?' or '#'", o.DataDir)
	}
	if o.FrontendAddr == "" {
		o.FrontendAddr = defaultFrontendAddr
	}
	if o.UIAddr == "" {
		o.UIAddr = defaultUIAddr
	}
	if o.Namespace == "" {
		o.Namespace = defaultNamespace
	}
	if o.UIOIDC != nil && !o.DisableUI {
		oidc, err := o.UIOIDC.withDefaults()
		if err != nil {
			return o, err
		}
		o.UIOIDC = &oidc
	}
	if o.CodecStore == nil {
		store, err := blobstore.NewFileStore(filepath.Join(o.DataDir, defaultBlobsDir))
		if err != nil {
			return o, fmt.Errorf("temporal options: codec store: %w", err)
		}
		o.CodecStore = store
	}
	if o.Retention <= 0 {
		o.Retention = defaultRetention
	}
	switch o.VisibilityIndexes {
	case "":
		o.VisibilityIndexes = VisibilityIndexesLean
	case VisibilityIndexesLean, VisibilityIndexesFull:
	default:
		return o, fmt.Errorf("temporal options: visibility indexes %q: want %s or %s", o.VisibilityIndexes, VisibilityIndexesLean, VisibilityIndexesFull)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.LogLevel == 0 {
		o.LogLevel = slog.LevelWarn
	}
	var errs []error
	for name, typ := range o.SearchAttributes {
		if name == "" {
			errs = append(errs, errors.New("search attribute with an empty name"))
		}
		if _, ok := enums.IndexedValueType_name[int32(typ)]; !ok || typ == enums.INDEXED_VALUE_TYPE_UNSPECIFIED {
			errs = append(errs, fmt.Errorf("search attribute %q: invalid type %v", name, typ))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("temporal options: %w", err)
	}
	return o, nil
}

// normalizeDynamicValue turns integral float64 values into int, because
// decoded JSON and YAML numbers are float64 and the server rejects them for
// int and duration settings, while float settings accept ints.
func normalizeDynamicValue(v any) any {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return v
	}
	return int(f)
}
