package demo

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Issues returns the issues agent: it lists the open issues of a GitHub
// repository, asking the user for a GitHub token first (auth-required,
// Bindu's pattern of a credential asked for by service and auth type). The
// token is taken out of the user's message by the API and kept sealed in
// the credential store; the task, its history and every stream or webhook
// see only a reference, which the ListIssues activity resolves when it
// calls GitHub. A token GitHub refuses is asked for again.
//
// The agent calls the GitHub API that [GitHubAPIEnv] names.
func Issues() *workflows.Agent {
	gh := &GitHub{BaseURL: os.Getenv(GitHubAPIEnv)}
	return &workflows.Agent{
		Name:        "issues",
		Description: "Lists the open issues of a GitHub repository. Asks for a GitHub token (auth-required); the token never enters the task's history.",
		Skills: []a2a.AgentSkill{{
			ID:          "list-issues",
			Name:        "List open issues",
			Description: "Name a repository as owner/name; the agent asks for a GitHub token and answers with its open issues.",
			Tags:        []string{"github", "auth-required"},
			Examples:    []string{"a2aproject/a2a-go", "List the issues of temporalio/sdk-go"},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		Handle:     listIssues,
		Activities: []any{workflows.Activity(ActivityListIssues, gh.ListIssues)},
	}
}

// issuesState is the issues agent's state when its task continues as new.
type issuesState struct {
	Repo     string `json:"repo,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
}

var repoInText = regexp.MustCompile(`[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`)

// maxTokenAttempts is how many tokens the agent asks for before it gives up.
const maxTokenAttempts = 3

func listIssues(ctx workflow.Context, t *workflows.Task) error {
	var s issuesState
	if !t.Resume(&s) {
		s.Repo = strings.TrimSuffix(repoInText.FindString(t.Text()), ".")
	}
	for s.Repo == "" {
		m, err := t.Ask(ctx, "repository", "Which repository? (owner/name)", workflows.Resumable(&s))
		if err != nil {
			return err
		}
		s.Repo = repoInText.FindString(workflows.MessageText(m))
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
		Summary:             "list the open issues of " + s.Repo,
	})
	prompt := fmt.Sprintf("A GitHub token that can read %s, please.", s.Repo)
	for s.Attempts < maxTokenAttempts {
		s.Attempts++
		cred, err := t.RequireCredential(ctx, workflows.CredentialRequest{Service: "github", AuthType: "bearer", Prompt: prompt},
			workflows.Resumable(&s))
		if err != nil {
			return err
		}
		var issues []Issue
		err = workflow.ExecuteActivity(actx, ActivityListIssues,
			ListIssuesInput{Repo: s.Repo, Credential: cred}).Get(ctx, &issues)
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == ErrTypeCredentialRefused {
			prompt = fmt.Sprintf("GitHub refused that token. A GitHub token that can read %s, please.", s.Repo)
			continue
		}
		if err != nil {
			return fmt.Errorf("listing the issues of %s failed: %w", s.Repo, err)
		}
		t.Artifact(ctx, workflows.JSONArtifact("issues", map[string]any{"repository": s.Repo, "issues": issues}))
		t.Reply(fmt.Sprintf("%d open issue(s) in %s.", len(issues), s.Repo))
		return nil
	}
	return workflows.Reject(fmt.Sprintf("GitHub refused %d tokens for %s.", maxTokenAttempts, s.Repo))
}
