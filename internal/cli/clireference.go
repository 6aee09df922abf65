package cli

import (
	_ "embed"
	"sort"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// cliPageText is docs/cli.md's text, with the commands left to the code.
//
//go:embed templates/cli.md.tmpl
var cliPageText string

var cliPage = template.Must(template.New("cli.md").Funcs(referenceFuncs).Parse(cliPageText))

// cliPageData is what docs/cli.md shows.
type cliPageData struct {
	Commands []commandDoc // every command but help and completion, depth first
}

// commandDoc is a command as docs/cli.md shows it.
type commandDoc struct {
	Path, Short string
	Long        string // its help text, Short when it has none
	UseLine     string // empty for a command that only groups others
	Aliases     []string
	Subcommands []commandLink
	Settings    []string  // a process command's flags, by name: config.md describes them
	Flags       []flagDoc // another command's flags
}

// commandLink names a subcommand and where its section is.
type commandLink struct{ Name, Path string }

// cliReference renders docs/cli.md: every command of the command line, as
// `a2aflow help` would show it, on one page with anchors. It is written here
// rather than with github.com/spf13/cobra/doc, which renders one file per
// command (or a page per command with links between files), knows nothing of
// a flag's environment variable, and would add go-md2man to go.mod for its
// man pages. The process commands' flags are the config file's keys, so
// their rows stay in docs/config.md and this page links there.
// TestCLIReference fails when the file differs.
func cliReference(app *App) (string, error) {
	root := NewRoot(app)
	root.Use = "a2aflow" // the page names the a2aflow command, whatever runs the generator
	process := map[string]bool{}
	for _, cmd := range server.ProcessCommands(app) {
		process[cmd.Name()] = true
	}
	var data cliPageData
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			data.Commands = append(data.Commands, describeCommand(sub, process[sub.Name()] && cmd == root))
			walk(sub)
		}
	}
	walk(root)
	return render(cliPage, data)
}

// describeCommand returns what docs/cli.md shows of cmd; the flags of a
// process command (serve, api, worker, temporal) as a list of settings.
func describeCommand(cmd *cobra.Command, process bool) commandDoc {
	d := commandDoc{Path: cmd.CommandPath(), Short: cmd.Short, Long: strings.TrimSpace(cmd.Long), Aliases: cmd.Aliases}
	if d.Long == "" {
		d.Long = cmd.Short
	}
	if cmd.Runnable() {
		d.UseLine = cmd.UseLine()
	}
	for _, sub := range cmd.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			d.Subcommands = append(d.Subcommands, commandLink{sub.Name(), sub.CommandPath()})
		}
	}
	for _, f := range commandFlags(cmd) {
		if process {
			d.Settings = append(d.Settings, f.Name)
			continue
		}
		fd := describeFlag(f)
		if fd.Default == "false" && f.Value.Type() == "bool" {
			fd.Default = "" // a switch: its default goes without saying
		}
		d.Flags = append(d.Flags, fd)
	}
	return d
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
