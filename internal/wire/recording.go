package wire

import "go.temporal.io/sdk/workflow"

// Recording is what a task records: the set of recording changes a2aflow
// made to the task workflow since tasks carry them in their input
// ([TaskInput.Recording]), each a constant below. The API starts a task at
// [CurrentRecording], less the changes its operator turned off
// (--lean-writes, --local-model-calls), and a continued run has the level
// of the run before. The input, in the task's history, decides what each
// run records: a change needs no workflow.GetVersion marker (two history
// events and a visibility write per task), and a task recorded at an older
// level replays as it ran.
//
// A new recording change adds one constant before nextRecording and the
// method that reports it, both here: CurrentRecording then holds it, the
// API starts tasks with it, and the code it changes asks the method.
//
// Tasks started before Recording said the same with one boolean per change
// (LongTasks, MergedWrites, LeanWrites, LocalModelCalls in their input's
// JSON): [TaskInput.RecordingLevel] reads those too.
type Recording uint32

const (
	// LongTasks runs the task with continue-as-new, history pages, idle
	// timeouts and the first-message grace period without asking
	// workflow.GetVersion (a task without it asks, and gets them when its
	// worker is new enough). A continued run always has them.
	LongTasks Recording = 1 << iota
	// MergedWrites writes the task's A2ATaskState search attribute once per
	// workflow task, when the state differs from the one visibility has,
	// instead of at every status change (a turn that answers a waiting task
	// and asks again writes none), and its memo only when the task waits or
	// continues as new (a completed task's metadata is in its result). The
	// API starts such tasks with A2ATaskState working, the state their first
	// message puts them in.
	MergedWrites
	// LeanWrites, with MergedWrites (alone it changes nothing), leaves out
	// the writes visibility can do without: a task that completes while its
	// A2ATaskState says working writes no A2ATaskState before it ends (a
	// run that closed Completed with A2ATaskState working is a completed
	// task: ListTasks queries so, see [TaskStateCondition]), and the
	// A2APendingApprovals and A2AApprovalGroups attributes go out in the
	// merged upsert of the workflow task instead of in one of their own at
	// every change. Off with --lean-writes=false.
	LeanWrites
	// LocalModelCalls runs the task's LLM calls (llm.Function, llm.Worker)
	// as local activities: the worker that runs the workflow task makes the
	// CompleteChat call and records its answer in one marker event, instead
	// of scheduling an activity on the task queue (three events and a second
	// task per call). A skill may still ask for an ordinary activity per
	// call (llm.WithLocalActivity(false)), and the run makes a call an
	// ordinary activity when a local one would hold an answer back
	// ([RunRecording]). A fork has its original's. Off with
	// --local-model-calls=false.
	LocalModelCalls
	// WaitingMemo, with MergedWrites (alone it changes nothing), has the
	// task say in its memo what it waits for when it parks ([Waiting],
	// under [WaitingMemoKey]: the question abbreviated, its approvals,
	// waitpoints, credential request, remote tasks), in the memo upsert of
	// the park, and remove it in one upsert when it moves on; a list of
	// tasks reads it from visibility instead of reading each waiting task.
	// A task recorded before it asks workflow.GetVersion
	// ("a2aflow-waiting-memo") at its next park, and writes it from there
	// when its worker is new enough.
	WaitingMemo

	nextRecording // the next change's bit: add changes above it
)

// CurrentRecording is every recording change: the level the API starts
// tasks at.
const CurrentRecording = nextRecording - 1

// LongTasks reports whether r holds [LongTasks].
func (r Recording) LongTasks() bool { return r&LongTasks != 0 }

// MergedWrites reports whether r holds [MergedWrites].
func (r Recording) MergedWrites() bool { return r&MergedWrites != 0 }

// LeanWrites reports whether r holds [LeanWrites].
func (r Recording) LeanWrites() bool { return r&LeanWrites != 0 }

// LocalModelCalls reports whether r holds [LocalModelCalls].
func (r Recording) LocalModelCalls() bool { return r&LocalModelCalls != 0 }

// WaitingMemo reports whether r holds [WaitingMemo] (and [MergedWrites]).
func (r Recording) WaitingMemo() bool { return r&WaitingMemo != 0 && r.MergedWrites() }

// Without returns r less the changes of off.
func (r Recording) Without(off Recording) Recording { return r &^ off }

// legacyRecording holds the booleans by which the input of a task started
// before [Recording] said what it records. Recorded histories hold them:
// encoding/json reads them through TaskInput, which embeds this struct
// (the exported fields of an unexported embedded struct are promoted), and
// [TaskInput.RecordingLevel] alone reads them. Nothing writes them any more.
type legacyRecording struct {
	LegacyLongTasks       bool `json:"LongTasks,omitempty"`
	LegacyMergedWrites    bool `json:"MergedWrites,omitempty"`
	LegacyLeanWrites      bool `json:"LeanWrites,omitempty"`
	LegacyLocalModelCalls bool `json:"LocalModelCalls,omitempty"`
}

// RecordingLevel returns what the task records: its Recording, with the
// changes named by the booleans of an input recorded before Recording
// existed. [LeanWrites] counts only with [MergedWrites], as it did.
func (in TaskInput) RecordingLevel() Recording {
	r := in.Recording
	for _, b := range [...]struct {
		set    bool
		change Recording
	}{
		{in.LegacyLongTasks, LongTasks},
		{in.LegacyMergedWrites, MergedWrites},
		{in.LegacyLeanWrites, LeanWrites},
		{in.LegacyLocalModelCalls, LocalModelCalls},
	} {
		if b.set {
			r |= b.change
		}
	}
	if !r.MergedWrites() {
		r = r.Without(LeanWrites)
	}
	return r
}

// RunRecording is how the run of a task records, as the code of its skill
// asks it: the task workflow (package workflows) puts its run on the
// skill's context ([WithRunRecording]), and package llm and agents' code
// read it there ([RunRecordingOf], [RecordingOf]).
type RunRecording interface {
	// Recording is the task's recording level.
	Recording() Recording
	// LocalModelCallNow reports whether a model call the skill makes now
	// runs as a local activity: the task records [LocalModelCalls], its
	// latest message came from a caller that waits for the turn's end, and
	// no update answers in the current workflow task (a local activity
	// would hold that answer, and every read of the task, until the model
	// answered).
	LocalModelCallNow(ctx workflow.Context) bool
}

type runRecordingKey struct{}

// WithRunRecording returns ctx carrying the run's recording.
func WithRunRecording(ctx workflow.Context, r RunRecording) workflow.Context {
	return workflow.WithValue(ctx, runRecordingKey{}, r)
}

// RunRecordingOf returns the recording of the task whose skill ctx (or a
// context derived from it) belongs to, and false outside a task.
func RunRecordingOf(ctx workflow.Context) (RunRecording, bool) {
	r, ok := ctx.Value(runRecordingKey{}).(RunRecording)
	return r, ok && r != nil
}

// RecordingOf returns the recording level of the task whose skill ctx (or
// a context derived from it) belongs to; none outside a task.
func RecordingOf(ctx workflow.Context) Recording {
	if r, ok := RunRecordingOf(ctx); ok {
		return r.Recording()
	}
	return 0
}
