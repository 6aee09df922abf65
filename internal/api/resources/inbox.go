package resources

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// inboxFiles holds the inbox page; it is embedded so the inbox works offline.
//
//go:embed inbox/index.html
var inboxFiles embed.FS

var inboxPage = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"json":      inboxJSON,
	"arguments": actionArguments,
}).ParseFS(inboxFiles, "inbox/index.html"))

// inboxJSON renders v as indented JSON for the page.
func inboxJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// actionArguments returns the arguments of a gated tool call's action
// (llm.ToolCallAction) as indented JSON, for the approver to edit.
func actionArguments(action any) string {
	raw, err := json.Marshal(action)
	if err != nil {
		return ""
	}
	var a struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &a) != nil || len(a.Arguments) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Indent(&buf, a.Arguments, "", "  ") != nil {
		return string(a.Arguments)
	}
	return buf.String()
}

// inbox serves GET /inbox: the pending approvals (of ?group=, or all), each
// with what it proposes (a gated tool call: the tool, its arguments and the
// model's reason), Approve / Reject and a comment, the arguments to edit
// when the request takes edits and the grant for the rest of the task when
// it offers one; and the recently decided ones. The
// page is rendered on the server and refreshed by a little JavaScript that
// polls GET /approvals.
func (s *Resources) inbox(c *gin.Context) {
	group := c.Query("group")
	page := map[string]any{"Group": group, "ApproverHeader": guard.ApproverHeader}
	if s.cfg.Auth.Enabled() && guard.Principal(c.Request.Context()) == "" {
		// With authentication on, the page is public but its data is not:
		// the script loads it from /approvals with the user's API key.
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.Status(http.StatusOK)
		_ = inboxPage.Execute(c.Writer, page)
		return
	}
	who, err := s.approver(c)
	if err != nil {
		c.String(apierror.HTTPStatus(err), "%v", err)
		return
	}
	pending, err := s.findApprovals(c.Request.Context(), who, group, "", "", false)
	if err != nil {
		c.String(apierror.HTTPStatus(apierror.ResourceError(err)), "cannot list approvals: %v", err)
		return
	}
	decided, err := s.findApprovals(c.Request.Context(), who, group, "", "", true)
	if err != nil {
		c.String(apierror.HTTPStatus(apierror.ResourceError(err)), "cannot list approvals: %v", err)
		return
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Status(http.StatusOK)
	page["Pending"], page["Decided"] = pending, decided
	_ = inboxPage.Execute(c.Writer, page)
}
