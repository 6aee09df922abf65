package taskservice

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

func TestStartUserMetadata(t *testing.T) {
	travel := &workflows.Agent{Name: "travel"}
	text := func(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s)) }
	delegated := text("Find flights")
	delegated.Metadata = map[string]any{wire.DelegatedFromKey: map[string]any{"taskId": "t-9", "agent": "router"}}
	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		name        string
		owner, ctx  string
		first       *a2a.Message
		origin      Origin
		wantSummary string
		wantDetails []string // lines the details hold
	}{
		{name: "sent", owner: "alice", ctx: "c-1", first: text("\n  Book a flight to Lisbon\nfor two"),
			wantSummary: "travel · Book a flight to Lisbon",
			wantDetails: []string{"**Agent:** `travel`", "**Owner:** `alice`", "**Context:** `c-1`",
				"**Came from:** a message sent to the agent", "**First message:** Book a flight to Lisbon"}},
		{name: "long text is cut", first: text(long),
			wantSummary: "travel · " + strings.Repeat("é", wire.SummaryRunes-len([]rune("travel · "))-1) + "…",
			wantDetails: []string{"**Owner:** none (no authentication)", "**Context:** none"}},
		{name: "schedule", ctx: "c-2", first: text("Report"), origin: Origin{Schedule: "sched-1", ScheduleName: "nightly_report"},
			wantSummary: "travel · Report",
			wantDetails: []string{"**Came from:** a run of schedule `sched-1` (nightly\\_report)"}},
		{name: "fork", first: text("Book"), origin: Origin{ForkOf: "t-1", AtMessage: 3},
			wantDetails: []string{"**Came from:** a fork of task `t-1` at its message 3"}, wantSummary: "travel · Book"},
		{name: "retry", first: text("Book"), origin: Origin{ForkOf: "t-1", AtMessage: 5, Retry: true},
			wantDetails: []string{"**Came from:** a retry of failed task `t-1`"}, wantSummary: "travel · Book"},
		{name: "delegation", first: delegated, wantSummary: "travel · Find flights",
			wantDetails: []string{"**Came from:** a delegation from task `t-9` of agent `router` (another server's, or this one's)"}},
		{name: "markup is text", first: text("[click](http://x) <b>hi</b> # `x`"),
			wantSummary: "travel · [click](http://x) <b>hi</b> # `x`",
			wantDetails: []string{"**First message:** \\[click\\](http://x) \\<b\\>hi\\</b\\> \\# \\`x\\`"}},
		{name: "no text", first: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"a": 1})),
			wantSummary: "travel · (1 part, no text)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary, details := StartUserMetadata(travel, tc.owner, tc.ctx, tc.first, tc.origin)
			if diff := cmp.Diff(tc.wantSummary, summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			lines := strings.Split(details, "  \n")
			for _, want := range tc.wantDetails {
				found := false
				for _, l := range lines {
					found = found || l == want
				}
				if !found {
					t.Errorf("details lack %q:\n%s", want, details)
				}
			}
		})
	}
}
