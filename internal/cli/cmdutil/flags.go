package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A flag bound with Bind records its environment variable (and, after a
// rename, its former names) in its annotations, the one table the config
// file, config print and the reference read.
const (
	annotationEnv        = "a2aflow.env"         // the flag's environment variable
	annotationFormerEnv  = "a2aflow.former-env"  // the variable's name before a rename
	annotationFormerFlag = "a2aflow.former-flag" // the flag's name before a rename
	annotationAliasOf    = "a2aflow.alias-of"    // on a former name: the flag it now is
)

// Binder binds the flags of one flag set, each to the environment variable
// that gives its default:
//
//	b := cmdutil.Bind(cmd.Flags())
//	b.String(&c.TaskQueue, "task-queue", "A2AFLOW_TASK_QUEUE", wire.DefaultTaskQueue,
//		"Temporal task queue of the task workflows")
//
// declares --task-queue, defaulting to $A2AFLOW_TASK_QUEUE or the default,
// with the usage "Temporal task queue of the task workflows
// (A2AFLOW_TASK_QUEUE)". A variable whose value the flag cannot take leaves
// the default; the process commands refuse it (see server's config file).
type Binder struct{ fs *pflag.FlagSet }

// Bind returns the binder of fs.
func Bind(fs *pflag.FlagSet) Binder { return Binder{fs: fs} }

// An Option adds to a flag's binding.
type Option func(*binding)

type binding struct {
	example    string // the variable's value format, shown as ENV=example
	fallback   string // what applies without the variable, shown as "ENV; else ..."
	formerFlag string
	formerEnv  string
}

// Example shows the format of the variable's value in the usage:
// (A2AFLOW_PEERS="name=url,name=url").
func Example(v string) Option { return func(b *binding) { b.example = v } }

// Else names what applies when the variable is unset, in the usage:
// (A2AFLOW_TEMPORAL_TLS; else TEMPORAL_TLS).
func Else(what string) Option { return func(b *binding) { b.fallback = what } }

// Formerly keeps flag and env, the names of the setting before a rename,
// working for one release: --flag is a hidden, deprecated alias that says
// so when used, and env gives the default when the new variable is unset
// (WarnDeprecatedEnv says so when the command runs). Either may be empty.
func Formerly(flag, env string) Option {
	return func(b *binding) { b.formerFlag, b.formerEnv = flag, env }
}

func options(opts []Option) *binding {
	b := &binding{}
	for _, o := range opts {
		o(b)
	}
	return b
}

// lookup returns the value of env, else of its former name; ok is false
// when neither is set (an empty value is unset).
func (b *binding) lookup(env string) (string, bool) {
	if v := os.Getenv(env); v != "" {
		return v, true
	}
	if b.formerEnv != "" {
		if v := os.Getenv(b.formerEnv); v != "" {
			return v, true
		}
	}
	return "", false
}

// usage appends the variable to the flag's usage.
func (b *binding) usage(usage, env string) string {
	note := env
	if b.example != "" {
		note += "=" + b.example
	}
	if b.fallback != "" {
		note += "; else " + b.fallback
	}
	return usage + " (" + note + ")"
}

// done records the binding on the flag name and adds its former name.
func (bd Binder) done(name, env string, b *binding) {
	fs := bd.fs
	_ = fs.SetAnnotation(name, annotationEnv, []string{env})
	if b.formerEnv != "" {
		_ = fs.SetAnnotation(name, annotationFormerEnv, []string{b.formerEnv})
	}
	if b.formerFlag == "" {
		return
	}
	_ = fs.SetAnnotation(name, annotationFormerFlag, []string{b.formerFlag})
	f := fs.Lookup(name)
	fs.AddFlag(&pflag.Flag{
		Name:        b.formerFlag,
		Usage:       f.Usage,
		Value:       aliasValue{fs: fs, name: name},
		DefValue:    f.DefValue,
		NoOptDefVal: f.NoOptDefVal, // a bool: --old alone is true
		Deprecated:  "use --" + name + " instead",
		Hidden:      true,
		Annotations: map[string][]string{annotationAliasOf: {name}},
	})
}

// String binds a string flag.
func (bd Binder) String(p *string, name, env, def, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		def = v
	}
	bd.fs.StringVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// Bool binds a boolean flag; the variable is true, false, 1, 0...
func (bd Binder) Bool(p *bool, name, env string, def bool, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		if x, err := strconv.ParseBool(v); err == nil {
			def = x
		}
	}
	bd.fs.BoolVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// Int binds an integer flag.
func (bd Binder) Int(p *int, name, env string, def int, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		if x, err := strconv.Atoi(v); err == nil {
			def = x
		}
	}
	bd.fs.IntVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// Float64 binds a number flag.
func (bd Binder) Float64(p *float64, name, env string, def float64, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			def = x
		}
	}
	bd.fs.Float64Var(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// Duration binds a duration flag (30s, 5m, 72h). A negative duration in
// the variable leaves the default.
func (bd Binder) Duration(p *time.Duration, name, env string, def time.Duration, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		if x, err := time.ParseDuration(v); err == nil && x >= 0 {
			def = x
		}
	}
	bd.fs.DurationVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// StringSlice binds a list flag, comma-separated or repeated; the variable
// is comma-separated.
func (bd Binder) StringSlice(p *[]string, name, env string, def []string, usage string, opts ...Option) {
	b := options(opts)
	if v, ok := b.lookup(env); ok {
		def = SplitList(v)
	}
	bd.fs.StringSliceVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// StringArray binds a list flag whose values may hold commas, repeated;
// the variable is comma-separated.
func (bd Binder) StringArray(p *[]string, name, env string, usage string, opts ...Option) {
	b := options(opts)
	var def []string
	if v, ok := b.lookup(env); ok {
		def = SplitList(v)
	}
	bd.fs.StringArrayVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// StringToString binds a KEY=VALUE flag, repeatable; the variable is
// "k=v,k=v".
func (bd Binder) StringToString(p *map[string]string, name, env string, usage string, opts ...Option) {
	b := options(opts)
	def := map[string]string{}
	if v, ok := b.lookup(env); ok {
		for _, kv := range strings.Split(v, ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
				def[k] = v
			}
		}
	}
	bd.fs.StringToStringVar(p, name, def, b.usage(usage, env))
	bd.done(name, env, b)
}

// Secret binds a flag holding a secret: its variable is no flag default
// (--help would print it) but read when the value is used (Secret.Get).
// Prefer the variable: a flag shows in the process list.
func (bd Binder) Secret(s *Secret, name, env, usage string, opts ...Option) {
	b := options(opts)
	s.env, s.formerEnv = env, b.formerEnv
	bd.fs.Var(s, name, b.usage(usage, env))
	bd.done(name, env, b)
}

// Secret is the value of a flag bound with Binder.Secret.
type Secret struct {
	value          string
	env, formerEnv string
}

// Get returns the flag's value, else its environment variable's.
func (s *Secret) Get() string {
	if s.value != "" {
		return s.value
	}
	if v := os.Getenv(s.env); v != "" || s.formerEnv == "" {
		return v
	}
	return os.Getenv(s.formerEnv)
}

// String returns the value the flag was given ("" when only the variable is
// set: --help shows no secret).
func (s *Secret) String() string { return s.value }

// Set sets the flag's value.
func (s *Secret) Set(v string) error { s.value = v; return nil }

// Type names the value's type in --help.
func (s *Secret) Type() string { return "string" }

// aliasValue is the value of a flag's former name: setting it sets the
// flag (marked changed, as if given by its name).
type aliasValue struct {
	fs   *pflag.FlagSet
	name string
}

func (a aliasValue) target() *pflag.Flag { return a.fs.Lookup(a.name) }
func (a aliasValue) String() string      { return a.target().Value.String() }
func (a aliasValue) Type() string        { return a.target().Value.Type() }

func (a aliasValue) Set(v string) error {
	err := a.fs.Set(a.name, v)
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) && errors.Unwrap(invalid) != nil {
		return errors.Unwrap(invalid) // pflag names the alias itself
	}
	return err
}

// Env returns the environment variable of a flag bound with Bind, "" for
// another flag.
func Env(f *pflag.Flag) string { return annotation(f, annotationEnv) }

// Former returns the names a flag had before a rename ("" for none).
func Former(f *pflag.Flag) (flag, env string) {
	return annotation(f, annotationFormerFlag), annotation(f, annotationFormerEnv)
}

// AliasOf returns the flag that f is the former name of, "" when f is no
// such alias.
func AliasOf(f *pflag.Flag) string { return annotation(f, annotationAliasOf) }

// EnvValue returns the variable that sets f and its value: its variable, or
// its former one when only that is set; ok is false when neither is.
func EnvValue(f *pflag.Flag) (name, value string, ok bool) {
	env := Env(f)
	if env == "" {
		return "", "", false
	}
	if v := os.Getenv(env); v != "" {
		return env, v, true
	}
	if _, former := Former(f); former != "" {
		if v := os.Getenv(former); v != "" {
			return former, v, true
		}
	}
	return env, "", false
}

func annotation(f *pflag.Flag, key string) string {
	if f == nil || len(f.Annotations[key]) == 0 {
		return ""
	}
	return f.Annotations[key][0]
}

// WarnDeprecatedEnv writes a line to w for each flag of cmd whose setting
// comes from the former name of its environment variable, or is ignored
// there because the new name is set too. The root command calls it before
// any command runs, so that only the command that runs speaks of its own
// variables.
func WarnDeprecatedEnv(cmd *cobra.Command, w io.Writer) {
	seen := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		_, former := Former(f)
		if former == "" || seen[former] || os.Getenv(former) == "" {
			return
		}
		seen[former] = true
		if os.Getenv(Env(f)) != "" {
			fmt.Fprintf(w, "a2aflow: warning: environment variable %s is deprecated and ignored: %s is set\n", former, Env(f))
			return
		}
		fmt.Fprintf(w, "a2aflow: warning: environment variable %s is deprecated, use %s (the old name works until the next release)\n", former, Env(f))
	})
}

// SplitList splits a comma-separated value, trimming spaces and dropping
// empty elements.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
