package client

import (
	"fmt"
	"io"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// livePrinter prints the answers an agent's model is writing (a2aflow's
// live-answer artifact chunks, wire.LiveMetadataKey) as the text grows:
// prefix, then each piece as it comes, on one line. A chunk that starts
// the answer again (a retried model call) starts a new line, marked, as a
// terminal cannot take back what it printed.
type livePrinter struct {
	out    io.Writer
	prefix string
	open   bool   // a line of live text is open
	text   string // the answer as joined so far
	done   string // the last answer printed whole
}

// isLive reports whether e is a chunk of a live answer (not of a remote
// agent's artifact relayed as it comes, which is shown as an artifact).
func isLive(e *a2a.TaskArtifactUpdateEvent) bool {
	live, ok := e.Metadata[wire.LiveMetadataKey]
	if m, _ := live.(map[string]any); m["relayed"] == true {
		return false
	}
	return ok && e.Artifact != nil
}

// chunk prints a live chunk.
func (p *livePrinter) chunk(e *a2a.TaskArtifactUpdateEvent) {
	if !e.Append {
		if p.open {
			fmt.Fprintf(p.out, "\n%s(the model started its answer again) ", p.prefix)
		} else {
			fmt.Fprint(p.out, p.prefix)
		}
		p.open, p.text = true, ""
	}
	piece := partsText(e.Artifact.Parts)
	fmt.Fprint(p.out, piece)
	p.text += piece
	if e.LastChunk {
		p.end()
	}
}

// end closes the open line, if any.
func (p *livePrinter) end() {
	if p.open {
		fmt.Fprintln(p.out)
		p.open, p.done = false, p.text
	}
}

// shown reports whether text is the answer just printed live, so it need
// not be printed again.
func (p *livePrinter) shown(text string) bool {
	return text != "" && (text == p.done || p.open && text == p.text)
}
