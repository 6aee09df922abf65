package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the program's version, the a2aflow module it is built on, its default --build-id and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(app))
			return err
		},
	}
}

// versionLine reads the binary's build info: the main module's version (or
// app.Version), the VCS revision it was built from, the a2aflow module's
// version when a2aflow is a dependency, the default --build-id and the Go
// version.
func versionLine(app *App) string {
	version, revision, a2aflow := "(devel)", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				revision = s.Value[:12]
			}
		}
		for _, d := range bi.Deps {
			if d.Path == a2aflowModule {
				a2aflow = d.Version
				if r := d.Replace; r != nil && r.Version != "" {
					a2aflow = r.Path + " " + r.Version
				} else if r != nil {
					a2aflow = "(devel, from " + r.Path + ")"
				}
			}
		}
	}
	if app.Version != "" {
		version = app.Version
	}
	line := version
	if revision != "" {
		line += " (" + revision + ")"
	}
	if a2aflow != "" {
		line += " a2aflow " + a2aflow
	}
	if id, err := cmdutil.BuildID(); err == nil {
		line += " build-id " + id
	}
	return line + " " + runtime.Version()
}

// a2aflowModule is the module path of a2aflow itself.
const a2aflowModule = "github.com/a2aflow/a2aflow"
