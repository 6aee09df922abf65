package server

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// newConfigCmd is `a2aflow config print`: the effective settings of a
// process command, each with its source, secrets masked.
func newConfigCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The config file (a2aflow.toml): print the settings a command would run with",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "print [serve|api|worker|temporal] [--config FILE] [the command's flags]",
		Short: "Print each setting of a command (default serve), its value and its source (flag, env, file, default), secrets masked",
		Long: `config print builds the command as it would run, from the flags given here,
the A2AFLOW_* environment, the config file (--config or ` + envConfigFile + `) and
the defaults, and prints every key, its value and where the value came from.
API keys, tokens, passwords, DSN passwords and key material print as ****.
The reference of every key is docs/config.md.`,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return c.Help()
				}
			}
			return printConfig(c.OutOrStdout(), c.ErrOrStderr(), app, args)
		},
	})
	return cmd
}

// printConfig prints the effective settings of the process command args
// name (default serve) with the rest of args as its flags.
func printConfig(w, errOut io.Writer, app *App, args []string) error {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var target *cobra.Command
	var names []string
	for _, c := range processCommands(app) {
		names = append(names, c.Name())
		if c.Name() == name {
			target = c
		}
	}
	if target == nil {
		return fmt.Errorf("config print: no command %q; one of %s", name, strings.Join(names, ", "))
	}
	// Warnings (deprecated names) go to errOut; cobra prints the flags' on
	// its output or else error stream.
	target.SetOut(errOut)
	target.SetErr(errOut)
	if err := target.ParseFlags(args); err != nil {
		return fmt.Errorf("config print %s: %w", name, err)
	}
	cmdutil.WarnDeprecatedEnv(target, errOut)
	v, _ := processConfigs.Load(target)
	cfg := v.(*config)
	if err := cfg.loadConfigFile(target); err != nil {
		return err
	}
	file := "none"
	if cfg.ConfigFile != "" {
		file = cmdutil.AbsPath(cfg.ConfigFile)
	}
	fmt.Fprintf(w, "# %s %s: effective configuration (config file: %s)\n", cmdutil.ProgName(), name, file)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	target.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || cmdutil.AliasOf(f) != "" {
			return
		}
		value := f.Value.String()
		if cfg.sources[f.Name] == sourceEnv && value == "" {
			// Secrets are no flag defaults (--help would print them): the
			// command reads their variable itself.
			_, value, _ = cmdutil.EnvValue(f)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, displayValue(f.Name, value), cfg.sources[f.Name])
	})
	for _, s := range cfg.fileAgents {
		for _, k := range agentKeys {
			if !s.set[k.Key] || k.Key == "name" {
				continue
			}
			fmt.Fprintf(tw, "agents.%s.%s\t%s\t%s\n", s.Name, k.Key, oneLine(s.printedValue(k.Key)), sourceFile)
		}
	}
	return tw.Flush()
}

// printedValue is the value of the section's key as config print shows it;
// "" for a key it does not show.
func (s agentSection) printedValue(key string) string {
	switch key {
	case "idle-timeout":
		return s.IdleTimeout.String()
	case "while-working":
		return s.WhileWorking
	case "description":
		return s.Description
	case "version":
		return s.Version
	case "system-prompt":
		return s.SystemPrompt
	case "provider":
		return s.Provider
	case "model":
		return s.Model
	case "tools":
		return "[" + strings.Join(s.Tools, ",") + "]"
	case "remote-agents":
		return "[" + strings.Join(s.RemoteAgents, ",") + "]"
	case "max-turns":
		return fmt.Sprint(s.MaxTurns)
	case "skills":
		var ids []string
		for _, sk := range s.Skills {
			ids = append(ids, sk.ID)
		}
		return "[" + strings.Join(ids, ",") + "]"
	}
	return ""
}

// oneLine shortens a multi-line or long value for the table.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}

// secretKey matches the keys whose values are secrets themselves (not the
// names of files holding them).
var secretKey = regexp.MustCompile(`(api-keys?$|token|password|secret|secrets-key|secrets-previous-keys|private-key)`)

// dsnPassword finds the password of a key=value DSN.
var dsnPassword = regexp.MustCompile(`(?i)(password=)(\S+)`)

// displayValue is value as config print shows it: secrets masked, a DSN's
// password masked, URLs without user info.
func displayValue(key, value string) string {
	if value == "" || value == "[]" || value == "true" || value == "false" {
		return value // no secret (insecure-store-secrets)
	}
	if secretKey.MatchString(key) && !strings.HasSuffix(key, "-file") && !strings.HasSuffix(key, "-env") {
		return "****"
	}
	return maskDSN(value)
}

// maskDSN masks the password of a URL's user info (postgres://u:p@h/db)
// and of a key=value DSN (host=h password=p).
func maskDSN(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return strings.Replace(u.String(), "xxxxx", "****", 1)
		}
		return v
	}
	return dsnPassword.ReplaceAllString(v, "${1}****")
}
