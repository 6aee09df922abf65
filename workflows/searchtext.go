package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// searchTextChange is the workflow.GetVersion change by which a task
// started without the A2AText search attribute (before the API set it at
// the start, or by a schedule made before) gets it in its next upsert.
const searchTextChange = "a2aflow-search-text"

// withSearchText adds A2AText to sa, the first upsert of the run's merged
// writes, when the task has none: the start of its first message's text,
// as the API sets it at the start (wire.SearchText), so that the console's
// text filter finds tasks started before it. Asked once per run, only
// when an upsert is written anyway; a continued run starts with the
// attribute its run before wrote.
func (r *run) withSearchText(ctx workflow.Context, sa []temporal.SearchAttributeUpdate) []temporal.SearchAttributeUpdate {
	if r.textChecked || len(sa) == 0 || r.first == nil {
		return sa
	}
	r.textChecked = true
	if _, ok := workflow.GetTypedSearchAttributes(ctx).GetString(wire.TextKey); ok {
		return sa
	}
	text := wire.SearchText(MessageText(r.first))
	if text == "" || workflow.GetVersion(ctx, searchTextChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return sa
	}
	return append(sa, wire.TextKey.ValueSet(text))
}
