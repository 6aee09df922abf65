package tests

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// listClient is an a2a-go client of the agent at baseURL over one binding.
func listClient(t *testing.T, ctx context.Context, baseURL string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", baseURL, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	if err != nil {
		t.Fatalf("client for %s: %v", baseURL, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// listSend starts a task in contextID with text and returns it.
func listSend(t *testing.T, ctx context.Context, c *a2aclient.Client, contextID string, taskID a2a.TaskID, text string) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ContextID, msg.TaskID = contextID, taskID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", text, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q) returned %T, want *a2a.Task", text, res)
	}
	return task
}

func taskIDs(tasks []*a2a.Task) []a2a.TaskID {
	ids := []a2a.TaskID{}
	for _, t := range tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

// listEventually lists with req until the answer holds want (in order),
// as visibility is eventually consistent, and returns the last answer.
func listEventually(t *testing.T, ctx context.Context, c *a2aclient.Client, req a2a.ListTasksRequest, want []a2a.TaskID) *a2a.ListTasksResponse {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := req
		resp, err := c.ListTasks(ctx, &r)
		if err != nil {
			t.Fatalf("ListTasks(%+v): %v", req, err)
		}
		diff := cmp.Diff(want, taskIDs(resp.Tasks))
		if diff == "" {
			return resp
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListTasks(%+v) (-want +got):\n%s", req, diff)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestListTasks(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	travel := listClient(t, ctx, s.APIURL, a2a.TransportProtocolJSONRPC)
	echo := listClient(t, ctx, s.APIURL+"/agents/echo", a2a.TransportProtocolJSONRPC)

	// Seven waiting travel tasks in context A, created one after the other,
	// and three echo tasks in the same context (another agent).
	ctxA, ctxB := "list-ctx-a-"+a2a.NewContextID(), "list-ctx-b-"+a2a.NewContextID()
	var inA []a2a.TaskID
	for range 7 {
		inA = append(inA, listSend(t, ctx, travel, ctxA, "", "Book a flight").ID)
	}
	var echoA []a2a.TaskID
	for range 3 {
		echoA = append(echoA, listSend(t, ctx, echo, ctxA, "", "hi").ID)
	}
	// Context B: one waiting, one completed (with its booking artifact) and
	// one canceled after t0.
	waiting := listSend(t, ctx, travel, ctxB, "", "Book a flight").ID
	done := listSend(t, ctx, travel, ctxB, "", "Book a flight").ID
	for _, answer := range []string{"Lisbon", "2026-12-24", "2"} {
		listSend(t, ctx, travel, ctxB, done, answer)
	}
	canceled := listSend(t, ctx, travel, ctxB, "", "Book a flight").ID
	t0 := time.Now().UTC()
	time.Sleep(10 * time.Millisecond)
	if _, err := travel.CancelTask(ctx, &a2a.CancelTaskRequest{ID: canceled}); err != nil {
		t.Fatal(err)
	}

	newestFirst := func(ids []a2a.TaskID) []a2a.TaskID {
		out := slices.Clone(ids)
		slices.Reverse(out)
		return out
	}
	// Wait for visibility to catch up with the last change of each context.
	listEventually(t, ctx, travel, a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCanceled}, []a2a.TaskID{canceled})
	listEventually(t, ctx, travel, a2a.ListTasksRequest{ContextID: ctxA, Status: a2a.TaskStateInputRequired}, newestFirst(inA))
	listEventually(t, ctx, echo, a2a.ListTasksRequest{ContextID: ctxA, Status: a2a.TaskStateCompleted}, newestFirst(echoA))

	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name   string
			client *a2aclient.Client
			req    a2a.ListTasksRequest
			want   []a2a.TaskID
		}{
			{"context A, travel only", travel, a2a.ListTasksRequest{ContextID: ctxA}, newestFirst(inA)},
			{"context A, echo only", echo, a2a.ListTasksRequest{ContextID: ctxA}, newestFirst(echoA)},
			// Running tasks first, then finished ones, the last finished first.
			{"context B", travel, a2a.ListTasksRequest{ContextID: ctxB}, []a2a.TaskID{waiting, canceled, done}},
			{"context B waiting", travel, a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateInputRequired}, []a2a.TaskID{waiting}},
			{"context B completed", travel, a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCompleted}, []a2a.TaskID{done}},
			{"context B canceled", travel, a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCanceled}, []a2a.TaskID{canceled}},
			{"completed, travel", travel, a2a.ListTasksRequest{Status: a2a.TaskStateCompleted}, []a2a.TaskID{done}},
			// Tasks that completed while visibility had them working (the
			// echoes in their first turn, the booking after its activity)
			// write no A2ATaskState of their own (TaskInput.LeanWrites):
			// completed, not working.
			{"context A echo completed", echo, a2a.ListTasksRequest{ContextID: ctxA, Status: a2a.TaskStateCompleted}, newestFirst(echoA)},
			{"context A echo working", echo, a2a.ListTasksRequest{ContextID: ctxA, Status: a2a.TaskStateWorking}, []a2a.TaskID{}},
			{"context B working", travel, a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateWorking}, []a2a.TaskID{}},
			{"unknown context", travel, a2a.ListTasksRequest{ContextID: `nope' OR A2AAgent != "x`}, []a2a.TaskID{}},
			{"changed after t0", travel, a2a.ListTasksRequest{StatusTimestampAfter: &t0}, []a2a.TaskID{canceled}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, err := tt.client.ListTasks(ctx, &tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, taskIDs(resp.Tasks)); diff != "" {
					t.Errorf("tasks (-want +got):\n%s", diff)
				}
				if tt.req.StatusTimestampAfter == nil && resp.TotalSize != len(tt.want) {
					t.Errorf("totalSize %d, want %d", resp.TotalSize, len(tt.want))
				}
				if resp.NextPageToken != "" {
					t.Errorf("nextPageToken %q on the only page", resp.NextPageToken)
				}
			})
		}
	})

	t.Run("full tasks", func(t *testing.T) {
		zero, one := 0, 1
		full, err := travel.GetTask(ctx, &a2a.GetTaskRequest{ID: done})
		if err != nil {
			t.Fatal(err)
		}
		if len(full.History) < 2 || len(full.Artifacts) != 1 {
			t.Fatalf("completed travel task has %d messages and %d artifacts, want several and 1", len(full.History), len(full.Artifacts))
		}
		tests := []struct {
			name          string
			req           a2a.ListTasksRequest
			wantHistory   int
			wantArtifacts int
		}{
			{"defaults: all history, no artifacts", a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCompleted}, len(full.History), 0},
			{"historyLength 0", a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCompleted, HistoryLength: &zero}, 0, 0},
			{"historyLength 1, artifacts", a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateCompleted, HistoryLength: &one, IncludeArtifacts: true}, 1, 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, err := travel.ListTasks(ctx, &tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Tasks) != 1 {
					t.Fatalf("got %d tasks, want 1", len(resp.Tasks))
				}
				got := resp.Tasks[0]
				if got.ID != done || got.ContextID != ctxB || got.Status.State != a2a.TaskStateCompleted {
					t.Errorf("task %s in %s is %s, want %s in %s completed", got.ID, got.ContextID, got.Status.State, done, ctxB)
				}
				if len(got.History) != tt.wantHistory || len(got.Artifacts) != tt.wantArtifacts {
					t.Errorf("%d messages and %d artifacts, want %d and %d", len(got.History), len(got.Artifacts), tt.wantHistory, tt.wantArtifacts)
				}
			})
		}
		// A running task is read with the query: the same as GetTask.
		resp, err := travel.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxB, Status: a2a.TaskStateInputRequired})
		if err != nil {
			t.Fatal(err)
		}
		get, err := travel.GetTask(ctx, &a2a.GetTaskRequest{ID: waiting})
		if err != nil {
			t.Fatal(err)
		}
		get.Artifacts = nil
		if diff := cmp.Diff([]*a2a.Task{get}, resp.Tasks); diff != "" {
			t.Errorf("listed task differs from GetTask (-get +list):\n%s", diff)
		}
	})

	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run("pages over "+string(binding), func(t *testing.T) {
			c := listClient(t, ctx, s.APIURL, binding)
			var got []a2a.TaskID
			var sizes []int
			token := ""
			for page := 0; ; page++ {
				if page > 5 {
					t.Fatalf("more than 5 pages: %v", sizes)
				}
				resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxA, PageSize: 3, PageToken: token})
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				if resp.PageSize != 3 || resp.TotalSize != 7 {
					t.Errorf("page %d: pageSize %d totalSize %d, want 3 and 7", page, resp.PageSize, resp.TotalSize)
				}
				sizes = append(sizes, len(resp.Tasks))
				got = append(got, taskIDs(resp.Tasks)...)
				if token = resp.NextPageToken; token == "" {
					break
				}
			}
			// Three pages, newest first, no duplicate and no gap.
			if diff := cmp.Diff([]int{3, 3, 1}, sizes); diff != "" {
				t.Errorf("page sizes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(newestFirst(inA), got); diff != "" {
				t.Errorf("tasks over all pages (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("token bound to its filters", func(t *testing.T) {
		first, err := travel.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxA, PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		if first.NextPageToken == "" {
			t.Fatal("no next page token")
		}
		_, err = travel.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxB, PageSize: 3, PageToken: first.NextPageToken})
		if err == nil || !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("token of context A used for context B: %v, want InvalidParams", err)
		}
		_, err = echo.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxA, PageSize: 3, PageToken: first.NextPageToken})
		if err == nil || !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("travel's token used on echo: %v, want InvalidParams", err)
		}
	})
}
