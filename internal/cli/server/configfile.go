package server

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	gotoml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// The config file (--config, A2AFLOW_CONFIG) of the process commands
// (serve, temporal, api, worker): a TOML file whose keys are the flag names,
// read with koanf. A key may be written as is (ui-oidc-issuer = "...") or
// nested where natural ([ui] oidc-issuer = "..."); '_' reads as '-'.
// Precedence: flag > environment > file > default. [[agents]] (or
// [agents.NAME]) sections set per-agent settings and define LLM agents
// (configagents.go).

// envConfigFile names the config file when --config is not given.
const envConfigFile = "A2AFLOW_CONFIG"

// Sources of a setting, as config print shows them.
const (
	sourceFlag    = "flag"
	sourceEnv     = "env"
	sourceFile    = "file"
	sourceDefault = "default"
)

// processConfigs maps each process command to the config its flags are bound
// to, for config print (which builds the command afresh and reads what its
// config became).
var processConfigs sync.Map // *cobra.Command -> *config

// bindConfigFile gives a process command --config and makes it read the file
// before it runs.
func (c *config) bindConfigFile(cmd *cobra.Command) {
	cmdutil.Bind(cmd.Flags()).String(&c.ConfigFile, "config", envConfigFile, "",
		"TOML config file whose keys are these flags' names (docs/config.md); flags and environment variables override it")
	processConfigs.Store(cmd, c)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return c.loadConfigFile(cmd) }
}

// processCommands returns fresh process commands serving app.
func processCommands(app *App) []*cobra.Command {
	return []*cobra.Command{newServeCmd(app), newAPICmd(app), newWorkerCmd(app), newTemporalCmd(app)}
}

// configKeys returns every key a config file may hold (the flags of the
// process commands but --config and --help), with the commands taking it.
func configKeys(app *App) map[string][]string {
	keys := map[string][]string{}
	for _, cmd := range processCommands(app) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "config" && f.Name != "help" {
				keys[f.Name] = append(keys[f.Name], cmd.Name())
			}
		})
	}
	return keys
}

// loadConfigFile sets the command's flags that neither the command line nor
// the environment set from the config file, records where each setting
// came from (c.sources), reads the file's agent sections (c.fileAgents),
// and refuses an environment variable, key or value it cannot use.
func (c *config) loadConfigFile(cmd *cobra.Command) error {
	fs := cmd.Flags()
	c.sources = map[string]string{}
	c.warnings = cmd.ErrOrStderr()
	var envErr error
	fs.VisitAll(func(f *pflag.Flag) {
		if cmdutil.AliasOf(f) != "" {
			return // a former name: its flag's source says
		}
		name, v, set := cmdutil.EnvValue(f)
		switch {
		case f.Changed:
			c.sources[f.Name] = sourceFlag
		case set:
			c.sources[f.Name] = sourceEnv
			if err := checkEnvValue(f, name, v); err != nil && envErr == nil {
				envErr = err
			}
		default:
			c.sources[f.Name] = sourceDefault
		}
	})
	if envErr != nil {
		return envErr
	}
	if c.ConfigFile != "" {
		if err := c.readConfigFile(fs); err != nil {
			return err
		}
	}
	if err := checkLogFlags(cmd, nil); err != nil {
		if c.sources["log-format"] == sourceFile {
			return fmt.Errorf("config file %s: key \"log-format\": %w", c.ConfigFile, err)
		}
		return err
	}
	return nil
}

// checkEnvValue refuses an environment variable whose value the flag's type
// cannot take (the env helpers fall back to the default on one).
func checkEnvValue(f *pflag.Flag, name, v string) error {
	var err error
	want := ""
	switch f.Value.Type() {
	case "duration":
		_, err = parseDuration(v)
		want = "a duration such as 30s, 5m or 72h"
	case "int", "int64", "int32":
		_, err = strconv.ParseInt(v, 10, 64)
		want = "a whole number"
	case "uint", "uint64", "uint32":
		_, err = strconv.ParseUint(v, 10, 64)
		want = "a whole number ≥ 0"
	case "float64", "float32":
		_, err = strconv.ParseFloat(v, 64)
		want = "a number"
	case "bool":
		_, err = strconv.ParseBool(v)
		want = "true or false"
	}
	if err != nil {
		return fmt.Errorf("environment variable %s=%q: want %s (for --%s)", name, v, want, f.Name)
	}
	return nil
}

// parseDuration parses a duration as the flags do.
func parseDuration(v string) (any, error) {
	var d pflag.FlagSet
	x := d.Duration("d", 0, "")
	err := d.Set("d", v)
	return *x, err
}

// readConfigFile loads c.ConfigFile with koanf's file provider and TOML
// parser and applies it to fs.
func (c *config) readConfigFile(fs *pflag.FlagSet) error {
	path := c.ConfigFile
	// A delimiter no key holds: dotted keys such as the Temporal dynamic
	// config's history.x stay whole.
	k := koanf.NewWithConf(koanf.Conf{Delim: "\x00"})
	if err := k.Load(file.Provider(path), toml.Parser()); err != nil {
		var de *gotoml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("config file %s:%d:%d: %s", path, row, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("config file %s: no such file (--config or %s)", path, envConfigFile)
		}
		return fmt.Errorf("config file %s: %w", path, err)
	}
	c.fileAgents, c.fileMCPServers, c.filePrices, c.fileLimits, c.fileBudgets = nil, nil, nil, nil, nil
	known := configKeys(c.app)
	return c.applyTable(fs, path, "", k.Raw(), known)
}

// applyTable applies the table m, whose keys continue prefix, to fs.
func (c *config) applyTable(fs *pflag.FlagSet, path, prefix string, m map[string]any, known map[string][]string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := m[key]
		name := prefix + strings.ReplaceAll(key, "_", "-")
		switch {
		case prefix == "" && name == "agents":
			agents, err := parseAgentSections(path, v, c.app.Tools)
			if err != nil {
				return err
			}
			c.fileAgents = agents
			continue
		case prefix == "" && name == "mcp-servers":
			servers, err := parseMCPServers(path, v)
			if err != nil {
				return err
			}
			c.fileMCPServers = servers
			continue
		case prefix == "" && name == "llm-prices":
			prices, err := parseLLMPrices(path, v)
			if err != nil {
				return err
			}
			c.filePrices = prices
			continue
		case prefix == "" && name == "llm-limits":
			limits, err := parseLLMLimits(path, v)
			if err != nil {
				return err
			}
			c.fileLimits = limits
			continue
		case prefix == "" && name == "llm-budgets":
			budgets, err := parseLLMBudgets(path, v)
			if err != nil {
				return err
			}
			c.fileBudgets = budgets
			continue
		case prefix == "" && name == "config":
			return fmt.Errorf("config file %s: key \"config\": a config file cannot name another", path)
		}
		if _, ok := known[name]; ok {
			f := fs.Lookup(name)
			if f == nil {
				continue // another command's setting
			}
			if to := cmdutil.AliasOf(f); to != "" {
				fmt.Fprintf(c.warnings, "a2aflow: warning: config file %s: key %q is deprecated, use %q (the old name works until the next release)\n", path, name, to)
				f = fs.Lookup(to)
			}
			if err := c.applyKey(fs, f, path, v); err != nil {
				return err
			}
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			if err := c.applyTable(fs, path, name+"-", sub, known); err != nil {
				return err
			}
			continue
		}
		candidates := []string{"agents", "mcp-servers", "llm-prices", "llm-limits", "llm-budgets"}
		for k := range known {
			candidates = append(candidates, k)
		}
		return fmt.Errorf("config file %s: unknown key %q%s", path, name, didYouMean(name, candidates))
	}
	return nil
}

// applyKey sets flag f from the file's value v unless a flag or an
// environment variable set it already.
func (c *config) applyKey(fs *pflag.FlagSet, f *pflag.Flag, path string, v any) error {
	bad := func(err error) error {
		return fmt.Errorf("config file %s: key %q: bad value %s: %v", path, f.Name, showValue(v), err)
	}
	values, err := flagValues(f, v)
	if err != nil {
		return bad(err)
	}
	if src := c.sources[f.Name]; src == sourceFlag || src == sourceEnv {
		// Overridden; still a value the flag must take.
		probe := pflag.NewFlagSet("probe", pflag.ContinueOnError)
		probe.AddFlag(&pflag.Flag{Name: f.Name, Value: newValueLike(f), Usage: f.Usage})
		for _, s := range values {
			if err := probe.Set(f.Name, s); err != nil {
				return bad(err)
			}
		}
		return nil
	}
	for _, s := range values {
		if err := fs.Set(f.Name, s); err != nil {
			return bad(err)
		}
	}
	if len(values) == 0 {
		// An empty list empties the flag's default.
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			if err := sv.Replace(nil); err != nil {
				return bad(err)
			}
		}
	}
	c.sources[f.Name] = sourceFile
	return nil
}

// newValueLike returns a fresh value of f's type, for checking a value
// without setting f; a type it does not know checks as a string.
func newValueLike(f *pflag.Flag) pflag.Value {
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	switch f.Value.Type() {
	case "duration":
		fs.Duration("x", 0, "")
	case "int":
		fs.Int("x", 0, "")
	case "int64":
		fs.Int64("x", 0, "")
	case "uint":
		fs.Uint("x", 0, "")
	case "float64":
		fs.Float64("x", 0, "")
	case "bool":
		fs.Bool("x", false, "")
	case "stringToString":
		fs.StringToString("x", nil, "")
	default:
		fs.String("x", "", "")
	}
	return fs.Lookup("x").Value
}

// flagValues turns a TOML value into the strings to Set flag f with: one
// for a scalar, one per element for a list flag, KEY=VALUE per entry for a
// map flag.
func flagValues(f *pflag.Flag, v any) ([]string, error) {
	_, isList := f.Value.(pflag.SliceValue)
	isMap := f.Value.Type() == "stringToString"
	switch x := v.(type) {
	case []any:
		if !isList {
			return nil, errors.New("a list, where one value is wanted")
		}
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, err := scalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case map[string]any:
		if !isMap {
			return nil, errors.New("a table, where one value is wanted")
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]string, 0, len(x))
		for _, k := range keys {
			s, err := scalar(x[k])
			if err != nil {
				return nil, err
			}
			out = append(out, k+"="+s)
		}
		return out, nil
	default:
		s, err := scalar(v)
		if err != nil {
			return nil, err
		}
		if isMap && s != "" {
			return nil, errors.New(`a string, where a table such as { travel = "72h" } is wanted`)
		}
		return []string{s}, nil
	}
}

// scalar writes a TOML scalar as a flag reads it.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case fmt.Stringer: // TOML dates and times
		return x.String(), nil
	default:
		return "", fmt.Errorf("a %T, where a string, number or boolean is wanted", v)
	}
}

// showValue quotes a file value for an error line.
func showValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// didYouMean suggests the candidate nearest to name, if one is near.
func didYouMean(name string, candidates []string) string {
	best, bestD := "", -1
	sort.Strings(candidates)
	for _, c := range candidates {
		d := levenshtein(name, c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(name)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
