package pushverify_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/pushtoken"
	"github.com/a2aflow/a2aflow/pushverify"
)

// keyServer serves a signer's key set at /.well-known/jwks.json, as the
// a2aflow API does, and counts the fetches.
type keyServer struct {
	*httptest.Server
	mu      sync.Mutex
	signer  *cardsign.Signer
	fetches int
}

func newKeyServer(t *testing.T, s *cardsign.Signer) *keyServer {
	t.Helper()
	k := &keyServer{signer: s}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pushverify.JWKSPath {
			http.NotFound(w, r)
			return
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		k.fetches++
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(k.signer.JWKS())
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *keyServer) set(s *cardsign.Signer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.signer = s
}

func (k *keyServer) fetchCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fetches
}

func newSigner(t *testing.T, alg string) (*cardsign.Signer, []byte) {
	t.Helper()
	pemKey, err := cardsign.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsign.NewSigner(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	return s, pemKey
}

const (
	hookURL = "https://hooks.example/a2a"
	body    = `{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"a2aflowEventSeq":3}}}`
)

// mint returns a token as the delivery activity mints it, at now.
func mint(t *testing.T, s *cardsign.Signer, issuer, audience string, body []byte, now time.Time) string {
	t.Helper()
	token, err := s.SignJWT(pushtoken.New(issuer, audience, "t1", 3, body, now), pushtoken.Type)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func request(token, authorization string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, hookURL+"?sig=secret", strings.NewReader(body))
	if token != "" {
		r.Header.Set(pushverify.Header, token)
	}
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

func TestVerify(t *testing.T) {
	for _, alg := range []string{cardsign.EdDSA, cardsign.ES256} {
		t.Run(alg, func(t *testing.T) { testVerify(t, alg) })
	}
}

func testVerify(t *testing.T, alg string) {
	ctx := t.Context()
	s, _ := newSigner(t, alg)
	other, _ := newSigner(t, alg)
	keys := newKeyServer(t, s)
	issuer := keys.URL
	now := time.Now()

	v, err := pushverify.New(ctx, keys.URL+pushverify.JWKSPath, pushverify.Options{Audience: hookURL + "?sig=secret"})
	if err != nil {
		t.Fatal(err)
	}

	// The real kid, another key: a forger who read the key set.
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	underRealKid := jwt.NewWithClaims(jwt.SigningMethodEdDSA, pushtoken.New(issuer, hookURL, "t1", 3, []byte(body), now))
	underRealKid.Header["kid"], underRealKid.Header["typ"] = s.KeyID(), pushtoken.Type
	forgedUnderKid, err := underRealKid.SignedString(otherPriv)
	if err != nil {
		t.Fatal(err)
	}
	// HS256 with the public key as the secret: the classic confusion.
	pub, _ := json.Marshal(s.JWKS().Keys[0])
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, pushtoken.New(issuer, hookURL, "t1", 3, []byte(body), now))
	hs.Header["kid"], hs.Header["typ"] = s.KeyID(), pushtoken.Type
	hsToken, _ := hs.SignedString(pub)
	wrongType, _ := s.SignJWT(pushtoken.New(issuer, hookURL, "t1", 3, []byte(body), now), "JWT")

	for _, tc := range []struct {
		name string
		r    *http.Request
		body string
		want error
	}{
		{"genuine", request(mint(t, s, issuer, hookURL, []byte(body), now), ""), body, nil},
		{"genuine, in Authorization: Bearer", request("", "Bearer "+mint(t, s, issuer, hookURL, []byte(body), now)), body, nil},
		{"no token", request("", "Basic dXNlcjpwYXNz"), body, pushverify.ErrNoToken},
		{"signed by another key", request(mint(t, other, issuer, hookURL, []byte(body), now), ""), body, pushverify.ErrBadSignature},
		{"another key under the server's kid", request(forgedUnderKid, ""), body, pushverify.ErrBadSignature},
		{"HS256 keyed with the public key", request(hsToken, ""), body, pushverify.ErrBadSignature},
		{"body altered", request(mint(t, s, issuer, hookURL, []byte(body), now), ""), strings.Replace(body, "WORKING", "FAILED", 1), pushverify.ErrBodyMismatch},
		{"body re-encoded", request(mint(t, s, issuer, hookURL, []byte(body), now), ""), body + "\n", pushverify.ErrBodyMismatch},
		{"expired", request(mint(t, s, issuer, hookURL, []byte(body), now.Add(-pushtoken.Lifetime-time.Minute)), ""), body, pushverify.ErrExpired},
		{"issued in the future", request(mint(t, s, issuer, hookURL, []byte(body), now.Add(2*time.Minute)), ""), body, pushverify.ErrExpired},
		{"for another webhook", request(mint(t, s, issuer, "https://hooks.example/other", []byte(body), now), ""), body, pushverify.ErrWrongAudience},
		{"by another server", request(mint(t, s, "https://elsewhere.example", hookURL, []byte(body), now), ""), body, pushverify.ErrWrongIssuer},
		{"another type of token", request(wrongType, ""), body, pushverify.ErrMalformed},
		{"not a JWT", request("abc.def", ""), body, pushverify.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := v.Verify(ctx, tc.r, []byte(tc.body))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				return
			}
			want := &pushverify.Claims{Issuer: issuer, Audience: hookURL, TaskID: "t1", Seq: 3,
				BodySHA256: pushtoken.BodySHA256([]byte(body)), KeyID: s.KeyID(),
				IssuedAt: now.Truncate(time.Second), ExpiresAt: now.Truncate(time.Second).Add(pushtoken.Lifetime)}
			if diff := cmp.Diff(want, claims, cmpClaims); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
			if len(claims.ID) < 20 {
				t.Errorf("jti %q: want a random ID", claims.ID)
			}
		})
	}
}

// cmpClaims compares claims but their random ID, times to the second.
var cmpClaims = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore()),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
}

// TestReplay: with a replay cache, a token verifies once; the same
// delivery sent again is refused, while a new attempt at the same event
// (a new token) is not. Without a cache both pass, and expiry still
// bounds how long a captured delivery can be replayed.
func TestReplay(t *testing.T) {
	ctx := t.Context()
	s, _ := newSigner(t, cardsign.EdDSA)
	keys := newKeyServer(t, s)
	jwks := keys.URL + pushverify.JWKSPath
	withCache, err := pushverify.New(ctx, jwks, pushverify.Options{Audience: hookURL, Replay: pushverify.NewMemoryReplayCache()})
	if err != nil {
		t.Fatal(err)
	}
	without, err := pushverify.New(ctx, jwks, pushverify.Options{Audience: hookURL})
	if err != nil {
		t.Fatal(err)
	}
	token := mint(t, s, keys.URL, hookURL, []byte(body), time.Now())
	if _, err := withCache.Verify(ctx, request(token, ""), []byte(body)); err != nil {
		t.Fatalf("first delivery: %v", err)
	}
	if _, err := withCache.Verify(ctx, request(token, ""), []byte(body)); !errors.Is(err, pushverify.ErrReplayed) {
		t.Errorf("the same delivery again: %v, want ErrReplayed", err)
	}
	retry := mint(t, s, keys.URL, hookURL, []byte(body), time.Now())
	if c, err := withCache.Verify(ctx, request(retry, ""), []byte(body)); err != nil || c.Seq != 3 {
		t.Errorf("a new attempt at the same event: %v, %+v; want it verified, seq 3", err, c)
	}
	for i := range 2 {
		if _, err := without.Verify(ctx, request(token, ""), []byte(body)); err != nil {
			t.Errorf("without a cache, delivery %d: %v", i+1, err)
		}
	}
	// A forged token leaves no trace in the cache.
	other, _ := newSigner(t, cardsign.EdDSA)
	cache := pushverify.NewMemoryReplayCache()
	v, _ := pushverify.New(ctx, jwks, pushverify.Options{Audience: hookURL, Replay: cache})
	if _, err := v.Verify(ctx, request(mint(t, other, keys.URL, hookURL, []byte(body), time.Now()), ""), []byte(body)); !errors.Is(err, pushverify.ErrBadSignature) {
		t.Fatalf("forged: %v", err)
	}
	if cache.Len() != 0 {
		t.Errorf("the cache holds %d IDs after a forged token, want 0", cache.Len())
	}
}

func TestMemoryReplayCache(t *testing.T) {
	ctx := context.Background()
	c := pushverify.NewMemoryReplayCache()
	later := time.Now().Add(time.Minute)
	for i, want := range []bool{false, true, true} {
		if seen, _ := c.Seen(ctx, "a", later); seen != want {
			t.Errorf("Seen(a) #%d = %v, want %v", i+1, seen, want)
		}
	}
	// An ID whose expiry passed counts as new.
	if seen, _ := c.Seen(ctx, "b", time.Now().Add(-time.Second)); seen {
		t.Error("Seen(b) the first time = true")
	}
	if seen, _ := c.Seen(ctx, "b", later); seen {
		t.Error("Seen(b) after its expiry = true, want false")
	}
}

// TestRotation: the server rotates its key, keeping the old one in its key
// set: tokens by the old key still verify, and the first token by the new
// key makes the verifier fetch the set again.
func TestRotation(t *testing.T) {
	ctx := t.Context()
	old, oldPEM := newSigner(t, cardsign.EdDSA)
	keys := newKeyServer(t, old)
	v, err := pushverify.New(ctx, keys.URL+pushverify.JWKSPath, pushverify.Options{Audience: hookURL})
	if err != nil {
		t.Fatal(err)
	}
	before := mint(t, old, keys.URL, hookURL, []byte(body), time.Now())
	if _, err := v.Verify(ctx, request(before, ""), []byte(body)); err != nil {
		t.Fatal(err)
	}

	current, _ := newSigner(t, cardsign.ES256)
	if err := current.Retain(oldPEM); err != nil {
		t.Fatal(err)
	}
	keys.set(current)
	fetched := keys.fetchCount()
	after := mint(t, current, keys.URL, hookURL, []byte(body), time.Now())
	c, err := v.Verify(ctx, request(after, ""), []byte(body))
	if err != nil {
		t.Fatalf("a token by the new key: %v", err)
	}
	if c.KeyID != current.KeyID() || keys.fetchCount() != fetched+1 {
		t.Errorf("kid %s after %d more fetches, want %s after one", c.KeyID, keys.fetchCount()-fetched, current.KeyID())
	}
	if _, err := v.Verify(ctx, request(before, ""), []byte(body)); err != nil {
		t.Errorf("a token by the retired key after the rotation: %v", err)
	}
}

// TestAudienceFromRequest: without Options.Audience, the audience is the
// URL the request came to, without its query, over real HTTP.
func TestAudienceFromRequest(t *testing.T) {
	ctx := t.Context()
	s, _ := newSigner(t, cardsign.EdDSA)
	keys := newKeyServer(t, s)
	v, err := pushverify.New(ctx, keys.URL+pushverify.JWKSPath, pushverify.Options{Replay: pushverify.NewMemoryReplayCache()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []error
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		_, err := v.Verify(r.Context(), r, buf.Bytes())
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
	}))
	defer hook.Close()
	post := func(aud string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL+"/a2a/hook?sig=x", strings.NewReader(body))
		req.Header.Set(pushverify.Header, mint(t, s, keys.URL, aud, []byte(body), time.Now()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post(hook.URL + "/a2a/hook")
	post(hook.URL + "/a2a/other")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != nil || !errors.Is(got[1], pushverify.ErrWrongAudience) {
		t.Errorf("verifications %v, want [nil, ErrWrongAudience]", got)
	}
}

// TestWireNames: the names the verifier reads are those the delivery
// activity writes.
func TestWireNames(t *testing.T) {
	if pushverify.Header != pushtoken.Header || pushverify.TokenType != pushtoken.Type {
		t.Errorf("pushverify reads %s / %s, a2aflow sends %s / %s", pushverify.Header, pushverify.TokenType, pushtoken.Header, pushtoken.Type)
	}
}

func TestNewRefuses(t *testing.T) {
	ctx := t.Context()
	s, _ := newSigner(t, cardsign.EdDSA)
	keys := newKeyServer(t, s)
	for name, jwks := range map[string]string{
		"not a URL":                      "jwks.json",
		"no JWKS path and no issuer set": keys.URL + "/keys",
		"unreachable":                    "http://127.0.0.1:1" + pushverify.JWKSPath,
		"not a key set":                  keys.URL + "/nothing" + pushverify.JWKSPath,
	} {
		if _, err := pushverify.New(ctx, jwks, pushverify.Options{}); err == nil {
			t.Errorf("%s: New(%s) succeeded", name, jwks)
		}
	}
	if _, err := pushverify.New(ctx, keys.URL+pushverify.JWKSPath, pushverify.Options{}); err != nil {
		t.Errorf("New with the key set's URL: %v", err)
	}
}
