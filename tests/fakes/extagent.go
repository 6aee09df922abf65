package fakes

import (
	"context"
	"iter"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// ExtAgent is a remote A2A agent that is not a2aflow: a2a-go's own server
// (a2asrv) with an executor that acts on words in the message:
//
//   - "reject": rejects the task ("not today");
//   - "slowask": works for 4 s, then asks "What is your name?";
//   - "ask": asks "What is your name?" at once;
//   - "reply": answers with a message, no task;
//   - "slow": works until canceled;
//   - "stall": the first time its message ID comes, answers the send
//     only after 15 s (a send in flight when our side is killed);
//   - anything else: completes at once.
//
// An answer to the question completes the task with the status message
// "Greeted NAME" and a "greeting" artifact "Hello, NAME". It records every
// message it executes and every cancel.
type ExtAgent struct {
	mu       sync.Mutex
	newTasks []string     // message IDs that started a task
	messages []string     // every message ID executed
	canceled []a2a.TaskID // tasks canceled
}

// ServeExt serves x over JSON-RPC with a card that offers streaming or not.
func ServeExt(t testing.TB, x *ExtAgent, streaming bool) *httptest.Server {
	return ServeExtAuth(t, x, streaming, "")
}

// ServeExtAuth is ServeExt behind a bearer token, when token is set: every
// request without it (the card's included) gets 401.
func ServeExtAuth(t testing.TB, x *ExtAgent, streaming bool, token string) *httptest.Server {
	return ExtCard(streaming, token).Serve(t, x)
}

// ExtCard is the card of ExtAgent.
func ExtCard(streaming bool, token string) RemoteAgent {
	return RemoteAgent{Name: "ext", Description: "Greets people by name.", Skill: "Greet", SkillDoes: "Greets you by name.", Streaming: streaming, Token: token}
}

// Execute runs one message as the type's doc says.
func (x *ExtAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ec.Message.Parts[0].Text()
		x.mu.Lock()
		again := slices.Contains(x.messages, ec.Message.ID)
		x.messages = append(x.messages, ec.Message.ID)
		if ec.StoredTask == nil {
			x.newTasks = append(x.newTasks, ec.Message.ID)
		}
		x.mu.Unlock()
		if strings.Contains(text, "stall") && !again {
			select {
			case <-ctx.Done():
				return
			case <-time.After(15 * time.Second):
			}
		}
		agentSays := func(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(s)) }
		if ec.StoredTask == nil && strings.Contains(text, "reply") {
			// An answer without a task.
			m := agentSays("replied: " + text)
			m.ContextID = ec.ContextID
			yield(m, nil)
			return
		}
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		} else if ec.StoredTask.Status.State == a2a.TaskStateInputRequired {
			art := a2a.NewArtifactEvent(ec, a2a.NewTextPart("Hello, "+text))
			art.Artifact.Name = "greeting"
			if !yield(art, nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentSays("Greeted "+text)), nil)
			return
		}
		switch {
		case strings.Contains(text, "reject"):
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateRejected, agentSays("not today")), nil)
		case strings.Contains(text, "slowask"):
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentSays("thinking")), nil) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(4 * time.Second):
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, agentSays("What is your name?")), nil)
		case strings.Contains(text, "ask"):
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, agentSays("What is your name?")), nil)
		case strings.Contains(text, "slow"):
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentSays("working slowly")), nil) {
				return
			}
			<-ctx.Done()
		default:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentSays("done: "+text)), nil)
		}
	}
}

// Cancel records the cancel and answers canceled.
func (x *ExtAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		x.mu.Lock()
		x.canceled = append(x.canceled, ec.TaskID)
		x.mu.Unlock()
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// Started returns the IDs of the messages that started a task and begin with prefix.
func (x *ExtAgent) Started(prefix string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for _, id := range x.newTasks {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}

// WasCanceled says whether task id was canceled.
func (x *ExtAgent) WasCanceled(id a2a.TaskID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range x.canceled {
		if c == id {
			return true
		}
	}
	return false
}
