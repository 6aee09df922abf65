package wire

import (
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Search attributes that make tasks findable in the Temporal Web UI and in
// visibility queries (ListTasks). They are Keyword attributes so that they
// match exactly, e.g. `A2AContextId = 'ctx-1' AND A2ATaskState = 'TASK_STATE_INPUT_REQUIRED'`;
// a value goes into a query through QuoteQueryValue.
var (
	// ContextIDKey is the task's A2A context ID.
	ContextIDKey = temporal.NewSearchAttributeKeyKeyword("A2AContextId")
	// TaskStateKey is the task's A2A state as a2a.TaskState spells it, e.g. "TASK_STATE_INPUT_REQUIRED".
	TaskStateKey = temporal.NewSearchAttributeKeyKeyword("A2ATaskState")
	// AgentKey is the name of the agent that serves the task.
	AgentKey = temporal.NewSearchAttributeKeyKeyword("A2AAgent")
	// SkillKey is the skill the task runs, when the agent sets one.
	SkillKey = temporal.NewSearchAttributeKeyKeyword("A2ASkill")
	// OwnerKey is the principal that created the task ("" without auth).
	OwnerKey = temporal.NewSearchAttributeKeyKeyword("A2AOwner")
	// TextKey is the start of the text of the task's first message
	// ([SearchTextBytes]), a Text attribute: a query matches its words
	// (`A2AText = 'flight'`), the console's text filter. Set when the task
	// starts; tasks started before it was added have none.
	TextKey = temporal.NewSearchAttributeKeyString("A2AText")
	// ForkOfKey is the task a fork or a retry copies, set when it starts:
	// the forks of a task are `A2AForkOf = 'ID'`.
	ForkOfKey = temporal.NewSearchAttributeKeyKeyword("A2AForkOf")
)

// SearchTextBytes bounds the first message's text kept in [TextKey], as
// the memo's "text" is bounded: a search attribute is stored as it is, in
// the visibility store, where payload codecs do not reach.
const SearchTextBytes = 200

// SearchText is the value of [TextKey] for a first message's text: trimmed,
// cut to [SearchTextBytes] on a character's boundary, "…" marking the cut;
// "" for a message without text.
func SearchText(text string) string {
	text = strings.TrimSpace(text)
	n := SearchTextBytes
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}

// SearchAttributes returns every custom search attribute the task workflow
// uses, with its type, for registering on a namespace.
func SearchAttributes() map[string]enums.IndexedValueType {
	return map[string]enums.IndexedValueType{
		ContextIDKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		TaskStateKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		AgentKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		SkillKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		OwnerKey.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		TextKey.GetName():      enums.INDEXED_VALUE_TYPE_TEXT,
		ForkOfKey.GetName():    enums.INDEXED_VALUE_TYPE_KEYWORD,
		// Declared in approval.go.
		PendingApprovalsKey.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD_LIST,
		ApprovalGroupsKey.GetName():   enums.INDEXED_VALUE_TYPE_KEYWORD_LIST,
	}
}

// queryEscapes are the bytes a string literal of Temporal's visibility query
// language (a MySQL dialect parsed by temporalio/sqlparser) escapes, with
// the letter that follows the backslash: the reverse of its tokenizer's
// decoding table (sqltypes.SQLDecodeMap).
var queryEscapes = map[byte]byte{
	0: '0', '\'': '\'', '"': '"', '\b': 'b', '\n': 'n', '\r': 'r', '\t': 't', 26: 'Z', '\\': '\\',
}

// QuoteQueryValue renders s as a string literal of a Temporal visibility
// query (ListWorkflow, CountWorkflow, the Web UI's filter):
// single-quoted, with backslash, both quotes and the control characters
// MySQL writes as escapes (NUL, backspace, newline, carriage return, tab,
// Ctrl-Z) written as one, every other byte as it is. Whatever s holds —
// quotes, backslashes, any UTF-8 or none — the literal stays one token and
// reads back as s, so a value from a request or a caller cannot change the
// query. strconv.Quote is Go syntax, not this language: its \u and \x
// escapes read there as the bare letters.
//
// One thing no quoting can help: Temporal's SQL visibility stores (v1.32)
// trim single quotes off both ends of the parsed value, so a value that
// starts or ends with one matches as if it did not.
func QuoteQueryValue(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if esc, ok := queryEscapes[s[i]]; ok {
			b.WriteByte('\\')
			b.WriteByte(esc)
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// TaskStateCondition is the visibility query condition of the tasks in
// state, from A2ATaskState and the run's ExecutionStatus:
//
//   - a task in a state that is not terminal runs: A2ATaskState = state on
//     a running run;
//   - a completed task is a run that closed Completed (its handler
//     returned the final task) with A2ATaskState completed or, for a task
//     started with [LeanWrites] that completed while visibility
//     had it working, still working: such a task writes no A2ATaskState
//     before it completes (one history event and one visibility write
//     fewer). A running run whose A2ATaskState says completed (it drains
//     its last handlers) is completed too;
//   - a failed, canceled or rejected task has that A2ATaskState on a run
//     that runs or closed Completed; a run that ended outside its handler
//     (terminated, timed out, failed, canceled) is a failed task, whatever
//     state it last recorded.
//
// The Temporal UI finds the same tasks with the same condition, e.g. the
// completed ones with
// `ExecutionStatus = 'Completed' AND A2ATaskState IN ('TASK_STATE_COMPLETED', 'TASK_STATE_WORKING')`.
func TaskStateCondition(state a2a.TaskState) string {
	is := func(st a2a.TaskState) string { return TaskStateKey.GetName() + " = " + QuoteQueryValue(string(st)) }
	exec := func(st enums.WorkflowExecutionStatus) string {
		return "ExecutionStatus = " + QuoteQueryValue(st.String())
	}
	running, completed := exec(enums.WORKFLOW_EXECUTION_STATUS_RUNNING), exec(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	switch state {
	case a2a.TaskStateCompleted:
		return "((" + is(state) + " AND (" + running + " OR " + completed + ")) OR (" +
			is(a2a.TaskStateWorking) + " AND " + completed + "))"
	case a2a.TaskStateFailed:
		outside := []string{
			exec(enums.WORKFLOW_EXECUTION_STATUS_TERMINATED), exec(enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT),
			exec(enums.WORKFLOW_EXECUTION_STATUS_FAILED), exec(enums.WORKFLOW_EXECUTION_STATUS_CANCELED),
		}
		return "((" + is(state) + " AND (" + running + " OR " + completed + ")) OR " + strings.Join(outside, " OR ") + ")"
	case a2a.TaskStateCanceled, a2a.TaskStateRejected:
		return "(" + is(state) + " AND (" + running + " OR " + completed + "))"
	}
	return "(" + is(state) + " AND " + running + ")"
}
