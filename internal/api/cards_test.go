package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCardCaching checks the validators A2A's card caching guidance asks for
// (Cache-Control with max-age, ETag, Last-Modified) on every card URL, and
// that a conditional GET naming the card as served answers 304 without a
// body, while a stale ETag gets the card again.
func TestCardCaching(t *testing.T) {
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{}).Handler())
	t.Cleanup(srv.Close)
	for _, path := range []string{"/.well-known/agent-card.json", "/agents/other/.well-known/agent-card.json"} {
		t.Run(path, func(t *testing.T) {
			resp, body := get(t, srv.URL+path, "")
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name"`) {
				t.Fatalf("GET: %d %s", resp.StatusCode, body)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
				t.Errorf("Cache-Control = %q", cc)
			}
			etag := resp.Header.Get("ETag")
			if len(etag) < 10 || etag[0] != '"' {
				t.Errorf("ETag = %q", etag)
			}
			lm, err := http.ParseTime(resp.Header.Get("Last-Modified"))
			if err != nil || time.Since(lm) > time.Minute || time.Until(lm) > time.Second {
				t.Errorf("Last-Modified = %q (%v)", resp.Header.Get("Last-Modified"), err)
			}

			again, body2 := get(t, srv.URL+path, "")
			if again.Header.Get("ETag") != etag || body2 != body {
				t.Errorf("the same card got ETag %q, want %q", again.Header.Get("ETag"), etag)
			}
			notModified, rest := get(t, srv.URL+path, `"stale", `+etag)
			if notModified.StatusCode != http.StatusNotModified || rest != "" {
				t.Errorf("If-None-Match with the card's ETag: %d %q, want 304 and no body", notModified.StatusCode, rest)
			}
			stale, body3 := get(t, srv.URL+path, `"stale"`)
			if stale.StatusCode != http.StatusOK || body3 != body {
				t.Errorf("If-None-Match with another ETag: %d, want 200 and the card", stale.StatusCode)
			}
		})
	}
	// Two agents' cards differ, so do their ETags.
	a, _ := get(t, srv.URL+"/.well-known/agent-card.json", "")
	b, _ := get(t, srv.URL+"/agents/other/.well-known/agent-card.json", "")
	if a.Header.Get("ETag") == b.Header.Get("ETag") {
		t.Errorf("two agents' cards share the ETag %s", a.Header.Get("ETag"))
	}
}

func get(t *testing.T, url, ifNoneMatch string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
