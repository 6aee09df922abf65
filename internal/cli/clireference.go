package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// cliReference renders docs/cli.md: every command of the command line, as
// `a2aflow help` would show it, on one page with anchors. It is written here
// rather than with github.com/spf13/cobra/doc, which renders one file per
// command (or a page per command with links between files), knows nothing of
// a flag's environment variable, and would add go-md2man to go.mod for its
// man pages. The process commands' flags are the config file's keys, so
// their rows stay in docs/config.md and this page links there.
// TestCLIReference fails when the file differs.
func cliReference(app *App) string {
	root := NewRoot(app)
	root.Use = "a2aflow" // the page names the a2aflow command, whatever runs the generator
	process := map[string]bool{}
	for _, cmd := range server.ProcessCommands(app) {
		process[cmd.Name()] = true
	}

	var cmds []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			cmds = append(cmds, sub)
			walk(sub)
		}
	}
	walk(root)

	var b strings.Builder
	b.WriteString(`# a2aflow command line reference

<!-- Generated from the code by ` + "`go generate ./internal/cli`" + ` (go test ./internal/cli -run TestCLIReference -update); do not edit. -->

Every command of ` + "`a2aflow`" + `, as ` + "`a2aflow COMMAND --help`" + ` shows it. A program built on
` + "`a2aflow.Main`" + ` has the same commands under its own name. The settings of the process commands
(` + "`serve`, `api`, `worker`, `temporal`" + `) are flags, environment variables and config file keys at
once: they are listed in [config.md](config.md). A flag's environment variable, where it has one,
gives its default.

`)
	for _, cmd := range cmds {
		path := cmd.CommandPath()
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", path, anchor(path), mdCell(cmd.Short))
	}
	for _, cmd := range cmds {
		path := cmd.CommandPath()
		fmt.Fprintf(&b, "\n## %s\n\n", path)
		long := strings.TrimSpace(cmd.Long)
		if long == "" {
			long = cmd.Short
		}
		b.WriteString("```text\n" + long + "\n```\n")
		if cmd.Runnable() {
			fmt.Fprintf(&b, "\nUsage: `%s`\n", cmd.UseLine())
		}
		if len(cmd.Aliases) > 0 {
			fmt.Fprintf(&b, "\nAlso: `%s`\n", strings.Join(cmd.Aliases, "`, `"))
		}
		var subs []string
		for _, sub := range cmd.Commands() {
			if !sub.Hidden && sub.Name() != "help" {
				subs = append(subs, fmt.Sprintf("[`%s`](#%s)", sub.Name(), anchor(sub.CommandPath())))
			}
		}
		if len(subs) > 0 {
			fmt.Fprintf(&b, "\nCommands: %s.\n", strings.Join(subs, ", "))
		}
		flags := commandFlags(cmd)
		if len(flags) == 0 {
			continue
		}
		if process[cmd.Name()] && cmd.Parent() == root {
			names := make([]string, len(flags))
			for i, f := range flags {
				names[i] = "`" + f.Name + "`"
			}
			fmt.Fprintf(&b, "\nSettings (flags, `A2AFLOW_*` variables and config file keys; see [config.md](config.md)): %s.\n", strings.Join(names, ", "))
			continue
		}
		b.WriteString("\n| flag | environment | default | description |\n|---|---|---|---|\n")
		for _, f := range flags {
			name := "`--" + f.Name + "`"
			if f.Shorthand != "" {
				name = "`-" + f.Shorthand + "`, " + name
			}
			env := cmdutil.Env(f)
			envCell, usage := "—", f.Usage
			if env != "" {
				envCell = "`" + env + "`"
				usage = strings.TrimSuffix(usage, " ("+env+")")
			}
			def := f.DefValue
			if def == "" || def == "[]" || (def == "false" && f.Value.Type() == "bool") {
				def = "—"
			} else {
				def = "`" + def + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, envCell, def, mdCell(usage))
		}
	}
	return b.String()
}

// commandFlags returns the flags cmd takes, its own and those it inherits,
// sorted by name, without --help and the deprecated names of renamed flags
// (config.md lists those).
func commandFlags(cmd *cobra.Command) []*pflag.Flag {
	seen := map[string]bool{}
	var out []*pflag.Flag
	add := func(f *pflag.Flag) {
		if f.Name == "help" || f.Hidden || cmdutil.AliasOf(f) != "" || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		out = append(out, f)
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// anchor is the GitHub anchor of a heading: lower case, spaces as '-',
// punctuation other than '-' and '_' dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
