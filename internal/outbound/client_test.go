package outbound_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// canary is a server that counts the requests it gets: the guard works when
// a refused request never reaches it.
type canary struct {
	*httptest.Server
	hits atomic.Int32
}

// serveOn starts h on a loopback address such as "127.0.0.2:0" (the whole
// of 127/8 is loopback on Linux), counting its requests.
func serveOn(t *testing.T, addr string, h http.HandlerFunc) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	c := &canary{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "canary")
	}))
	c.Listener = ln
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func mustPolicy(t *testing.T, allow ...string) *outbound.Policy {
	t.Helper()
	p, err := outbound.ParsePolicy(allow)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// get fetches url with hc and returns the body, or the error.
func get(hc *http.Client, url string) (string, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestClientAddressPolicy(t *testing.T) {
	srv := serveOn(t, "127.0.0.1:0", nil)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	other := serveOn(t, "127.0.0.1:0", nil) // same address, another port
	tests := []struct {
		name    string
		policy  *outbound.Policy
		use     outbound.Use
		url     string
		refused bool
	}{
		{"loopback IP, public only", nil, outbound.AgentCard, srv.URL + "/x", true},
		{"a name resolving to loopback, checked after DNS", nil, outbound.AgentCard, fmt.Sprintf("http://localhost:%d/x", port), true},
		{"loopback outside the allowed CIDR", mustPolicy(t, "10.0.0.0/8"), outbound.A2A, srv.URL, true},
		{"metadata address with link-local allowed", mustPolicy(t, "link-local", "loopback"), outbound.AgentCard, "http://169.254.169.254/latest/meta-data/", true},
		{"private address with loopback allowed", mustPolicy(t, "loopback"), outbound.AgentCard, "http://10.255.255.1:9/", true},
		{"another port of a trusted host", nil, outbound.AgentCard.Trusting(other.URL), srv.URL, true},
		{"loopback allowed", mustPolicy(t, "loopback"), outbound.AgentCard, srv.URL, false},
		{"trusted host, public only", nil, outbound.AgentCard.Trusting(srv.URL + "/agents/router"), srv.URL + "/x", false},
		{"all", mustPolicy(t, "all"), outbound.Webhook, srv.URL, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.hits.Load()
			hc := outbound.New(outbound.Options{Policy: tt.policy}).HTTPClient(tt.use)
			body, err := get(hc, tt.url)
			if tt.refused {
				if !errors.Is(err, outbound.ErrForbiddenAddress) || !outbound.Refused(err) {
					t.Fatalf("GET %s = %q, %v; want ErrForbiddenAddress", tt.url, body, err)
				}
				if n := srv.hits.Load() - before; n != 0 {
					t.Errorf("the refused server got %d requests, want 0", n)
				}
				return
			}
			if err != nil || body != "canary" {
				t.Fatalf("GET %s = %q, %v; want the answer", tt.url, body, err)
			}
		})
	}
}

func TestClientRedirects(t *testing.T) {
	target := serveOn(t, "127.0.0.2:0", nil) // another host
	var front *canary
	front = serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			fmt.Fprint(w, "final")
		case "/away":
			http.Redirect(w, r, target.URL+"/stolen", http.StatusTemporaryRedirect)
		case "/by-name":
			// The same address under another name is another host.
			http.Redirect(w, r, strings.Replace(front.URL, "127.0.0.1", "localhost", 1)+"/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	})
	hc := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}).HTTPClient(outbound.A2A)
	tests := []struct {
		path    string
		want    string
		refused bool
	}{
		{"/same", "final", false},
		{"/away", "", true},
		{"/by-name", "", true},
		{"/loop", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			body, err := get(hc, front.URL+tt.path)
			if tt.refused {
				if !errors.Is(err, outbound.ErrRedirectRefused) || !outbound.Refused(err) {
					t.Fatalf("GET %s = %q, %v; want ErrRedirectRefused", tt.path, body, err)
				}
				return
			}
			if err != nil || body != tt.want {
				t.Fatalf("GET %s = %q, %v; want %q", tt.path, body, err, tt.want)
			}
		})
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests, want 0", n)
	}
}

// TestClientTrustDoesNotFollowRedirects checks that a trusted host cannot
// lend its trust: its redirect to another loopback port is refused (another
// host), and so is a direct request there.
func TestClientTrustDoesNotFollowRedirects(t *testing.T) {
	inner := serveOn(t, "127.0.0.1:0", nil)
	peer := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/admin", http.StatusFound)
	})
	hc := outbound.New(outbound.Options{}).HTTPClient(outbound.AgentCard.Trusting(peer.URL))
	if _, err := get(hc, peer.URL+"/.well-known/agent-card.json"); !errors.Is(err, outbound.ErrRedirectRefused) {
		t.Fatalf("redirect from the trusted peer: %v, want ErrRedirectRefused", err)
	}
	if _, err := get(hc, inner.URL+"/admin"); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("direct request to another port: %v, want ErrForbiddenAddress", err)
	}
	if n := inner.hits.Load(); n != 0 {
		t.Errorf("the inner server got %d requests, want 0", n)
	}
}

func TestClientBodyLimit(t *testing.T) {
	srv := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		n := 1 << 10
		switch r.URL.Path {
		case "/announced":
			w.Header().Set("Content-Length", fmt.Sprint(2*n))
			_, _ = w.Write([]byte(strings.Repeat("a", 2*n)))
		case "/chunked":
			for i := 0; i < 2; i++ {
				_, _ = w.Write([]byte(strings.Repeat("b", n)))
				w.(http.Flusher).Flush()
			}
		case "/exact":
			w.(http.Flusher).Flush() // chunked: no length announced
			_, _ = w.Write([]byte(strings.Repeat("c", n)))
		}
	})
	use := outbound.Use{Name: "test", MaxBody: 1 << 10, Timeout: 10 * time.Second}
	hc := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}).HTTPClient(use)
	tests := []struct {
		path    string
		wantErr string // "" for a body of the limit's size
	}{
		{"/announced", "the test response announces 2048 bytes, more than the limit of 1 KiB"},
		{"/chunked", "the test response is larger than the limit of 1 KiB"},
		{"/exact", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			body, err := get(hc, srv.URL+tt.path)
			if tt.wantErr == "" {
				if err != nil || len(body) != 1<<10 {
					t.Fatalf("GET %s: %d bytes, %v; want the whole KiB", tt.path, len(body), err)
				}
				return
			}
			if !errors.Is(err, outbound.ErrBodyTooLarge) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("GET %s: %v, want ErrBodyTooLarge saying %q", tt.path, err, tt.wantErr)
			}
			if len(body) > 1<<10 {
				t.Errorf("read %d bytes, more than the limit", len(body))
			}
		})
	}
}

func TestClientHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	use := outbound.Use{Name: "slow", HeaderTimeout: 200 * time.Millisecond}
	hc := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}).HTTPClient(use)
	start := time.Now()
	_, err := get(hc, srv.URL)
	if !errors.Is(err, outbound.ErrHeaderTimeout) {
		t.Fatalf("GET = %v, want ErrHeaderTimeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s, want about 200ms", took)
	}
}

func TestHostKey(t *testing.T) {
	got := map[string]string{}
	for _, raw := range []string{"http://Example.COM/x", "https://example.com", "http://[::1]:8080/", "https://127.0.0.1:4201/agents/router"} {
		u, err := outbound.ParseURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		got[raw] = outbound.HostKey(u)
	}
	want := map[string]string{
		"http://Example.COM/x":                 "example.com:80",
		"https://example.com":                  "example.com:443",
		"http://[::1]:8080/":                   "[::1]:8080",
		"https://127.0.0.1:4201/agents/router": "127.0.0.1:4201",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HostKey (-want +got):\n%s", diff)
	}
}
