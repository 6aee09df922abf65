package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
)

// consoleGet requests path from srv with the headers given as name, value pairs.
func consoleGet(t *testing.T, srv *httptest.Server, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestConsoleServed: /console is a public page that tells its scripts how
// the server authenticates (the API key's header, whether bearer tokens
// are taken), every file it loads and every module its scripts import is
// served with its type and the console's security headers, and no other
// name is.
func TestConsoleServed(t *testing.T) {
	auth, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key"},
		APIKeyHeader: "X-Agent-Key",
		JWT:          guard.JWTConfig{HS256Secret: []byte(guardtest.Secret)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		meta string
	}{
		{"authentication off", Config{}, `data-auth="false" data-api-key-header="" data-bearer="false"`},
		{"API keys in a header of the operator's and bearer tokens", Config{Auth: auth},
			`data-auth="true" data-api-key-header="X-Agent-Key" data-bearer="true"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), tc.cfg).Handler())
			t.Cleanup(srv.Close)
			// A wrong key changes nothing: the page and its files are public.
			resp, page := consoleGet(t, srv, "/console", "X-Agent-Key", "wrong")
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("GET /console: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if !strings.Contains(page, tc.meta) {
				t.Errorf("the page does not say %s:\n%s", tc.meta, page)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			files := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?:src|href)="/console/([^"]+)"`).FindAllStringSubmatch(page, -1) {
				files[m[1]] = true
			}
			if !files["app.js"] || !files["console.css"] {
				t.Fatalf("the page loads %v, want app.js and console.css", files)
			}
			imports := regexp.MustCompile(`from "\./([^"]+)"`)
			for seen := map[string]bool{}; len(files) > len(seen); {
				for f := range files {
					if seen[f] {
						continue
					}
					seen[f] = true
					resp, body := consoleGet(t, srv, "/console/"+f, "X-Agent-Key", "wrong")
					want := map[bool]string{true: "text/javascript", false: "text/css"}[strings.HasSuffix(f, ".js")]
					if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) ||
						resp.Header.Get("X-Content-Type-Options") != "nosniff" {
						t.Errorf("GET /console/%s: %d %s, want 200 %s with nosniff", f, resp.StatusCode, resp.Header.Get("Content-Type"), want)
						continue
					}
					for _, m := range imports.FindAllStringSubmatch(body, -1) {
						files[m[1]] = true
					}
					again, _ := consoleGet(t, srv, "/console/"+f, "If-None-Match", resp.Header.Get("ETag"))
					if again.StatusCode != http.StatusNotModified {
						t.Errorf("GET /console/%s with its ETag: %d, want 304", f, again.StatusCode)
					}
				}
			}
			if len(files) < 5 {
				t.Errorf("the console's modules: %v, want the page's scripts and the modules they import", files)
			}
			for _, path := range []string{"/console/index.html", "/console/nothing.js", "/console/..%2fapi.go", "/console/doc.go"} {
				if resp, _ := consoleGet(t, srv, path); resp.StatusCode != http.StatusNotFound {
					t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
				}
			}
		})
	}
}
