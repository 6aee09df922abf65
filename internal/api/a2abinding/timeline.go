package a2abinding

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// The timeline route of an agent's endpoint (docs/guides/timeline.md): GET
// /tasks/{id}/timeline?pageSize=N&pageToken=T over HTTP+JSON (under a
// tenant prefix too), a task's whole story in pages, for the console.
// TaskService.Timeline builds it; reading it is reading the task (its
// owner only).

// timelinePath matches the timeline route, with an optional tenant prefix.
var timelinePath = regexp.MustCompile(`^(?:/[^/]+)?/tasks/([^/]+)/timeline$`)

// serveTimeline answers GET /tasks/{id}/timeline; false when the request
// is no such route.
func serveTimeline(w http.ResponseWriter, r *http.Request, svc *taskservice.TaskService) bool {
	m := timelinePath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		apierror.Write(w, apierror.HTTPJSON, nil, http.StatusMethodNotAllowed, a2a.NewError(a2a.ErrMethodNotFound,
			fmt.Sprintf("method %s is not allowed: %s takes GET", r.Method, r.URL.Path)))
		return true
	}
	page, err := timeline(r, svc, a2a.TaskID(m[1]))
	if err != nil {
		apierror.Write(w, apierror.HTTPJSON, nil, 0, err)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(page)
	return true
}

// timeline checks the caller and the query, then reads the page.
func timeline(r *http.Request, svc *taskservice.TaskService, id a2a.TaskID) (*taskservice.TimelinePage, error) {
	if err := guard.PermitAgent(r.Context(), svc.Agent().Name); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	size := 0
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > taskservice.MaxTimelinePageSize {
			return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageSize=%q: want a number from 1 to %d", v, taskservice.MaxTimelinePageSize))
		}
		size = n
	}
	return svc.Timeline(r.Context(), id, size, q.Get("pageToken"))
}
