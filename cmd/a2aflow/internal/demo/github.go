package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/workflows"
)

// GitHub calls the GitHub REST API for the issues agent with the token the
// user gave the task (auth-required): the activity gets the credential's
// reference and resolves it on the worker (workflows.CredentialRef.Secret),
// so the token is in no activity input or result, and never in history.
type GitHub struct {
	// BaseURL is the API's root; default DefaultGitHubAPI.
	BaseURL string
	// Client makes the requests; default a client with a 30 s timeout.
	Client *http.Client
}

// DefaultGitHubAPI is GitHub's REST API.
const DefaultGitHubAPI = "https://api.github.com"

// GitHubAPIEnv names the environment variable with the GitHub API the
// issues agent calls (a GitHub Enterprise server's https://HOST/api/v3, or
// a test's fake); default DefaultGitHubAPI. It is the demo's own setting,
// read by the a2aflow command when it builds its agents.
const GitHubAPIEnv = "A2AFLOW_GITHUB_API_URL"

// ActivityListIssues is the name of the issues agent's activity, in the
// history of every issues task: it never changes.
const ActivityListIssues = "ListIssues"

// ErrTypeCredentialRefused is the non-retryable error type of a call the
// service refused the credential for (401, 403): the task asks for another.
const ErrTypeCredentialRefused = "CredentialRefused"

// ListIssuesInput is the argument of ListIssues.
type ListIssuesInput struct {
	// Repo is "owner/name".
	Repo       string                  `json:"repo"`
	Credential workflows.CredentialRef `json:"credential"`
}

// Issue is one GitHub issue as the issues agent reports it.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	Author string `json:"author"`
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$`)

// maxGitHubBody bounds the answer read from GitHub.
const maxGitHubBody = 4 << 20

// ListIssues returns the open issues of a repository (the first page, at
// most 30), calling GitHub with the task's credential.
func (g *GitHub) ListIssues(ctx context.Context, in ListIssuesInput) ([]Issue, error) {
	if !repoName.MatchString(in.Repo) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%q is not a repository name like owner/name", in.Repo), errTypeInvalidInput, nil)
	}
	secret, err := in.Credential.Secret(ctx)
	if errors.Is(err, workflows.ErrNoCredential) {
		return nil, temporal.NewNonRetryableApplicationError("the credential given to the task is gone", ErrTypeCredentialRefused, nil)
	}
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(g.BaseURL, "/")
	if base == "" {
		base = DefaultGitHubAPI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/repos/"+in.Repo+"/issues?state=open&per_page=30", nil)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("GitHub API URL: %v", err), errTypeInvalidInput, nil)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	hc := g.Client
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		// Never the request itself in the error: no URL with secrets, no token.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("call GitHub: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxGitHubBody))
	if err != nil {
		return nil, fmt.Errorf("read GitHub's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("GitHub refused the token (HTTP %d)", resp.StatusCode), ErrTypeCredentialRefused, nil)
	case resp.StatusCode == http.StatusNotFound:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("GitHub knows no repository %s that the token can read", in.Repo), errTypeInvalidInput, nil)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, fmt.Errorf("GitHub answered HTTP %d", resp.StatusCode) // retried
	case resp.StatusCode != http.StatusOK:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("GitHub answered HTTP %d", resp.StatusCode), errTypeInvalidInput, nil)
	}
	var raw []struct {
		Number      int                    `json:"number"`
		Title       string                 `json:"title"`
		HTMLURL     string                 `json:"html_url"`
		User        struct{ Login string } `json:"user"`
		PullRequest *struct{}              `json:"pull_request"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("decode GitHub's issues: %w", err)
	}
	out := []Issue{}
	for _, i := range raw {
		if i.PullRequest != nil {
			continue // the issues endpoint lists pull requests too
		}
		out = append(out, Issue{Number: i.Number, Title: i.Title, URL: i.HTMLURL, Author: i.User.Login})
	}
	return out, nil
}
