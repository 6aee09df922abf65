// Package guardtest holds the credentials of the authentication tests:
// signing keys served as a JWKS and written as a JWKS file, valid claims,
// signed tokens and the headers that carry them.
package guardtest
