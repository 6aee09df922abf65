package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestConsolePolicies drives the console's policy editor (#/policies) in
// headless Chromium against a real serve: the scope set with the CLI is
// listed and opens in the editor with its history; a broken text is
// refused by Validate with its line; the raised threshold shows in Diff,
// validates and is saved as version 2 by the name the page decides as,
// with its reason; Load puts version 1 back into the editor.
func TestConsolePolicies(t *testing.T) {
	exe := chromium(t)
	s := harness.StartServe(t, t.TempDir())
	v1 := filepath.Join(t.TempDir(), "v1.cedar")
	if err := os.WriteFile(v1, []byte(payablesCedar(1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := harness.Command("policies", "set", "agent/payables", v1, "--reason", "finance over 1,000", "--as", "root", "--api", s.APIURL).CombinedOutput(); err != nil {
		t.Fatalf("a2aflow policies set: %v\n%s", err, out)
	}
	page, closeBrowser := openConsole(t, exe, s.APIURL+"/console#/policies")
	defer closeBrowser()
	do(t, page, "decide as ann", chromedp.WaitVisible(chromedp.CSS("#approver")),
		chromedp.SetValue(chromedp.CSS("#approver"), "ann"), chromedp.Click(chromedp.CSS(`#credentials button[type="submit"]`)))
	waitJS(t, page, "the scope in force is listed", `document.querySelector("#policy-scopes").textContent.includes("agent/payables") && document.querySelector("#policy-scopes").textContent.includes("finance over 1,000")`)
	do(t, page, "open the scope", chromedp.Click(chromedp.CSS(`#policy-scopes a.scope-link`)))
	waitJS(t, page, "its text and history", `document.querySelector("#policy-text").value.includes("> 1000") && document.querySelectorAll("#policy-history li button.load").length === 1`)
	checkLabels(t, page, "#/policies")

	do(t, page, "validate a broken text", chromedp.SetValue(chromedp.CSS("#policy-text"), "permit (principal, action, resource)\nwhen { context.nothing };"),
		chromedp.Click(chromedp.CSS("#policy-validate")))
	waitJS(t, page, "the problem and its line", `document.querySelector("#policy-problems").textContent.includes("line ")`)

	do(t, page, "diff the raised threshold", chromedp.SetValue(chromedp.CSS("#policy-text"), payablesCedar(5000)), chromedp.Click(chromedp.CSS("#policy-diff")))
	waitJS(t, page, "the diff", `[...document.querySelectorAll("#policy-diff-view ins")].some(e => e.textContent.includes("> 5000")) && [...document.querySelectorAll("#policy-diff-view del")].some(e => e.textContent.includes("> 1000"))`)
	do(t, page, "validate it", chromedp.Click(chromedp.CSS("#policy-validate")))
	waitJS(t, page, "valid", `document.querySelector("#policy-valid") !== null`)
	do(t, page, "save it", chromedp.SetValue(chromedp.CSS("#policy-reason"), "over 5,000 from today"), chromedp.Click(chromedp.CSS("#policy-set")))
	waitJS(t, page, "version 2 saved", `(document.querySelector("#policy-saved")?.textContent || "").includes("version 2") && document.querySelectorAll("#policy-history li button.load").length === 2`)

	var now struct {
		Version int64  `json:"version"`
		Text    string `json:"text"`
		Author  string `json:"author"`
		Reason  string `json:"reason"`
	}
	if code := getJSON(t, s.APIURL+"/policies/agent/payables", &now); code != 200 || now.Version != 2 || now.Text != payablesCedar(5000) || now.Author != "ann" || now.Reason != "over 5,000 from today" {
		t.Errorf("the scope after the save: HTTP %d, version %d by %q (%q), text %q", code, now.Version, now.Author, now.Reason, now.Text)
	}
	do(t, page, "load version 1", chromedp.Click(chromedp.CSS(`#policy-history li[data-version="1"] button.load`)))
	waitJS(t, page, "version 1 in the editor", `document.querySelector("#policy-text").value.includes("> 1000")`)
	if !strings.Contains(payablesCedar(1000), "> 1000") {
		t.Fatal("payablesCedar's threshold is not where the test looks")
	}
}
