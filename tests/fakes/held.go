package fakes

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// HeldModel is an OpenAI Chat Completions endpoint that holds every answer
// until the test releases it: a model call stays in progress for as long
// as the test looks at it. Released, it answers each request with Answer.
type HeldModel struct {
	*httptest.Server
	// Answer is the assistant's text of every answer.
	Answer string

	mu       sync.Mutex
	received int
	release  chan struct{}
	once     sync.Once
}

// NewHeldModel starts a HeldModel, released and closed when t ends.
func NewHeldModel(t testing.TB, answer string) *HeldModel {
	f := &HeldModel{Answer: answer, release: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := ReadChat(w, r)
		if !ok {
			return
		}
		f.mu.Lock()
		f.received++
		f.mu.Unlock()
		select {
		case <-f.release:
		case <-r.Context().Done():
			return
		}
		WriteChat(w, req.Stream, "chatcmpl-held", req.Model, TextMessage(f.Answer), 10, 5)
	}))
	t.Cleanup(func() { f.Release(); f.Close() })
	return f
}

// Received is how many requests came so far.
func (f *HeldModel) Received() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received
}

// Release lets the held answers go, and every later one at once.
func (f *HeldModel) Release() { f.once.Do(func() { close(f.release) }) }
