package cmdutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
)

// ProgName is the program's name as run: a2aflow, or the name of a program
// built on a2aflow.Main, for the commands it tells the user to run.
func ProgName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "a2aflow"
	}
	return filepath.Base(os.Args[0])
}

// AbsPath returns p made absolute, or p when it cannot be.
func AbsPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// PrintJSON writes v as indented JSON (--json).
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// BuildID is the build ID of this binary (the worker's default --build-id,
// shown by version): the VCS revision it was built from when the tree was
// clean, else the SHA-256 of the executable (two builds of different code
// never share an ID; pinned tasks must never meet code other than theirs).
func BuildID() (string, error) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var revision string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(revision) >= 12 && !modified {
			return revision[:12], nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the executable cannot be found: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("the executable cannot be read: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("the executable cannot be read: %w", err)
	}
	return "sha256-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}
