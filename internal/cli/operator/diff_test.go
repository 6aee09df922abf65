package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnifiedDiff: a change reads as diff -u would print it; equal texts
// give nothing; a first version diffs against nothing.
func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"equal", old, old, ""},
		{"one line", old, "a\nb\nc\nd\ne\nF\ng\nh\ni\nj\nk\n",
			"--- old\n+++ new\n@@ -3,7 +3,7 @@\n c\n d\n e\n-f\n+F\n g\n h\n i\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n",
			"--- old\n+++ new\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -9,4 +10,3 @@\n 9\n 10\n 11\n-12\n"},
		{"from nothing", "", "x\ny\n", "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, unifiedDiff("old", "new", tc.a, tc.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
