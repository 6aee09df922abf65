package api

import (
	"embed"
	"html/template"
	"net/http"

	"github.com/gin-gonic/gin"
)

// inboxFiles holds the inbox page; it is embedded so the inbox works offline.
//
//go:embed inbox/index.html
var inboxFiles embed.FS

var inboxPage = template.Must(template.ParseFS(inboxFiles, "inbox/index.html"))

// inbox serves GET /inbox: the pending approvals (of ?group=, or all), each
// with Approve / Reject and a comment, and the recently decided ones. The
// page is rendered on the server and refreshed by a little JavaScript that
// polls GET /approvals.
func (s *Server) inbox(c *gin.Context) {
	group := c.Query("group")
	page := map[string]any{"Group": group, "ApproverHeader": ApproverHeader}
	if s.cfg.Auth.Enabled() && principal(c.Request.Context()) == "" {
		// With authentication on, the page is public but its data is not:
		// the script loads it from /approvals with the user's API key.
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.Status(http.StatusOK)
		_ = inboxPage.Execute(c.Writer, page)
		return
	}
	who, err := s.approver(c)
	if err != nil {
		c.String(httpStatusOf(err), "%v", err)
		return
	}
	pending, err := s.findApprovals(c.Request.Context(), who, group, "", "", false)
	if err != nil {
		c.String(httpStatusOf(approvalsError(err)), "cannot list approvals: %v", err)
		return
	}
	decided, err := s.findApprovals(c.Request.Context(), who, group, "", "", true)
	if err != nil {
		c.String(httpStatusOf(approvalsError(err)), "cannot list approvals: %v", err)
		return
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Status(http.StatusOK)
	page["Pending"], page["Decided"] = pending, decided
	_ = inboxPage.Execute(c.Writer, page)
}
