package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestCLIGRPC drives the a2aflow client over the gRPC binding of serve
// (--grpc-addr) with authentication on: --binding grpc forces it (1.0, and
// 0.3 on the default agent, whose card alone lists it), the API key goes
// as metadata, and a card that lists gRPC first gets gRPC without the
// flag: a proxy serving such a card sees no other request.
func TestCLIGRPC(t *testing.T) {
	const key = "grpc-cli-key"
	s := harness.StartServe(t, t.TempDir(), "--api-keys", "alice="+key, "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)))
	echo := s.APIURL + "/agents/echo"

	t.Run("binding grpc", func(t *testing.T) {
		wantRun(t, runCLI(t, "send", "--agent", echo, "--api-key", key, "--binding", "grpc", "hi over grpc"), 0, "completed", "hi over grpc")
		wantRun(t, runCLI(t, "send", "--agent", s.APIURL, "--api-key", key, "--binding", "grpc", "--protocol-version", "0.3", "Book a flight"),
			2, "Where to?")
		// Only the default agent's card lists 0.3 gRPC (0.3 requests name no agent).
		wantRun(t, runCLI(t, "send", "--agent", echo, "--api-key", key, "--binding", "grpc", "--protocol-version", "0.3", "hi"),
			1, "offers no grpc 0.3 interface")
	})

	t.Run("credentials as metadata", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", echo, "--binding", "grpc", "hi")
		wantRun(t, r, 4)
		if !strings.Contains(strings.ToLower(r.stdout+r.stderr), "authentication required") {
			t.Errorf("without a key, over gRPC: want an authentication error, got:\n%s%s", r.stdout, r.stderr)
		}
		wantRun(t, runCLI(t, "send", "--agent", echo, "--api-key", "wrong", "--binding", "grpc", "hi"), 4, "unknown API key")
		wantRun(t, runCLI(t, "get", "--agent", echo, "--api-key", key, "--binding", "grpc", "no-such-task"), 4)
	})

	t.Run("card that prefers gRPC", func(t *testing.T) {
		target, _ := url.Parse(s.APIURL)
		rp := httputil.NewSingleHostReverseProxy(target)
		var a2aRequests atomic.Int64
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/.well-known/agent-card.json") {
				a2aRequests.Add(1)
				rp.ServeHTTP(w, r)
				return
			}
			resp, err := http.Get(s.APIURL + r.URL.Path)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var card map[string]any
			if err := json.Unmarshal(raw, &card); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			ifaces, _ := card["supportedInterfaces"].([]any)
			grpcFirst := slices.Clone(ifaces)
			slices.SortStableFunc(grpcFirst, func(a, b any) int {
				isGRPC := func(x any) int {
					if m, _ := x.(map[string]any); m["protocolBinding"] == "GRPC" && m["protocolVersion"] == "1.0" {
						return 0
					}
					return 1
				}
				return isGRPC(a) - isGRPC(b)
			})
			card["supportedInterfaces"] = grpcFirst
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(card)
		}))
		t.Cleanup(proxy.Close)
		wantRun(t, runCLI(t, "send", "--agent", proxy.URL+"/agents/echo", "--api-key", key, "picked by the card"), 0, "completed", "picked by the card")
		if n := a2aRequests.Load(); n != 0 {
			t.Errorf("the client sent %d requests over HTTP, want every call over gRPC (the card's first interface)", n)
		}
	})
}
