package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	sdklog "go.temporal.io/sdk/log"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
)

// The process logger: --log-level and --log-format (text or slog's JSON),
// on standard error; a2aflow.WithLogger replaces it. The A2A API adds each
// request's agent, task_id and context_id to its lines and logs one access
// line per request (api/accesslog.go, --access-log); the worker adds a
// task's keys to its workflow and activity lines
// (engine.NewLoggingInterceptor).

// The values of --log-format.
const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// parseLogFormat reads a --log-format value.
func parseLogFormat(s string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(s)); f {
	case logFormatText, logFormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("--log-format %q: want text or json", s)
}

// parseLogLevel reads a --log-level value; an unknown one is info.
func parseLogLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(strings.TrimSpace(s)))); err != nil {
		return slog.LevelInfo
	}
	return l
}

// newLogHandler returns the process's log handler writing to w at level in
// format (text unless "json").
func newLogHandler(w io.Writer, level, format string) slog.Handler {
	opts := &slog.HandlerOptions{Level: parseLogLevel(level)}
	if f, _ := parseLogFormat(format); f == logFormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// bindLogFormat binds --log-format, which every command with --log-level has.
func (c *config) bindLogFormat(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&c.LogFormat, "log-format", "A2AFLOW_LOG_FORMAT", logFormatText,
		"text or json: log lines as key=value text or as one JSON object each; not used when the program sets its own logger")
}

// bindAccessLog binds --access-log, of the commands serving the A2A API.
func (c *config) bindAccessLog(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).Bool(&c.AccessLog, "access-log", "A2AFLOW_ACCESS_LOG", true,
		"log one info line per HTTP request of the A2A API (method, path, A2A method, status, duration, bytes, principal; never credentials); --access-log=false turns it off")
}

// checkLogFlags refuses a wrong --log-format (flag or environment) before
// a command runs: the root command's PersistentPreRunE.
func checkLogFlags(cmd *cobra.Command, _ []string) error {
	if f := cmd.Flags().Lookup("log-format"); f != nil {
		if _, err := parseLogFormat(f.Value.String()); err != nil {
			return fmt.Errorf("--log-format %q (or %s): want text or json", f.Value.String(), cmdutil.Env(f))
		}
	}
	return nil
}

// newLogger returns the process logger: to stderr at level (debug, info,
// warn, error) in format (text or json). It becomes slog's default too, so
// that what logs there (the embedded Temporal's start-up, a2a-go) logs in
// the same format.
func newLogger(level, format string) *slog.Logger {
	l := slog.New(newLogHandler(os.Stderr, level, format))
	slog.SetDefault(l)
	return l
}

// sdkLogger returns the Temporal SDK client's logger over the process
// logger. The SDK logs every worker start and stop, and more, at info: its
// own lines are kept to warnings and errors (component=temporal-sdk) unless
// the process logs at debug, where an operator wants them. The lines of the
// loggers workflow and activity code get (workflow.GetLogger,
// activity.GetLogger, marked by engine.NewLoggingInterceptor) are the
// agents' own and follow --log-level.
func sdkLogger(logger *slog.Logger) sdklog.Logger {
	floor := slog.LevelWarn
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		floor = slog.LevelDebug
	}
	return sdklog.NewStructuredLogger(slog.New(sdkHandler{h: logger.Handler(), floor: floor}))
}

// sdkHandler is sdkLogger's handler.
type sdkHandler struct {
	h     slog.Handler
	floor slog.Level // of the SDK's own lines
	task  bool       // the logger of workflow or activity code
}

func (h sdkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if !h.task && l < h.floor {
		return false
	}
	return h.h.Enabled(ctx, l)
}

func (h sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.task {
		r = r.Clone()
		r.AddAttrs(slog.String("component", "temporal-sdk"))
	}
	return h.h.Handle(ctx, r)
}

func (h sdkHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	kept := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if engine.IsTaskLoggerMark(a) {
			h.task = true
			continue
		}
		kept = append(kept, a)
	}
	if len(kept) > 0 {
		h.h = h.h.WithAttrs(kept)
	}
	return h
}

func (h sdkHandler) WithGroup(name string) slog.Handler {
	h.h = h.h.WithGroup(name)
	return h
}
