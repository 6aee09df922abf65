package guard

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// A request's body within the limit of Config.MaxBodyBytes: LimitBody
// refuses a body declared larger before anything reads it, and caps the
// reading of the others, which ReadBody answers 413 past it.

// ReadBody reads r's body within the MaxBodyBytes limit that limitBody set,
// and returns the HTTP status to answer when it cannot.
func ReadBody(r *http.Request) ([]byte, int, error) {
	if r.Body == nil {
		return nil, 0, nil
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the request body is over the limit of %d bytes", tooLarge.Limit)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("cannot read the request body: %w", err)
	}
	return buf.Bytes(), 0, nil
}

// SetBody puts body back as r's body, to be read again (after ReadBody).
func SetBody(r *http.Request, body []byte) {
	r.Body = http.NoBody
	if len(body) > 0 {
		r.Body = readCloser{bytes.NewReader(body)}
	}
	r.ContentLength = int64(len(body))
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// writeTooLarge answers a request whose body is over the limit with 413, in
// the shape of the binding its path suggests.
func writeTooLarge(w http.ResponseWriter, r *http.Request, size, limit int64) {
	msg := fmt.Sprintf("the request body is over the limit of %d bytes", limit)
	if size > 0 {
		msg = fmt.Sprintf("the request body of %d bytes is over the limit of %d", size, limit)
	}
	apierror.Write(w, apierror.ShapeOf(r.Method == http.MethodPost && jsonRPCPath(r.URL.Path)), nil, http.StatusRequestEntityTooLarge,
		a2a.NewError(a2a.ErrInvalidRequest, msg))
}

// LimitBody answers 413 for bodies over the limit, before any decoding.
func (g *Guard) LimitBody(c *gin.Context) {
	if c.Request.ContentLength > g.cfg.MaxBodyBytes {
		writeTooLarge(c.Writer, c.Request, c.Request.ContentLength, g.cfg.MaxBodyBytes)
		c.Abort()
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, g.cfg.MaxBodyBytes)
	}
	c.Next()
}
