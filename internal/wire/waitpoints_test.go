package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"
)

// TestWaitpointTokens: a token opens the waitpoint it was minted for, its
// ID and creation time (a later waitpoint of the same ID is another one),
// under the current key or a previous one; nothing else opens it.
func TestWaitpointTokens(t *testing.T) {
	tokens := NewWaitpointTokens([]byte("new-key"), []byte("old-key"))
	old := NewWaitpointTokens([]byte("old-key"))
	id := "task-1-waitpoint-1"
	created := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC)
	tok := tokens.Token(id, created)
	if b, ok := tokens.Check(id, tok); !ok || b != (TokenBinding{WaitpointID: id, Created: created.UnixNano()}) {
		t.Errorf("a token opens %+v (%v), want its waitpoint at %s", b, ok, created)
	}
	if _, ok := tokens.Check("task-1-waitpoint-2", tok); ok {
		t.Error("a token opens another waitpoint")
	}
	if b, ok := tokens.Check(id, old.Token(id, created)); !ok || b.Created != created.UnixNano() {
		t.Error("a token of the previous key does not open its waitpoint")
	}
	if _, ok := old.Check(id, tok); ok {
		t.Error("a token of a key the checker lacks opens the waitpoint")
	}
	// The creation time is in the token and under the MAC: another time
	// is another waitpoint, not a forgery that passes.
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	raw[7]++
	if _, ok := tokens.Check(id, base64.RawURLEncoding.EncodeToString(raw)); ok {
		t.Error("a token with its time changed opens the waitpoint")
	}
	for _, bad := range []string{"", "not base64!", tok[:20], tok + "AAAA"} {
		if _, ok := tokens.Check(id, bad); ok {
			t.Errorf("token %q opens the waitpoint", bad)
		}
	}
	var none *WaitpointTokens
	if _, ok := none.Check(id, tok); none.Token(id, created) != "" || ok || NewWaitpointTokens() != nil {
		t.Error("without a key, tokens are minted or accepted")
	}
}

// TestWaitpointTokensFirstVersion: a token minted before tokens were bound
// (the HMAC of the ID alone) still checks, bound to nothing but its ID: the
// workflow lets it open only waitpoints created before.
func TestWaitpointTokensFirstVersion(t *testing.T) {
	tokens := NewWaitpointTokens([]byte("key"))
	id := "task-1-waitpoint-1"
	m := hmac.New(sha256.New, tokens.keys[0])
	m.Write([]byte("a2aflow waitpoint " + id))
	v1 := base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	if b, ok := tokens.Check(id, v1); !ok || b != (TokenBinding{WaitpointID: id}) {
		t.Errorf("first-version token: %+v %v, want its ID alone", b, ok)
	}
	if _, ok := tokens.Check("task-1-waitpoint-2", v1); ok {
		t.Error("a first-version token opens another ID")
	}
}
