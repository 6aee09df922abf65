package pushverify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/a2aflow/a2aflow/internal/pushtoken"
)

// Header is the HTTP header that carries a delivery's JWT.
const Header = "A2A-Notification-JWT"

// TokenType is the typ header of the token; a token of another type is
// refused.
const TokenType = "a2a-push+jwt"

// JWKSPath is where an a2aflow server serves its key set, below its public
// base URL (the tokens' issuer).
const JWKSPath = "/.well-known/jwks.json"

// DefaultLeeway is the clock skew Options.Leeway allows when it is zero.
const DefaultLeeway = 30 * time.Second

// Errors of Verify; each failure wraps one of them.
var (
	// ErrNoToken: the request carries no token.
	ErrNoToken = errors.New("the notification carries no signed token")
	// ErrMalformed: the token is not a push notification token of a2aflow:
	// not a JWT, another type, or a required claim is missing.
	ErrMalformed = errors.New("malformed push notification token")
	// ErrBadSignature: the token is not signed by a key of the key set
	// (another key, an unknown kid, or an edited token).
	ErrBadSignature = errors.New("the token is not signed by a key of the server's key set")
	// ErrExpired: the token has expired, or was issued in the future,
	// beyond the leeway.
	ErrExpired = errors.New("the token is outside its time window")
	// ErrWrongIssuer: the token names another server.
	ErrWrongIssuer = errors.New("the token was issued by another server")
	// ErrWrongAudience: the token was minted for another webhook.
	ErrWrongAudience = errors.New("the token was minted for another webhook")
	// ErrBodyMismatch: the body is not the one the token signs.
	ErrBodyMismatch = errors.New("the body is not the one the token signs")
	// ErrReplayed: the token was seen before (Options.Replay).
	ErrReplayed = errors.New("the token was already used: a replayed notification")
)

// Claims are what a verified token says about its delivery.
type Claims struct {
	// Issuer is the server's public base URL (iss).
	Issuer string
	// Audience is the webhook URL the token was minted for, without its
	// query and fragment (aud).
	Audience string
	// TaskID is the task whose event the body carries (taskId).
	TaskID string
	// Seq is the event's number within its task (seq): the same for every
	// attempt to deliver one event, and in the body's metadata
	// (a2aflowEventSeq) and the Idempotency-Key header.
	Seq int64
	// BodySHA256 is the SHA-256 of the body, lowercase hex
	// (request_body_sha256).
	BodySHA256 string
	// ID is the token's unique ID (jti), new for every delivery attempt.
	ID string
	// KeyID names the key that signed the token (the header's kid).
	KeyID string
	// IssuedAt and ExpiresAt bound the token's validity (iat, exp).
	IssuedAt, ExpiresAt time.Time
}

// Options tune a Verifier. The zero value checks everything but replays.
type Options struct {
	// Issuer is the iss tokens must carry: the server's public base URL
	// (its --public-url). Default: the JWKS URL without JWKSPath; New fails
	// when the JWKS URL does not end with it and Issuer is empty.
	Issuer string
	// Audience is this webhook's URL, as given in the push config; its
	// query and fragment are ignored (a2aflow leaves them out of the
	// token, as they may hold a secret). Default: the URL each request was
	// received at (https when it came over TLS); set it behind a proxy
	// that changes the scheme, host or path.
	Audience string
	// Replay, when set, records every verified token's ID until the token
	// expires and refuses a token seen before (ErrReplayed). Default: no
	// replay check; Idempotency-Key and Claims.Seq still let a receiver
	// drop a repeated event.
	Replay ReplayCache
	// Leeway is the clock skew allowed between the server and this
	// receiver; default DefaultLeeway, negative for none.
	Leeway time.Duration
	// HTTPClient fetches the key set; default a client with a 10-second
	// timeout.
	HTTPClient *http.Client
	// Now is the verifier's clock; default time.Now. (The CLI's --at uses
	// it to check a captured notification as of when it arrived.)
	Now func() time.Time
}

// Verifier checks push notifications against one server's key set.
type Verifier struct {
	keys     keyfunc.Keyfunc
	checks   []jwt.ParserOption // but the audience's
	audience string
	replay   ReplayCache
	leeway   time.Duration
	now      func() time.Time
}

// New returns a Verifier of the tokens signed by the keys at jwksURL. It
// fetches the key set once, and fails when it cannot; until ctx is done it
// refreshes the set hourly, and when a token names a key it does not hold
// (at most once per five minutes).
func New(ctx context.Context, jwksURL string, opts Options) (*Verifier, error) {
	u, err := url.Parse(jwksURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("JWKS URL %q: want an absolute http(s) URL", jwksURL)
	}
	issuer := opts.Issuer
	if issuer == "" {
		if !strings.HasSuffix(u.Path, JWKSPath) || u.RawQuery != "" {
			return nil, fmt.Errorf("JWKS URL %s does not end with %s: set Options.Issuer to the server's public URL", jwksURL, JWKSPath)
		}
		issuer = strings.TrimSuffix(jwksURL, JWKSPath)
	}
	v := &Verifier{replay: opts.Replay, leeway: opts.Leeway, now: opts.Now}
	if v.leeway == 0 {
		v.leeway = DefaultLeeway
	}
	v.leeway = max(v.leeway, 0)
	if v.now == nil {
		v.now = time.Now
	}
	if opts.Audience != "" {
		if v.audience, err = withoutQuery(opts.Audience); err != nil {
			return nil, fmt.Errorf("audience: %w", err)
		}
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	failFirst := false
	if v.keys, err = keyfunc.NewDefaultOverrideCtx(ctx, []string{jwksURL}, keyfunc.Override{
		Client:                    client,
		NoErrorReturnFirstHTTPReq: &failFirst,
	}); err != nil {
		return nil, fmt.Errorf("fetch the key set %s: %w", jwksURL, err)
	}
	v.checks = []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg(), jwt.SigningMethodES256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.leeway),
		jwt.WithTimeFunc(v.now),
	}
	return v, nil
}

// Verify checks the push notification r whose body is body (read by the
// caller, whole: the token signs its exact bytes), and returns what its
// token says. The token is read from the A2A-Notification-JWT header, else
// from Authorization: Bearer. Errors wrap one of the package's Err values.
func (v *Verifier) Verify(ctx context.Context, r *http.Request, body []byte) (*Claims, error) {
	token := r.Header.Get(Header)
	if token == "" {
		if scheme, value, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(value)
		}
	}
	if token == "" {
		return nil, ErrNoToken
	}
	audience := v.audience
	if audience == "" {
		audience = receivedAt(r)
	}
	return v.VerifyToken(ctx, token, body, audience)
}

// VerifyToken checks token as the token of a notification with body sent
// to the webhook at audience (its query and fragment ignored), as Verify
// does.
func (v *Verifier) VerifyToken(ctx context.Context, token string, body []byte, audience string) (*Claims, error) {
	aud, err := withoutQuery(audience)
	if err != nil {
		return nil, fmt.Errorf("%w: audience: %v", ErrWrongAudience, err)
	}
	var c pushtoken.Claims
	parser := jwt.NewParser(slices.Concat(v.checks, []jwt.ParserOption{jwt.WithAudience(aud)})...)
	parsed, err := parser.ParseWithClaims(token, &c, v.keys.KeyfuncCtx(ctx))
	if err != nil {
		return nil, classify(err)
	}
	if typ, _ := parsed.Header["typ"].(string); typ != TokenType {
		return nil, fmt.Errorf("%w: type %q, want %q", ErrMalformed, typ, TokenType)
	}
	switch {
	case c.ID == "":
		return nil, fmt.Errorf("%w: no jti", ErrMalformed)
	case c.IssuedAt == nil:
		return nil, fmt.Errorf("%w: no iat", ErrMalformed)
	case c.TaskID == "" || c.Seq <= 0:
		return nil, fmt.Errorf("%w: no taskId or seq", ErrMalformed)
	case c.BodySHA256 == "":
		return nil, fmt.Errorf("%w: no request_body_sha256", ErrMalformed)
	}
	if got := pushtoken.BodySHA256(body); got != c.BodySHA256 {
		return nil, fmt.Errorf("%w: the body's SHA-256 is %s, the token signs %s", ErrBodyMismatch, got, c.BodySHA256)
	}
	kid, _ := parsed.Header["kid"].(string)
	out := &Claims{
		Issuer: c.Issuer, Audience: aud, TaskID: c.TaskID, Seq: c.Seq, BodySHA256: c.BodySHA256,
		ID: c.ID, KeyID: kid, IssuedAt: c.IssuedAt.Time, ExpiresAt: c.ExpiresAt.Time,
	}
	// Last, so that only genuine tokens take room in the cache.
	if v.replay != nil {
		seen, err := v.replay.Seen(ctx, c.ID, out.ExpiresAt.Add(v.leeway))
		if err != nil {
			return nil, fmt.Errorf("replay cache: %w", err)
		}
		if seen {
			return nil, fmt.Errorf("%w: jti %s (task %s, event %d)", ErrReplayed, c.ID, c.TaskID, c.Seq)
		}
	}
	return out, nil
}

// classify wraps a golang-jwt error in the package's error for it.
func classify(err error) error {
	var kind error
	switch {
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenUsedBeforeIssued), errors.Is(err, jwt.ErrTokenNotValidYet):
		kind = ErrExpired
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		kind = ErrWrongIssuer
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		kind = ErrWrongAudience
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		kind = ErrBadSignature
	default:
		kind = ErrMalformed
	}
	return fmt.Errorf("%w: %w", kind, err)
}

// receivedAt is the URL r was received at, without its query.
func receivedAt(r *http.Request) string {
	u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath}
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return u.String()
}

// withoutQuery returns raw without its query, fragment and user info, as
// a2aflow writes a webhook URL into the token's audience.
func withoutQuery(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if !u.IsAbs() || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String(), nil
}
