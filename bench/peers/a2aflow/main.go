// Command a2aflow-peer is the a2aflow side of `make bench-peers`: the same
// small agent the other frameworks' files in bench/peers write, served by
// a2aflow. booker asks "Where to?" (ask_user, a durable wait: the task is
// input-required until the answer comes) and answers "Booked <city>";
// booker-tools does the same but books through the book_trip tool, an
// activity. The model is whatever OPENAI_BASE_URL points at (the bench's
// fake).
package main

import (
	"context"
	"net/http"
	_ "net/http/pprof" // only served with A2AFLOW_PEER_PPROF
	"os"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

const prompt = "You book trips. Ask the user where to with ask_user, then book it."

// BookTripInput is book_trip's argument.
type BookTripInput struct {
	City string `json:"city" jsonschema:"description=the destination"`
}

var bookTrip = llm.NewTool("book_trip", "Books a trip to a city.",
	func(_ context.Context, in BookTripInput) (string, error) { return "Booked " + in.City, nil })

func booker(name string, tools ...llm.Tool) *workflows.Agent {
	return &workflows.Agent{
		Name:        name,
		Description: "Books a trip: asks where to, then books it.",
		Skills:      []a2a.AgentSkill{{ID: "book", Name: "Book", Description: "Books a trip."}},
		Activities:  toolActivities(tools),
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			answer, err := llm.Worker(append([]llm.Tool{llm.AskUser(t)}, tools...)...).Run(ctx, t.Thread(), llm.WithSystem(prompt))
			if err != nil {
				return err
			}
			t.Reply(answer)
			return nil
		},
	}
}

func toolActivities(tools []llm.Tool) []any {
	out := make([]any, 0, len(tools))
	for _, tool := range tools {
		out = append(out, tool)
	}
	return out
}

func main() {
	// A2AFLOW_PEER_PPROF=127.0.0.1:6060 serves net/http/pprof there, to
	// profile the peer while the driver runs (off by default).
	if addr := os.Getenv("A2AFLOW_PEER_PPROF"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
	a2aflow.Main(booker("booker"), booker("booker-tools", bookTrip))
}
