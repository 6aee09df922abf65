package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Keyring holds named credentials: an agent directory entry's auth
// reference names one of them. It is safe for concurrent use; an entry's
// OAuth2 token source is built once and shared, so a token is reused by
// every call made with that entry. An entry's "hosts" say where it may be
// sent (see Credentials.Hosts and Endpoint.Clients).
type Keyring struct {
	creds map[string]*Credentials
	// logins finds the names the file lacks among the OAuth logins
	// (WithLogins); each is built once and kept, so that its tokens are
	// shared by every call.
	logins    LoginSource
	loginMu   sync.Mutex
	loginCred map[string]*Credentials
}

// LoginSource finds OAuth logins by name (package oauthlogin's store).
type LoginSource interface {
	// LoginCredentials returns the credentials of the login named name
	// (Login and Hosts set), or ok false when there is none.
	LoginCredentials(name string) (c *Credentials, ok bool, err error)
}

// WithLogins returns a keyring that has k's credentials and, for the names
// k lacks, the logins of src. k may be nil (no credentials file).
func (k *Keyring) WithLogins(src LoginSource) *Keyring {
	out := &Keyring{logins: src, loginCred: map[string]*Credentials{}}
	if k != nil {
		out.creds = k.creds
	}
	return out
}

// NewKeyring returns a keyring of the given named credentials. The map is
// copied; the Credentials themselves are shared and must not change
// afterwards.
func NewKeyring(creds map[string]*Credentials) *Keyring {
	m := make(map[string]*Credentials, len(creds))
	for name, c := range creds {
		m[name] = c
	}
	return &Keyring{creds: m}
}

// EnvPrefix marks a keyring string value taken from the environment:
// "env:NAME" is replaced by the variable NAME when the keyring is loaded.
const EnvPrefix = "env:"

// LoadKeyring reads a keyring file: a JSON object whose keys are the
// credential names (the auth references) and whose values are Credentials:
//
//	{
//	  "billing": {"apiKey": {"value": "env:BILLING_KEY", "in": "query"}},
//	  "search":  {"oauth2": {"tokenUrl": "https://idp.example/token",
//	              "clientId": "a2aflow", "clientSecret": "env:SEARCH_SECRET",
//	              "scopes": ["search.read"]},
//	              "hosts": ["search.example", "search-2.example:8443"]}
//	}
//
// Any string value "env:NAME" is replaced by the environment variable NAME;
// an unset or empty variable is an error naming the variable and the
// credential. Unknown fields are errors (a misspelt field would otherwise
// silently send nothing), and so is an entry that fails Validate or sets no
// scheme at all. Errors never quote a secret.
func LoadKeyring(path string) (*Keyring, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	k, err := parseKeyring(raw)
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	return k, nil
}

func parseKeyring(raw []byte) (*Keyring, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("not a JSON object of named credentials: %w", jsonErrorWithoutValue(err))
	}
	if entries == nil {
		return nil, errors.New("not a JSON object of named credentials (null)")
	}
	creds := make(map[string]*Credentials, len(entries))
	for _, name := range sortedKeys(entries) {
		c, err := parseEntry(entries[name])
		if err != nil {
			return nil, fmt.Errorf("credentials %q: %w", name, err)
		}
		creds[name] = c
	}
	return &Keyring{creds: creds}, nil
}

// parseEntry decodes one entry: it substitutes the env: values, then decodes
// strictly into Credentials and validates them.
func parseEntry(raw json.RawMessage) (*Credentials, error) {
	var tree any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, jsonErrorWithoutValue(err)
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, errors.New("not a JSON object")
	}
	tree, err := substituteEnv(tree, "")
	if err != nil {
		return nil, err
	}
	resolved, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	c := &Credentials{}
	dec = json.NewDecoder(bytes.NewReader(resolved))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, jsonErrorWithoutValue(err)
	}
	if c.APIKey == nil && c.Bearer == "" && c.Basic == nil && c.OAuth2 == nil {
		return nil, errors.New("sets no scheme: give apiKey, bearer, basic or oauth2")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// substituteEnv replaces every "env:NAME" string of v by the variable NAME.
// path locates v for error messages (apiKey.value).
func substituteEnv(v any, path string) (any, error) {
	switch v := v.(type) {
	case string:
		name, ok := strings.CutPrefix(v, EnvPrefix)
		if !ok {
			return v, nil
		}
		if name == "" {
			return nil, fmt.Errorf("%s: %q names no environment variable", path, v)
		}
		val, set := os.LookupEnv(name)
		if !set {
			return nil, fmt.Errorf("%s: environment variable %s is not set", path, name)
		}
		if val == "" {
			return nil, fmt.Errorf("%s: environment variable %s is empty", path, name)
		}
		return val, nil
	case map[string]any:
		for k, e := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			s, err := substituteEnv(e, p)
			if err != nil {
				return nil, err
			}
			v[k] = s
		}
		return v, nil
	case []any:
		for i, e := range v {
			s, err := substituteEnv(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			v[i] = s
		}
		return v, nil
	}
	return v, nil
}

// jsonErrorWithoutValue keeps the location of a JSON error but not a value
// it may quote (encoding/json quotes the offending value, which could be a
// secret after env substitution).
func jsonErrorWithoutValue(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "the value"
		}
		return fmt.Errorf("%s must be a JSON %s", field, jsonKind(typeErr.Type.Kind()))
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("invalid JSON at byte %d", syntaxErr.Offset)
	}
	return err // unknown field "x", unexpected end of input...: no value
}

// jsonKind names k the JSON way.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	return "number"
}

// Names returns the names of the keyring's credentials, sorted.
func (k *Keyring) Names() []string {
	if k == nil {
		return nil
	}
	return sortedKeys(k.creds)
}

// Credentials returns the credentials named ref, or an
// *UnknownCredentialsError.
func (k *Keyring) Credentials(ref string) (*Credentials, error) {
	if k == nil {
		return nil, &UnknownCredentialsError{Ref: ref}
	}
	c, ok := k.creds[ref]
	if ok {
		return c, nil
	}
	if k.logins == nil {
		return nil, &UnknownCredentialsError{Ref: ref}
	}
	k.loginMu.Lock()
	defer k.loginMu.Unlock()
	if c := k.loginCred[ref]; c != nil {
		return c, nil
	}
	c, ok, err := k.logins.LoginCredentials(ref)
	if err != nil {
		return nil, fmt.Errorf("OAuth login %s: %w", ref, err)
	}
	if !ok {
		return nil, &UnknownCredentialsError{Ref: ref, Logins: true}
	}
	k.loginCred[ref] = c
	return c, nil
}

// Endpoint returns the endpoint of the agent at url (trusted when the
// operator configured it) called with the credentials named ref; "" means
// none. An unknown ref is an *UnknownCredentialsError. The credentials are
// shared by every endpoint naming them, so an OAuth2 token is reused.
func (k *Keyring) Endpoint(url string, trusted bool, ref string) (Endpoint, error) {
	e := Endpoint{URL: url, Trusted: trusted, AuthRef: ref}
	if ref == "" {
		return e, nil
	}
	c, err := k.Credentials(ref)
	if err != nil {
		return Endpoint{}, err
	}
	if c == nil {
		return Endpoint{}, fmt.Errorf("credentials %q are empty", ref)
	}
	e.Credentials = c
	return e, nil
}

// UnknownCredentialsError is returned for an auth reference the keyring lacks.
type UnknownCredentialsError struct {
	Ref string
	// Logins says the OAuth logins were looked in too.
	Logins bool
}

func (e *UnknownCredentialsError) Error() string {
	if e.Logins {
		return "no credentials named " + e.Ref + " are configured (see --outbound-credentials) and no OAuth login has that name (a2aflow agents login)"
	}
	return "no credentials named " + e.Ref + " are configured (see --outbound-credentials)"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
