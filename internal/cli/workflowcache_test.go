package cli

import (
	"strings"
	"testing"
)

// A negative --workflow-cache-size is refused before serve starts Temporal
// or the worker dials it, from the flag and from the environment.
func TestWorkflowCacheSizeRefused(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--data-dir", dir, "--http-addr", "127.0.0.1:0", "--workflow-cache-size", "-1"},
		{"worker", "--data-dir", dir, "--insecure-store-push-secrets", "--workflow-cache-size", "-5"},
	} {
		root := NewRoot(testApp())
		root.SetArgs(args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--workflow-cache-size") {
			t.Errorf("%v: %v, want the negative cache size refused", args, err)
		}
	}
	t.Setenv("A2AFLOW_WORKFLOW_CACHE_SIZE", "-2")
	root := NewRoot(testApp())
	root.SetArgs([]string{"worker", "--data-dir", dir, "--insecure-store-push-secrets"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--workflow-cache-size -2") {
		t.Errorf("A2AFLOW_WORKFLOW_CACHE_SIZE=-2: %v, want it refused", err)
	}
}
