package temporalserver

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/blobstore"
)

func uiEchoWorkflow(_ workflow.Context, in string) (string, error) { return "result-" + in, nil }

// TestUIShowsPayloadsKeptOutsideHistory opens the Web UI in headless
// Chromium: a 500 KB input, kept outside history, reads in place (the
// codec on the UI's origin resolves it), and a 3 MiB one shows as a
// reference whose download button fetches it from the codec.
func TestUIShowsPayloadsKeptOutsideHistory(t *testing.T) {
	browserPath := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browserPath = p
			break
		}
	}
	if browserPath == "" {
		t.Skip("no Chromium: the Web UI is not tested in a browser")
	}
	dir := t.TempDir()
	s := startServer(t, "UI", Options{DataDir: dir, FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0", Logger: testLogger(t)})
	store, err := blobstore.NewFileStore(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: s.FrontendAddr(), Namespace: s.Namespace(),
		Logger: sdklog.NewStructuredLogger(testLogger(t)), ExternalStorage: blobstore.ExternalStorage(store)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "ui", worker.Options{})
	w.RegisterWorkflow(uiEchoWorkflow)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for id, n := range map[string]int{"medium": 500_000, "huge": bigPayloadSize} {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "ui"}, uiEchoWorkflow, "marker-"+id+strings.Repeat("x", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// waitFor polls the page's text until it holds want.
	waitFor := func(want string) string {
		t.Helper()
		var text string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if text, err = chromedp.Run(browser, chromedp.Text(chromedp.CSS("body"))); err == nil && strings.Contains(text, want) {
				return text
			}
		}
		t.Fatalf("the page never showed %q; it shows: %.500s (%v)", want, text, err)
		return ""
	}

	if err := chromedp.Do(browser, chromedp.Navigate(s.UIURL()+"/namespaces/default/workflows/medium")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	waitFor("result-marker-medium")

	if err := chromedp.Do(browser, chromedp.Navigate(s.UIURL()+"/namespaces/default/workflows/huge")); err != nil {
		t.Fatal(err)
	}
	if text := waitFor(blobstore.DriverName); strings.Contains(text, "marker-huge") {
		t.Error("the 3 MiB input is shown in place; want a reference with a download button")
	}
	// Click the input's download button ("3 MB"), recording the codec calls.
	if _, err := chromedp.Run(browser, chromedp.Evaluate[bool](`(() => {
		window.codecCalls = [];
		const fetch = window.fetch;
		window.fetch = async (url, opts) => {
			const resp = await fetch(url, opts);
			window.codecCalls.push(String(url) + " " + resp.status);
			return resp;
		};
		[...document.querySelectorAll("button")].find(b => b.textContent.trim() === "3 MB").click();
		return true;
	})()`)); err != nil {
		t.Fatalf("click download: %v", err)
	}
	var calls []string
	for deadline := time.Now().Add(10 * time.Second); len(calls) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if calls, err = chromedp.Run(browser, chromedp.Evaluate[[]string](`window.codecCalls`)); err != nil {
			t.Fatal(err)
		}
	}
	if want := CodecPath + "/download?preserveStorageRefs=true 200"; len(calls) != 1 || calls[0] != want {
		t.Errorf("codec calls of the download button = %q, want [%q]", calls, want)
	}
}
