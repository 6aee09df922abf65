package genai

import (
	"os"
	"strings"
)

// EnvCaptureContent is the ecosystem's variable by which an operator opts in
// to message contents on GenAI spans (prompts, answers, tool arguments and
// results). Off by default, as the conventions say: contents may hold
// personal data and secrets.
const EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// CaptureContent reports whether EnvCaptureContent is true in this
// process's environment ("true" or "1"; anything else is off).
func CaptureContent() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvCaptureContent))) {
	case "true", "1":
		return true
	}
	return false
}
