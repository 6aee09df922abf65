package webhook

import (
	"errors"
	"fmt"
)

// ErrInvalidAuth: a config's authentication or token cannot be sent as an
// HTTP header.
var ErrInvalidAuth = errors.New("invalid webhook authentication")

// MaxSecretLength bounds a token or credentials.
const MaxSecretLength = 4096

// CheckAuth checks that a webhook's Authorization scheme, credentials and
// token can be sent as HTTP headers: the scheme is an RFC 9110 token,
// the values hold no control characters. The scheme is required with
// credentials.
func CheckAuth(scheme, credentials, token string) error {
	if credentials != "" && scheme == "" {
		return fmt.Errorf("%w: authentication.scheme is required with credentials (e.g. Bearer or Basic)", ErrInvalidAuth)
	}
	if scheme != "" && !isToken(scheme) {
		return fmt.Errorf("%w: authentication.scheme %q is not an HTTP auth scheme such as Bearer or Basic", ErrInvalidAuth, scheme)
	}
	for _, v := range []struct{ name, value string }{{"authentication.credentials", credentials}, {"token", token}} {
		if len(v.value) > MaxSecretLength {
			return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidAuth, v.name, MaxSecretLength)
		}
		if !isHeaderValue(v.value) {
			// The value itself stays out of the message: it is a secret.
			return fmt.Errorf("%w: %s holds characters an HTTP header cannot carry", ErrInvalidAuth, v.name)
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c < 0x80 && containsByte("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}

// isHeaderValue reports whether s holds visible ASCII, spaces and tabs only.
func isHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
