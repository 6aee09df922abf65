package remote_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
)

func writeKeyring(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadKeyring(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	t.Setenv("TEST_A2AFLOW_KEY", "key-from-env")
	t.Setenv("TEST_A2AFLOW_PASS", "pass-from-env")
	t.Setenv("TEST_A2AFLOW_CLIENT_SECRET", te.clientSecret)
	t.Setenv("TEST_A2AFLOW_SCOPE", "scope-from-env")
	path := writeKeyring(t, `{
		"search": {"oauth2": {"tokenUrl": "`+te.URL+`/token", "clientId": "`+te.clientID+`",
			"clientSecret": "env:TEST_A2AFLOW_CLIENT_SECRET", "scopes": ["a", "env:TEST_A2AFLOW_SCOPE"]}},
		"billing": {"apiKey": {"value": "env:TEST_A2AFLOW_KEY", "in": "query", "name": "key"},
			"basic": {"username": "svc", "password": "env:TEST_A2AFLOW_PASS"}},
		"literal": {"bearer": "literal-token"}
	}`)
	k, err := remote.LoadKeyring(path)
	if err != nil {
		t.Fatalf("LoadKeyring: %v", err)
	}
	if got := k.Names(); !slices.Equal(got, []string{"billing", "literal", "search"}) {
		t.Errorf("Names() = %v, want billing, literal, search", got)
	}

	rec := newRecorder(t)
	billing, err := callsClient(k, rec.URL, "billing")
	if err != nil {
		t.Fatal(err)
	}
	get(t, billing, rec.URL)
	s := rec.last(t)
	want(t, "billing: key parameter", s.Query.Get("key"), "key-from-env")
	if user, pass, ok := s.basic(); !ok || user != "svc" || pass != "pass-from-env" {
		t.Errorf("billing: basic auth = %q, %q, %t; want svc, pass-from-env", user, pass, ok)
	}

	literal, err := callsClient(k, rec.URL, "literal")
	if err != nil {
		t.Fatal(err)
	}
	get(t, literal, rec.URL)
	want(t, "literal: Authorization", rec.last(t).Header.Get("Authorization"), "Bearer literal-token")

	for range 3 {
		search, err := callsClient(k, rec.URL, "search")
		if err != nil {
			t.Fatal(err)
		}
		get(t, search, rec.URL)
		want(t, "search: Authorization", rec.last(t).Header.Get("Authorization"), "Bearer tok-1")
	}
	if n := te.count(); n != 1 {
		t.Errorf("the search token was fetched %d times over three endpoints, want once", n)
	}
	te.mu.Lock()
	scopes := strings.Join(te.scopes, " ")
	te.mu.Unlock()
	if scopes != "a scope-from-env" {
		t.Errorf("scopes sent = %q, want a scope-from-env", scopes)
	}
	plain, err := callsClient(k, rec.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	get(t, plain, rec.URL)
	if s := rec.last(t); s.Header.Get("Authorization") != "" || len(s.Query) != 0 {
		t.Errorf(`no auth reference sent credentials: %+v`, s)
	}

	_, err = callsClient(k, rec.URL, "nope")
	var unknown *remote.UnknownCredentialsError
	if !errors.As(err, &unknown) || unknown.Ref != "nope" {
		t.Errorf(`Endpoint(..., "nope") = %v, want an UnknownCredentialsError for nope`, err)
	}
}

// callsClient is the A2A client of the operator's agent at url called with
// the credentials ref of k, through an outbound client allowing loopback.
func callsClient(k *remote.Keyring, url, ref string) (*http.Client, error) {
	e, err := k.Endpoint(url, true, ref)
	if err != nil {
		return nil, err
	}
	cs, err := e.Clients(outbound.New(outbound.Options{}))
	return cs.Calls, err
}

func TestLoadKeyringMissingEnv(t *testing.T) {
	t.Setenv("TEST_A2AFLOW_SET", "visible-secret")
	os.Unsetenv("TEST_A2AFLOW_UNSET")
	t.Setenv("TEST_A2AFLOW_EMPTY", "")
	tests := []struct{ name, file, wantErr string }{
		{"unset", `{"ok": {"bearer": "env:TEST_A2AFLOW_SET"},
			"search": {"oauth2": {"tokenUrl": "https://idp/t", "clientId": "c", "clientSecret": "env:TEST_A2AFLOW_UNSET"}}}`,
			`credentials "search": oauth2.clientSecret: environment variable TEST_A2AFLOW_UNSET is not set`},
		{"empty", `{"billing": {"apiKey": {"value": "env:TEST_A2AFLOW_EMPTY"}}}`,
			`credentials "billing": apiKey.value: environment variable TEST_A2AFLOW_EMPTY is empty`},
		{"in a list", `{"s": {"oauth2": {"tokenUrl": "https://idp/t", "clientId": "c", "clientSecret": "x", "scopes": ["a", "env:TEST_A2AFLOW_UNSET"]}}}`,
			`credentials "s": oauth2.scopes[1]: environment variable TEST_A2AFLOW_UNSET is not set`},
		{"no name", `{"b": {"bearer": "env:"}}`, `credentials "b": bearer: "env:" names no environment variable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeKeyring(t, tt.file)
			_, err := remote.LoadKeyring(path)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadKeyring = %v, want an error containing %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("the error does not name the file: %v", err)
			}
			if strings.Contains(err.Error(), "visible-secret") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

func TestLoadKeyringInvalid(t *testing.T) {
	t.Setenv("TEST_A2AFLOW_SECRET", "s3cr3t")
	tests := []struct{ name, file, wantErr string }{
		{"unknown in", `{"a": {"apiKey": {"value": "env:TEST_A2AFLOW_SECRET", "in": "body"}}}`, `credentials "a": apiKey.in "body" is not header, query or cookie`},
		{"misspelt field", `{"a": {"apiKey": {"valeu": "s3cr3t"}}}`, `credentials "a": json: unknown field "valeu"`},
		{"no scheme", `{"a": {}}`, `credentials "a": sets no scheme`},
		{"null entry", `{"a": null}`, `credentials "a": not a JSON object`},
		{"bearer and oauth2", `{"a": {"bearer": "t", "oauth2": {"tokenUrl": "https://idp/t", "clientId": "c", "clientSecret": "x"}}}`,
			`credentials "a": bearer and oauth2 both use the Authorization header`},
		{"oauth2 without token URL", `{"z": {"oauth2": {"clientId": "c", "clientSecret": "env:TEST_A2AFLOW_SECRET"}}}`, `credentials "z": oauth2.tokenUrl is empty`},
		{"wrong type", `{"a": {"bearer": 12345678}}`, `credentials "a": bearer must be a JSON string`},
		{"wrong type after env", `{"a": {"basic": "env:TEST_A2AFLOW_SECRET"}}`, `credentials "a": basic must be a JSON object`},
		{"not an object", `["a"]`, "not a JSON object of named credentials"},
		{"not JSON", `{"a": `, "not a JSON object of named credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.LoadKeyring(writeKeyring(t, tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadKeyring = %v, want an error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "12345678") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
	if _, err := remote.LoadKeyring(filepath.Join(t.TempDir(), "missing.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadKeyring of a missing file = %v, want a not-exist error", err)
	}
}

func TestNewKeyring(t *testing.T) {
	rec := newRecorder(t)
	m := map[string]*remote.Credentials{
		"good": {Bearer: "b"},
		"bad":  {Bearer: "b", Basic: &remote.Basic{Username: "u"}},
	}
	k := remote.NewKeyring(m)
	delete(m, "good") // the keyring keeps its own map
	hc, err := callsClient(k, rec.URL, "good")
	if err != nil {
		t.Fatal(err)
	}
	get(t, hc, rec.URL)
	want(t, "Authorization", rec.last(t).Header.Get("Authorization"), "Bearer b")
	if _, err := callsClient(k, rec.URL, "bad"); err == nil || !strings.Contains(err.Error(), `credentials "bad": bearer and basic both use the Authorization header`) {
		t.Errorf(`Endpoint(..., "bad") = %v, want the validation error`, err)
	}
	if got := k.Names(); !slices.Equal(got, []string{"bad", "good"}) {
		t.Errorf("Names() = %v", got)
	}

	var none *remote.Keyring
	if hc, err := callsClient(none, rec.URL, ""); err != nil || hc == nil {
		t.Errorf(`nil keyring, no auth reference = %v, %v; want a client without credentials`, hc, err)
	}
	var unknown *remote.UnknownCredentialsError
	if _, err := callsClient(none, rec.URL, "x"); !errors.As(err, &unknown) {
		t.Errorf(`nil keyring, auth reference x = %v, want an UnknownCredentialsError (not a client without credentials)`, err)
	}
}
