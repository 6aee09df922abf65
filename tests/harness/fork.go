package harness

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	_ "modernc.org/sqlite"
)

// ForkCall POSTs body to url (a fork or retry route, or a JSON-RPC
// endpoint) with A2A-Version 1.0 and returns the HTTP status and body.
func ForkCall(t testing.TB, url string, body any) (int, []byte) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// ForkREST forks task id at atMessage over HTTP+JSON and returns the fork.
func ForkREST(t testing.TB, agentURL string, id a2a.TaskID, atMessage int) *a2a.Task {
	t.Helper()
	code, body := ForkCall(t, agentURL+"/tasks/"+string(id)+":fork", map[string]any{"atMessage": atMessage})
	if code != http.StatusOK {
		t.Fatalf("fork %s at %d: HTTP %d %s", id, atMessage, code, body)
	}
	var task a2a.Task
	if err := json.Unmarshal(body, &task); err != nil {
		t.Fatalf("fork %s: %v: %s", id, err, body)
	}
	if task.ID == id || task.ID == "" {
		t.Fatalf("fork %s answered task %q, want a new task", id, task.ID)
	}
	return &task
}

// ForkBooking is the booking of a completed travel task.
func ForkBooking(t testing.TB, task *a2a.Task) TravelBookingView {
	t.Helper()
	b := BookingOf(t, task)
	ref, _ := b["reference"].(string)
	dest, _ := b["destination"].(string)
	return TravelBookingView{Reference: ref, Destination: dest}
}

// TravelBookingView is the travel agent's booking artifact.
type TravelBookingView struct {
	Reference   string `json:"reference"`
	Destination string `json:"destination"`
}

// Bookings returns the references of the travel agent's bookings, keyed
// by the task (workflow ID) that booked them.
func Bookings(t testing.TB, dataDir string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dataDir, "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT idempotency_key, reference FROM bookings`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var key, ref string
		if err := rows.Scan(&key, &ref); err != nil {
			t.Fatal(err)
		}
		task, _, _ := strings.Cut(key, "/")
		out[task] = append(out[task], ref)
	}
	return out
}
