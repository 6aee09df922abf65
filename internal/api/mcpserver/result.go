package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/workflows"
)

// A call's result: the task as MCP content (its reply, its question, its
// artifacts) and as structured content (mcpTaskView).

// stateName is an A2A task state as MCP results name it: "completed",
// "input-required"...
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// mcpTaskView is a task in a result's structured content.
type mcpTaskView struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id,omitempty"`
	Agent     string `json:"agent"`
	State     string `json:"state"`
	// Message is the text of the task's status message: its reply, its
	// question, why it failed.
	Message string `json:"message,omitempty"`
	// Question is set when the task waits for the caller's answer
	// (a2aflow_reply); Credential when that answer is a credential.
	Question   string `json:"question,omitempty"`
	Credential bool   `json:"credential,omitempty"`
	// Awaiting is set when the task waits for others (approvers, a
	// waitpoint).
	Awaiting  bool              `json:"awaiting_others,omitempty"`
	Artifacts []mcpArtifactView `json:"artifacts,omitempty"`
}

type mcpArtifactView struct {
	ID          string        `json:"artifact_id"`
	Name        string        `json:"name,omitempty"`
	Description string        `json:"description,omitempty"`
	Parts       []mcpPartView `json:"parts"`
}

// mcpPartView is one part of an artifact: text, data, a file by URL, or a
// file's inline bytes, whose size it gives (an image's are in the content).
type mcpPartView struct {
	Text      *string `json:"text,omitempty"`
	Data      any     `json:"data,omitempty"`
	URL       string  `json:"url,omitempty"`
	Filename  string  `json:"filename,omitempty"`
	MediaType string  `json:"media_type,omitempty"`
	Bytes     int     `json:"bytes,omitempty"`
}

// maxMCPImageBytes bounds the images a result carries inline.
const maxMCPImageBytes = 1 << 20

// taskResult answers a call with task t of agent. canceled says a canceled
// task is what the call asked for (a2aflow_cancel_task).
func taskResult(agent string, t *a2a.Task, canceled bool) *mcp.CallToolResult {
	view := mcpTaskView{TaskID: string(t.ID), ContextID: t.ContextID, Agent: agent, State: stateName(t.Status.State)}
	if t.Status.Message != nil {
		view.Message = workflows.MessageText(t.Status.Message)
	}
	res := &mcp.CallToolResult{}
	text := func(s string) { res.Content = append(res.Content, &mcp.TextContent{Text: s}) }
	state := t.Status.State
	switch {
	case state == a2a.TaskStateCompleted:
		if view.Message != "" {
			text(view.Message)
		} else {
			text(fmt.Sprintf("Task %s completed.", t.ID))
		}
	case state == a2a.TaskStateInputRequired && othersAwaited(t):
		view.Awaiting = true
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for others (an approval or an event), not for you: "+
			"read it later with %s (task_id %q).", orDefault(view.Message, "The task waits."), t.ID, agent, mcpToolGet, t.ID))
	case state == a2a.TaskStateInputRequired:
		view.Question, _ = userQuestion(t)
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for your answer: call %s with task_id %q and the answer as message.",
			view.Question, t.ID, agent, mcpToolReply, t.ID))
	case state == a2a.TaskStateAuthRequired:
		view.Question, view.Credential = orDefault(view.Message, "The task needs a credential."), true
		text(fmt.Sprintf("%s\n\nTask %s of %s waits for a credential: call %s with task_id %q and the credential as message. "+
			"a2aflow stores it sealed and gives the task a reference to it, never the secret.",
			view.Question, t.ID, agent, mcpToolReply, t.ID))
	case state == a2a.TaskStateCanceled && canceled:
		text(fmt.Sprintf("Task %s is canceled.", t.ID))
	case state.Terminal(): // failed, rejected, canceled
		res.IsError = true
		why := ""
		if view.Message != "" {
			why = ": " + view.Message
		}
		text(fmt.Sprintf("Task %s of %s %s%s", t.ID, agent, stateVerb(state), why))
	default: // submitted, working
		text(fmt.Sprintf("Task %s of %s is still %s%s. Read it later with %s (task_id %q).",
			t.ID, agent, view.State, colonText(view.Message), mcpToolGet, t.ID))
	}
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		av := mcpArtifactView{ID: string(a.ID), Name: a.Name, Description: a.Description, Parts: []mcpPartView{}}
		for _, p := range a.Parts {
			if p == nil {
				continue
			}
			pv, content := artifactPart(a, p)
			av.Parts = append(av.Parts, pv)
			if content != nil {
				res.Content = append(res.Content, content)
			}
		}
		view.Artifacts = append(view.Artifacts, av)
	}
	res.StructuredContent = view
	return res
}

// artifactPart is part p of artifact a in structured content, and as
// content.
func artifactPart(a *a2a.Artifact, p *a2a.Part) (mcpPartView, mcp.Content) {
	pv := mcpPartView{Filename: p.Filename, MediaType: p.MediaType}
	switch c := p.Content.(type) {
	case a2a.Text:
		s := string(c)
		pv.Text = &s
		return pv, &mcp.TextContent{Text: s}
	case a2a.Data:
		pv.Data = c.Value
		b, err := json.Marshal(c.Value)
		if err != nil {
			return pv, nil
		}
		return pv, &mcp.TextContent{Text: string(b)}
	case a2a.URL:
		pv.URL = string(c)
		name := orDefault(p.Filename, orDefault(a.Name, "file"))
		return pv, &mcp.ResourceLink{URI: string(c), Name: name, MIMEType: p.MediaType, Description: a.Description}
	case a2a.Raw:
		pv.Bytes = len(c)
		if strings.HasPrefix(p.MediaType, "image/") && len(c) <= maxMCPImageBytes {
			return pv, &mcp.ImageContent{Data: c, MIMEType: p.MediaType}
		}
		return pv, &mcp.TextContent{Text: fmt.Sprintf("[file %s: %s, %d bytes, not included; read the task over A2A for it]",
			orDefault(p.Filename, orDefault(a.Name, "file")), orDefault(p.MediaType, "application/octet-stream"), len(c))}
	}
	return pv, nil
}

func stateVerb(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateFailed:
		return "failed"
	case a2a.TaskStateRejected:
		return "was rejected"
	case a2a.TaskStateCanceled:
		return "was canceled"
	}
	return "is " + stateName(s)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func colonText(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
