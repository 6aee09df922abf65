package cli

import (
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// referenceFuncs are the functions the reference pages' templates
// (templates/*.md.tmpl) call on Markdown table cells.
var referenceFuncs = template.FuncMap{
	"anchor": anchor,
	"cell":   mdCell,
	"code":   mdCode,
	"codes":  mdCodes,
	"join":   func(s []string) string { return strings.Join(s, ", ") },
}

// render executes a reference page's template.
func render(page *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := page.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// flagDoc is a flag as the reference pages show it.
type flagDoc struct {
	Name, Shorthand string
	Env             string // its environment variable, if any
	Default         string // empty when the default is empty or an empty list
	Usage           string // its help text, without the environment variable it names
}

// describeFlag returns what the reference pages show of f.
func describeFlag(f *pflag.Flag) flagDoc {
	d := flagDoc{Name: f.Name, Shorthand: f.Shorthand, Env: cmdutil.Env(f), Default: f.DefValue, Usage: f.Usage}
	if d.Default == "[]" {
		d.Default = ""
	}
	if d.Env != "" {
		d.Usage = strings.TrimSuffix(d.Usage, " ("+d.Env+")")
	}
	return d
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// mdCode is s as code, or a dash when s is empty.
func mdCode(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + s + "`"
}

// mdCodes is a comma-separated list of s's items as code.
func mdCodes(s []string) string {
	return "`" + strings.Join(s, "`, `") + "`"
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
