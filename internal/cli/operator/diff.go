package operator

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// diffOp is one line of an edit script: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	text string
}

// unifiedDiff returns the unified diff from a to b (labelled la and lb),
// or "" when they are equal. Policy texts are small: a longest common
// subsequence over their lines is plenty.
func unifiedDiff(la, lb, a, b string) string {
	if a == b {
		return ""
	}
	ops := editScript(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", la, lb)
	for start := 0; start < len(ops); {
		// The next change, and the hunk around it up to the last change
		// within 2*diffContext kept lines of the one before.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		end, kept := first, 0
		for i := first; i < len(ops); i++ {
			if ops[i].kind == ' ' {
				kept++
				if kept > 2*diffContext {
					break
				}
				continue
			}
			kept, end = 0, i+1
		}
		lo, hi := max(first-diffContext, start), min(end+diffContext, len(ops))
		writeHunk(&out, ops, lo, hi)
		start = hi
	}
	return out.String()
}

// writeHunk writes ops[lo:hi] as one hunk with its header.
func writeHunk(out *strings.Builder, ops []diffOp, lo, hi int) {
	aLine, bLine := 1, 1
	for _, op := range ops[:lo] {
		if op.kind != '+' {
			aLine++
		}
		if op.kind != '-' {
			bLine++
		}
	}
	aCount, bCount := 0, 0
	for _, op := range ops[lo:hi] {
		if op.kind != '+' {
			aCount++
		}
		if op.kind != '-' {
			bCount++
		}
	}
	if aCount == 0 { // diff -u names the line before an empty range
		aLine--
	}
	if bCount == 0 {
		bLine--
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", aLine, aCount, bLine, bCount)
	for _, op := range ops[lo:hi] {
		out.WriteByte(op.kind)
		out.WriteString(op.text)
		out.WriteByte('\n')
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// editScript turns a into b by a longest common subsequence of lines.
func editScript(a, b []string) []diffOp {
	// lcs[i][j] is the length of the LCS of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, diffOp{'-', a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, diffOp{'+', b[j]})
	}
	return ops
}
