package temporalserver

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/a2aflow/a2aflow/blobstore"
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
	// DataDir is the folder holding the SQLite file temporal.db; it is
	// created if missing. Default "./data".
	DataDir string

	// FrontendAddr is the gRPC listen address (host:port) of the frontend,
	// the address workers and clients dial. Default "127.0.0.1:7233". Port 0
	// picks a free port. The host must be an IP address or "localhost"; an
	// empty or unspecified host (":7233", "0.0.0.0:7233") listens on all
	// interfaces.
	FrontendAddr string

	// UIAddr is the listen address (host:port) of the Web UI. Default
	// "127.0.0.1:8233". Port 0 picks a free port.
	UIAddr string

	// DisableUI, when true, starts no Web UI.
	DisableUI bool

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

	// DynamicConfig holds extra dynamic config values by key (for example
	// "history.transferProcessorMaxPollRPS"), applied on top of this
	// package's settings. Values must be Go int, bool, string or
	// time.Duration (float64 only for float settings): the server drops a
	// value of the wrong type and silently uses the default. Integral
	// float64 values, as produced by JSON or YAML decoding, are converted to
	// int for that reason.
	DynamicConfig map[string]any
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
