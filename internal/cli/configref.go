package cli

import (
	_ "embed"
	"sort"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// configPageText is docs/config.md's text, with the tables left to the code.
//
//go:embed templates/config.md.tmpl
var configPageText string

var configPage = template.Must(template.New("config.md").Funcs(referenceFuncs).Parse(configPageText))

// configPageData is what docs/config.md shows.
type configPageData struct {
	ConfigFileEnv string    // the variable naming the config file
	Settings      []setting // the process commands' flags, by name
	Deprecated    []rename  // the renamed flags of every command

	// The keys of the config file's sections.
	AgentKeys, ToolApprovalKeys, MCPServerKeys []server.AgentKey
	LLMPriceKeys, LLMLimitKeys, LLMBudgetKeys  []server.AgentKey
}

// setting is a key of the config file: a flag of the process commands that
// take it.
type setting struct {
	flagDoc
	Commands []string
}

// rename is a renamed setting: its former flag and variable, what replaced
// them, and the commands that take it.
type rename struct {
	Old, New, Commands []string
}

// configReference renders docs/config.md: every key of the config file
// (the process commands' flags), its environment variable, its default
// (with no A2AFLOW_* variable set), which commands take it and what it
// does; then the keys of the agents sections. TestConfigReference fails
// when the file differs.
func configReference(app *App) (string, error) {
	return render(configPage, configPageData{
		ConfigFileEnv:    server.EnvConfigFile,
		Settings:         settings(app),
		Deprecated:       renames(app),
		AgentKeys:        server.AgentKeys(),
		ToolApprovalKeys: server.ToolApprovalKeys(),
		MCPServerKeys:    server.MCPServerKeys(),
		LLMPriceKeys:     server.LLMPriceKeys(),
		LLMLimitKeys:     server.LLMLimitKeys(),
		LLMBudgetKeys:    server.LLMBudgetKeys(),
	})
}

// settings returns the process commands' flags, sorted by name, each with
// the commands that take it; without --help and the deprecated names of
// renamed flags (renames lists those).
func settings(app *App) []setting {
	byName := map[string]*setting{}
	for _, cmd := range server.ProcessCommands(app) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || cmdutil.AliasOf(f) != "" {
				return
			}
			s := byName[f.Name]
			if s == nil {
				s = &setting{flagDoc: describeFlag(f)}
				byName[f.Name] = s
			}
			s.Commands = append(s.Commands, cmd.Name())
		})
	}
	out := make([]setting, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// renames lists the names that a rename replaced, for every command
// (process commands and the others): they still work for one release, with
// a warning.
func renames(app *App) []rename {
	type names struct{ flag, env, newFlag, newEnv string }
	commands := map[names][]string{}
	var order []names
	var walk func(cmd *cobra.Command, path string)
	walk = func(cmd *cobra.Command, path string) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			flag, env := cmdutil.Former(f)
			if flag == "" && env == "" {
				return
			}
			n := names{flag, env, f.Name, cmdutil.Env(f)}
			if _, ok := commands[n]; !ok {
				order = append(order, n)
			}
			if cmds := commands[n]; len(cmds) == 0 || cmds[len(cmds)-1] != path {
				commands[n] = append(cmds, path)
			}
		})
		for _, sub := range cmd.Commands() {
			name := sub.Name()
			if path != "" {
				name = path + " " + name
			}
			walk(sub, name)
		}
	}
	walk(NewRoot(app), "")
	sort.Slice(order, func(i, j int) bool { return order[i].newFlag+order[i].flag < order[j].newFlag+order[j].flag })
	out := make([]rename, len(order))
	for i, n := range order {
		r := rename{Commands: commands[n]}
		if n.flag != "" {
			r.Old, r.New = append(r.Old, "--"+n.flag), append(r.New, "--"+n.newFlag)
		}
		if n.env != "" {
			r.Old, r.New = append(r.Old, n.env), append(r.New, n.newEnv)
		}
		out[i] = r
	}
	return out
}
