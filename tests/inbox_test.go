package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/chromedp/chromedp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// chromiumPath returns the system Chromium, or "". .ci/run installs
// Debian's chromium package.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromium returns the path of the system Chromium, or skips the test.
func chromium(t testing.TB) string {
	exe := chromiumPath()
	if exe == "" {
		t.Skip("no Chromium on PATH (apt-get install chromium)")
	}
	return exe
}

// openInbox opens apiURL's finance inbox in headless Chromium (exe) and
// returns the page, which allows a minute for what the test does on it,
// and closeBrowser.
func openInbox(t testing.TB, ctx context.Context, exe, apiURL string) (page context.Context, closeBrowser func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	// The first call starts the browser; it must not carry the timeout.
	if err := chromedp.Do(browser, chromedp.Navigate(apiURL+"/inbox?group=finance")); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("browser: %v", err)
	}
	page, cancelPage := context.WithTimeout(browser, time.Minute)
	return page, func() { cancelPage(); cancelBrowser(); cancelAlloc() }
}

// TestInboxApprovesInBrowser loads /inbox in headless Chromium, approves a
// pending expense as a finance approver, sees it leave the pending list and
// checks that the task completed approved. It writes a screenshot.
func TestInboxApprovesInBrowser(t *testing.T) {
	exe := chromium(t)
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task, id := expense(t, ctx, c, "640 EUR team offsite")

	page, closeBrowser := openInbox(t, ctx, exe, s.APIURL)
	defer closeBrowser()

	card := chromedp.CSS(`div.approval[data-id="` + id + `"]`)
	if err := chromedp.Do(page, chromedp.WaitVisible(card)); err != nil {
		t.Fatalf("the pending approval is not on the page: %v", err)
	}
	before, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	// A comment typed, then focus elsewhere across a poll (every 2 s): the
	// card is kept in place, the comment is not wiped.
	err = chromedp.Do(page,
		chromedp.SendKeys(card+" textarea.comment", "approved in the browser"),
		chromedp.Focus(chromedp.CSS("#approver")),
		chromedp.Sleep(2500*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := chromedp.Run(page, chromedp.Value(card+" textarea.comment"))
	if err != nil || kept != "approved in the browser" {
		t.Fatalf("comment after a refresh = %q (%v), want it kept", kept, err)
	}
	err = chromedp.Do(page,
		chromedp.SetValue(chromedp.CSS("#approver"), "fiona"),
		chromedp.Click(card+" button.approve"),
		// The card leaves the pending list and shows up as decided.
		chromedp.WaitNotPresent("#pending "+card),
		chromedp.WaitVisible("#decided "+card),
	)
	if err != nil {
		t.Fatalf("approve in the browser: %v", err)
	}
	pendingText, err := chromedp.Run(page, chromedp.Text(chromedp.CSS("#pending")))
	if err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), "a2aflow-inbox")
	_ = os.MkdirAll(dir, 0o755)
	for name, png := range map[string][]byte{"inbox-before.png": before, "inbox-after.png": after} {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	if strings.Contains(pendingText, "640") {
		t.Errorf("the approved expense is still listed as pending: %q", pendingText)
	}

	got := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
	ok, who, via, comment := lastDecision(t, receiptOf(t, got))
	if !ok || who != "fiona" || via != "inbox" || comment != "approved in the browser" {
		t.Errorf("decision = %v by %s via %s (%q), want approved by fiona via the inbox", ok, who, via, comment)
	}
}
