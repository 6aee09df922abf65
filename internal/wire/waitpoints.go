package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Names of the waitpoint update and query.
const (
	// UpdateCompleteWaitpoint completes a pending waitpoint with its payload.
	// Its argument is a [CompleteWaitpointInput], its result the
	// [Waitpoint] completed.
	UpdateCompleteWaitpoint = "CompleteWaitpoint"
	// QueryWaitpoints returns the task's waitpoints ([]Waitpoint). Its
	// argument is a [WaitpointsQuery].
	QueryWaitpoints = "Waitpoints"

	// ErrTypeWaitpointNotFound: the task has no waitpoint with that ID.
	ErrTypeWaitpointNotFound = "WaitpointNotFound"
	// ErrTypeWaitpointSettled: the waitpoint is no longer pending (completed,
	// expired or canceled); the message says how it ended.
	ErrTypeWaitpointSettled = "WaitpointSettled"
	// ErrTypeWaitpointTokenRefused: the token was minted for another
	// waitpoint of the same ID; the API answers as for a wrong token.
	ErrTypeWaitpointTokenRefused = "WaitpointTokenRefused"
)

// MaxWaitpointPayloadBytes bounds a waitpoint's payload: it goes into the
// task's history and state.
const MaxWaitpointPayloadBytes = 64 << 10

// CompleteWaitpointInput is the argument of UpdateCompleteWaitpoint.
type CompleteWaitpointInput struct {
	// Agent scopes the write as in [SendMessageInput]; empty skips the check.
	Agent       string `json:"agent,omitempty"`
	WaitpointID string `json:"waitpointId"`
	// Payload is the result, JSON.
	Payload json.RawMessage `json:"payload"`
	// Owner, when set, must be the task's owner: a completion without a
	// token. The API leaves it empty once it checked the token.
	Owner string `json:"owner,omitempty"`
	// By is who completes it, from authentication ("token" without it).
	By  string `json:"by,omitempty"`
	Via string `json:"via,omitempty"`
	// Token is what the caller's token is bound to, once the API checked
	// it; the waitpoint refuses a token minted for another waitpoint of the
	// same ID (ErrTypeWaitpointTokenRefused).
	Token *TokenBinding `json:"token,omitempty"`
}

// WaitpointsQuery is the argument of QueryWaitpoints.
type WaitpointsQuery struct {
	Agent string `json:"agent,omitempty"`
	// Owner, when set, must be the task's owner; empty for a caller the API
	// let in by the waitpoint's token.
	Owner string `json:"owner,omitempty"`
	// Token, for a caller let in by a token, is what the token is bound
	// to: the query answers with the waitpoint it opens, if any, only.
	Token *TokenBinding `json:"token,omitempty"`
}

// WaitpointTaskID returns the task a waitpoint ID belongs to.
func WaitpointTaskID(id string) (a2a.TaskID, bool) {
	i := strings.LastIndex(id, "-waitpoint-")
	if i <= 0 {
		return "", false
	}
	if n, err := strconv.Atoi(id[i+len("-waitpoint-"):]); err != nil || n < 1 {
		return "", false
	}
	return a2a.TaskID(id[:i]), true
}

// CompileWaitpointSchema compiles a schema that may refer to no other
// document (the compiler loads nothing: no file, no URL).
func CompileWaitpointSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noSchemaLoader{})
	const url = "waitpoint.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("the schema is not a JSON Schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	return s, nil
}

// noSchemaLoader refuses every reference to another document: a schema
// must never make the worker read a file or fetch a URL.
type noSchemaLoader struct{}

func (noSchemaLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s: a waitpoint schema may not refer to other documents", url)
}

// CheckJSON reports why value, one JSON value of at most maxBytes, does not
// satisfy schema (nil when it does, or when schema is empty); what names the
// value in the message. The schema may not refer to other documents.
// Decisions' edited arguments are checked with it against the gated tool's
// parameters.
func CheckJSON(schema, value json.RawMessage, maxBytes int, what string) error {
	return checkJSON(schema, value, maxBytes, what, "its schema")
}

func checkJSON(schema, value json.RawMessage, maxBytes int, what, schemaName string) error {
	if len(value) > maxBytes {
		return fmt.Errorf("%s has %d bytes, over the limit of %d", what, len(value), maxBytes)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if len(schema) == 0 {
		return nil
	}
	s, err := CompileWaitpointSchema(schema)
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			return fmt.Errorf("%s does not satisfy %s: %s", what, schemaName, schemaErrorText(verr))
		}
		return fmt.Errorf("%s does not satisfy %s: %w", what, schemaName, err)
	}
	return nil
}

// CheckWaitpointPayload reports why payload does not satisfy schema (nil
// when it does, or when schema is empty): it must be one JSON value of at
// most [MaxWaitpointPayloadBytes]. The API checks a payload with it before
// the update, the workflow's validator again.
func CheckWaitpointPayload(schema, payload json.RawMessage) error {
	return checkJSON(schema, payload, MaxWaitpointPayloadBytes, "the payload", "the waitpoint's schema")
}

// english prints the validator's messages.
var english = message.NewPrinter(language.English)

// schemaErrorText is a validation error as one line per failing place,
// without the schema's internal URL.
func schemaErrorText(verr *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(english)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	return strings.Join(lines, "; ")
}

// SameWaitpointPayload reports whether two payloads are the same JSON value
// (whatever their spacing and key order), for the idempotency of a
// completion sent again.
func SameWaitpointPayload(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// WaitpointTokens mints and checks waitpoint tokens. A token is the
// base64url of the waitpoint's creation time (Unix nanoseconds, 8 bytes big
// endian) and HMAC-SHA256(k, "a2aflow waitpoint v2 " + ID + " " + that
// time), where k is HMAC-SHA256(key, "a2aflow waitpoint tokens v1") for the
// first of the keys (api and worker share them: the secrets key and, for
// rotation, the previous ones). A waitpoint's ID never repeats within its
// task and its creation time is its own, so a token opens the one waitpoint
// it was minted for, not a later waitpoint of the same ID (a task whose
// waitpoints were numbered again before IDs crossed continue-as-new).
// Tokens of the first version, the HMAC of "a2aflow waitpoint " + ID alone,
// still open the waitpoints created before tokens were bound.
//
// No token is stored anywhere: the API checks the HMAC without asking the
// workflow (a wrong token tells nothing of the waitpoint), and the
// workflow checks the binding (CompleteWaitpointInput.Token,
// WaitpointsQuery.Token). A nil *WaitpointTokens mints nothing and accepts
// no token.
type WaitpointTokens struct {
	keys [][]byte
}

// TokenBinding is what a checked token opens: its waitpoint and that
// waitpoint's creation time (Unix nanoseconds; 0 for a first-version token,
// which names the ID alone).
type TokenBinding struct {
	WaitpointID string `json:"waitpointId"`
	Created     int64  `json:"created,omitempty"`
}

// NewWaitpointTokens returns the tokens of keys (the first mints, each checks).
func NewWaitpointTokens(keys ...[]byte) *WaitpointTokens {
	t := &WaitpointTokens{}
	for _, key := range keys {
		if len(key) == 0 {
			continue
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte("a2aflow waitpoint tokens v1"))
		t.keys = append(t.keys, m.Sum(nil))
	}
	if len(t.keys) == 0 {
		return nil
	}
	return t
}

func waitpointMACv1(key []byte, id string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("a2aflow waitpoint " + id))
	return m.Sum(nil)
}

func waitpointMAC(key []byte, id string, created int64) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("a2aflow waitpoint v2 " + id + " " + strconv.FormatInt(created, 10)))
	return m.Sum(nil)
}

// Token returns the token of the waitpoint id created at created (""
// without a key).
func (t *WaitpointTokens) Token(id string, created time.Time) string {
	if t == nil {
		return ""
	}
	n := created.UnixNano()
	raw := binary.BigEndian.AppendUint64(nil, uint64(n))
	raw = append(raw, waitpointMAC(t.keys[0], id, n)...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// Check reports whether token is a token of waitpoint id that one of the
// keys minted, and what it is bound to, in constant time for a token of a
// given length.
func (t *WaitpointTokens) Check(id, token string) (TokenBinding, bool) {
	if t == nil || token == "" || len(token) > 128 {
		return TokenBinding{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return TokenBinding{}, false
	}
	ok := false
	var created int64
	switch len(raw) {
	case sha256.Size: // first version: the ID alone
		for _, k := range t.keys {
			if hmac.Equal(raw, waitpointMACv1(k, id)) {
				ok = true
			}
		}
	case 8 + sha256.Size:
		created = int64(binary.BigEndian.Uint64(raw[:8]))
		for _, k := range t.keys {
			if hmac.Equal(raw[8:], waitpointMAC(k, id, created)) {
				ok = true
			}
		}
	}
	if !ok {
		return TokenBinding{}, false
	}
	return TokenBinding{WaitpointID: id, Created: created}, true
}
