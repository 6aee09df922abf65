package wire

import (
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// What the Temporal UI shows of a task (docs/guides/inspecting-runs.md):
// the static summary and details its workflow starts with (the API sets
// them), the current details its run keeps up to date (package
// workflows), and the summaries of its activities and timers. All of it
// is Temporal markdown that operators read; none of it may hold a secret.

// DelegatedFromKey is the message metadata key with which a2aflow's
// delegation activity names, in the first message of a remote task, the
// task that delegated it (a [DelegatedFrom]): the remote server's static
// details say where its task came from.
const DelegatedFromKey = "a2aflow.delegatedFrom"

// DelegatedFrom is the task a delegated message comes from.
type DelegatedFrom struct {
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"taskId"`
}

// DelegatedFromOf reads the [DelegatedFromKey] metadata of m, if it has a
// task ID.
func DelegatedFromOf(m *a2a.Message) (DelegatedFrom, bool) {
	if m == nil {
		return DelegatedFrom{}, false
	}
	v, ok := m.Metadata[DelegatedFromKey].(map[string]any)
	if !ok {
		return DelegatedFrom{}, false
	}
	var d DelegatedFrom
	d.TaskID, _ = v["taskId"].(string)
	d.Agent, _ = v["agent"].(string)
	return d, d.TaskID != ""
}

// SummaryRunes is how long a task's static summary is at most.
const SummaryRunes = 80

// TaskSummary is a task's one-line summary: its agent and the first line
// of its first message, cut to [SummaryRunes].
func TaskSummary(agent string, first *a2a.Message) string {
	line := FirstLine(first)
	if line == "" {
		return agent
	}
	return OneLine(agent+" · "+line, SummaryRunes)
}

// FirstLine is the first non-empty line of m's text, or, without text,
// what its parts are.
func FirstLine(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		for line := range strings.Lines(p.Text()) {
			if s := strings.TrimSpace(line); s != "" {
				return s
			}
		}
	}
	switch len(m.Parts) {
	case 0:
		return ""
	case 1:
		return "(1 part, no text)"
	}
	return "(" + strconv.Itoa(len(m.Parts)) + " parts, no text)"
}

// MD is s for Temporal markdown: on one line, at most n runes, with the
// characters markdown reads as markup escaped, so that a user's text shows
// as text (no links, images, HTML or headings of its own).
func MD(s string, n int) string {
	return mdEscaper.Replace(OneLine(s, n))
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"#", `\#`, "|", `\|`, "!", `\!`, "~", `\~`)

// MDCode is s as inline code (an ID, a name): backticks in s are dropped.
func MDCode(s string) string {
	return "`" + strings.ReplaceAll(OneLine(s, 200), "`", "") + "`"
}
