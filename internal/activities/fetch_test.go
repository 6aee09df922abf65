package activities_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
)

// fetchFile runs the FetchFile activity of f, as the worker registers it.
func fetchFile(t *testing.T, f *activities.Files, in llm.FetchFileInput) (llm.FetchedFile, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(f.FetchFile, activity.RegisterOptions{Name: wire.ActivityFetchFile})
	val, err := env.ExecuteActivity(wire.ActivityFetchFile, in)
	if err != nil {
		return llm.FetchedFile{}, err
	}
	var out llm.FetchedFile
	if err := val.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func TestFetchFile(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot really an image")
	srv := countOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dot.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(png)
		case "/big":
			_, _ = w.Write(make([]byte, 2048))
		case "/flaky":
			http.Error(w, "try later", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	})
	loopback := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")})
	publicOnly := outbound.New(outbound.Options{})
	allowed := &activities.Files{Client: loopback.HTTPClient(activities.FileUse(1024))}

	got, err := fetchFile(t, allowed, llm.FetchFileInput{URI: srv.URL + "/dot.png"})
	if err != nil {
		t.Fatalf("fetch from an allowed host: %v", err)
	}
	if string(got.Data) != string(png) || got.MediaType != "image/png" {
		t.Errorf("fetched %q (%s), want the PNG as image/png", got.Data, got.MediaType)
	}
	// The part's own media type wins over the server's.
	if got, err := fetchFile(t, allowed, llm.FetchFileInput{URI: srv.URL + "/dot.png", MediaType: "image/x-test"}); err != nil || got.MediaType != "image/x-test" {
		t.Errorf("media type = %q, %v; want the part's image/x-test", got.MediaType, err)
	}

	for _, tc := range []struct {
		name, uri string
		files     *activities.Files
		retryable bool
		reaches   bool
		msg       string
	}{
		{"loopback refused by the default policy", srv.URL + "/dot.png", &activities.Files{Client: publicOnly.HTTPClient(activities.FileUse(0))}, false, false, "forbidden"},
		{"not http", "file:///etc/passwd", allowed, false, false, "file:"},
		{"larger than the limit", srv.URL + "/big", allowed, false, true, "too large"},
		{"404", srv.URL + "/missing", allowed, false, true, "404"},
		{"503 is retried", srv.URL + "/flaky", allowed, true, true, "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.hits.Load()
			_, err := fetchFile(t, tc.files, llm.FetchFileInput{URI: tc.uri})
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("error = %v, want an application error", err)
			}
			if appErr.NonRetryable() == tc.retryable {
				t.Errorf("non-retryable = %v, want %v (%v)", appErr.NonRetryable(), !tc.retryable, err)
			}
			if !tc.retryable && appErr.Type() != activities.ErrTypeFetchRefused {
				t.Errorf("type = %s, want %s", appErr.Type(), activities.ErrTypeFetchRefused)
			}
			if !strings.Contains(strings.ToLower(err.Error()), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if reached := srv.hits.Load() > before; reached != tc.reaches {
				t.Errorf("server reached = %v, want %v", reached, tc.reaches)
			}
		})
	}
}
