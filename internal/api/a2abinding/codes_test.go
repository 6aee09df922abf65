package a2abinding

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// errHandler answers every GetTask with its error.
type errHandler struct {
	a2asrv.RequestHandler
	err error
}

func (h errHandler) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, h.err
}

// TestErrorCodesMatchA2AGo: every a2a sentinel has a2a-go's JSON-RPC code
// and reason, and its HTTP+JSON status and google.rpc code but where
// errorCodes corrects a2a-go (fixesA2AGo), which restResponseGuard then
// does to a2a-go's answer (the canaries rest-*-status of internal/api/upstream_test.go
// check the same of each correction through a2aflow's server).
func TestErrorCodesMatchA2AGo(t *testing.T) {
	for _, c := range apierror.Codes() {
		if !isA2ASentinel(c.Sentinel) {
			continue
		}
		t.Run(a2a.ErrorReason(c.Sentinel), func(t *testing.T) {
			h := errHandler{err: a2a.NewError(c.Sentinel, "m")}

			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`))
			a2asrv.NewJSONRPCHandler(h).ServeHTTP(rec, req)
			var rpc struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &rpc); err != nil || rpc.Error.Code != c.RPCCode {
				t.Errorf("a2a-go's JSON-RPC code %d (%v), ours %d", rpc.Error.Code, err, c.RPCCode)
			}

			for _, guarded := range []bool{false, true} {
				rec = httptest.NewRecorder()
				var w http.ResponseWriter = rec
				g := &restResponseGuard{ResponseWriter: rec}
				if guarded {
					w = g
				}
				a2asrv.NewRESTHandler(h).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tasks/t", nil))
				if guarded {
					g.finish()
				}
				var rest struct {
					Error struct {
						Code    int    `json:"code"`
						Status  string `json:"status"`
						Details []struct {
							Reason string `json:"reason"`
						} `json:"details"`
					} `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &rest); err != nil || len(rest.Error.Details) == 0 {
					t.Fatalf("a2a-go's HTTP+JSON answer %q: %v", rec.Body, err)
				}
				same := rest.Error.Code == c.Status && rec.Code == c.Status && rest.Error.Status == c.GRPC
				switch want := guarded || !c.FixesA2AGo; {
				case same && !want:
					t.Errorf("a2a-go no longer answers %s over HTTP+JSON with another status than ours (now %d %s): "+
						"the correction FixesA2AGo of its row in apierror's codes (correctStatus, a2agofixes.go) may be obsolete; remove it or adjust it",
						a2a.ErrorReason(c.Sentinel), rec.Code, rest.Error.Status)
				case same != want:
					t.Errorf("guarded %t: a2a-go's HTTP+JSON answer %d %d %s, ours %d %s (fixesA2AGo %t)",
						guarded, rec.Code, rest.Error.Code, rest.Error.Status, c.Status, c.GRPC, c.FixesA2AGo)
				}
				if r := rest.Error.Details[0].Reason; r != a2a.ErrorReason(c.Sentinel) {
					t.Errorf("a2a-go's reason %s", r)
				}
			}
		})
	}
}

// isA2ASentinel reports whether err is one of a2a's sentinels (not
// a2aflow's own, nor none).
func isA2ASentinel(err error) bool {
	return a2a.ErrorReason(err) != "INTERNAL_ERROR" || err == a2a.ErrInternalError
}
