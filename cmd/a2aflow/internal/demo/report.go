package demo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// ReportArtifactName is the name of the report agent's artifact. Every
// version of a report, across the tasks that refine it, has this name.
const ReportArtifactName = "report"

// ArtifactVersionsExtension is the URI of the A2A extension the report
// agent declares: a caller that activates it (A2A-Extensions header) gets
// report artifacts that list the extension in their extensions and carry
// its metadata, metadata.version (1, 2...) and metadata.refines (the task
// whose report this version refines, "" for a first version), so a client
// can tell versions of the same report apart without reading the text.
const ArtifactVersionsExtension = "https://github.com/a2aflow/a2aflow/extensions/artifact-versions/v1"

// Report returns the report agent: it turns notes into a Markdown report
// artifact, and a follow-up task whose message lists the report's task in
// referenceTaskIds refines it into the next version of the same artifact
// (same name, metadata "version" one higher). No LLM: the refinement adds
// the new notes as a revision section, so the demo runs anywhere.
//
// The referenced task is read with Task.ReferencedTask, an activity whose
// result is recorded in history: the refinement replays from history even
// after the referenced task is gone.
func Report() *workflows.Agent {
	return &workflows.Agent{
		Name:        "report",
		Description: "Writes a Markdown report from your notes. Send a follow-up with referenceTaskIds set to the report's task to refine it into a new version.",
		Skills: []a2a.AgentSkill{{
			ID:          "write-report",
			Name:        "Write or refine a report",
			Description: "The first line of the notes is the title, the rest the body. A message whose referenceTaskIds names an earlier report task adds its notes as a revision: a new version of the same report artifact.",
			Tags:        []string{"report", "artifacts"},
			Examples:    []string{"Q3 review\nRevenue grew 12%; churn fell to 2%.", "Add: the EMEA launch moved to November."},
			OutputModes: []string{"text/markdown"},
		}},
		Extensions: []a2a.AgentExtension{{
			URI:         ArtifactVersionsExtension,
			Description: "Report artifacts carry metadata.version and metadata.refines, and list this extension.",
			Params:      map[string]any{"metadataKeys": []string{"version", "refines"}},
		}},
		Handle: writeReport,
	}
}

func writeReport(ctx workflow.Context, t *workflows.Task) error {
	notes := strings.TrimSpace(t.Text())
	if notes == "" {
		return workflows.Reject("Send the notes for the report as text.")
	}
	refs := t.ReferenceTaskIDs()
	if len(refs) == 0 {
		t.Artifact(ctx, versioned(t, reportArtifact(newReport(notes), 0, "")))
		t.Reply(fmt.Sprintf("Wrote the report (version 1). To refine it, send a message with referenceTaskIds [%q].", t.ID()))
		return nil
	}
	for _, ref := range refs {
		task, err := t.ReferencedTask(ctx, ref)
		if errors.Is(err, workflows.ErrTaskNotFound) {
			return workflows.Reject(fmt.Sprintf("Task %s was not found, so there is no report to refine.", ref))
		}
		if err != nil {
			return err
		}
		prev, version, ok := latestReport(task)
		if !ok {
			continue
		}
		next := version + 1
		t.Artifact(ctx, versioned(t, reportArtifact(prev+"\n\n## Revision "+fmt.Sprint(next)+"\n\n"+notes+"\n", next, ref)))
		t.Reply(fmt.Sprintf("Refined the report of task %s into version %d.", ref, next))
		return nil
	}
	return workflows.Reject(fmt.Sprintf("None of the referenced tasks %v has a %q artifact to refine.", refs, ReportArtifactName))
}

// newReport formats notes as a report: the first line is the title.
func newReport(notes string) string {
	title, body, _ := strings.Cut(notes, "\n")
	title = strings.TrimSpace(strings.TrimLeft(title, "# "))
	body = strings.TrimSpace(body)
	if body == "" {
		title, body = "Report", notes
	}
	return "# " + title + "\n\n" + body + "\n"
}

// reportArtifact returns the report artifact. version 0 lets Task.Artifact
// number it; a refinement gives the version it continues to, and the task
// it refines.
func reportArtifact(text string, version int, refines a2a.TaskID) *a2a.Artifact {
	a := workflows.TextArtifact(ReportArtifactName, text)
	a.Parts[0].MediaType = "text/markdown"
	if version > 0 {
		a.Metadata = map[string]any{"version": version, "refines": string(refines)}
	}
	return a
}

// versioned marks a report artifact as the artifact-versions extension
// says, when the caller activated it: the artifact lists the extension and
// says which task it refines ("" for a first version). Without it the
// artifact is as before, so histories recorded earlier replay unchanged.
func versioned(t *workflows.Task, a *a2a.Artifact) *a2a.Artifact {
	if !t.ExtensionActive(ArtifactVersionsExtension) {
		return a
	}
	a.Extensions = append(a.Extensions, ArtifactVersionsExtension)
	if a.Metadata == nil {
		a.Metadata = map[string]any{"refines": ""}
	}
	return a
}

// latestReport returns the text and version of task's latest report
// artifact.
func latestReport(task *a2a.Task) (string, int, bool) {
	for i := len(task.Artifacts) - 1; i >= 0; i-- {
		a := task.Artifacts[i]
		if a == nil || a.Name != ReportArtifactName {
			continue
		}
		var text strings.Builder
		for _, p := range a.Parts {
			text.WriteString(p.Text())
		}
		version := 1
		// A version read back from JSON is a float64.
		if v, ok := a.Metadata["version"].(float64); ok && v >= 1 {
			version = int(v)
		}
		return strings.TrimRight(text.String(), "\n"), version, true
	}
	return "", 0, false
}
