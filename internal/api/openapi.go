package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// OpenAPIDocument is the OpenAPI 3.1 document of the HTTP API, served at
// GET /openapi.json and rendered at GET /docs. It is written by hand: the
// A2A routes belong to a2a-go's transports and the error shapes to
// package apierror, which no Go type of this package describes, and a file is
// what a reader of the API reviews. TestOpenAPI* (openapi_test.go) keep it
// valid and in step with the routes the server registers.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// The Swagger UI bundle rendering the document at /docs, vendored from npm
// (swaggerui/README.md says which version and how to update it).
var (
	//go:embed swaggerui/swagger-ui-bundle.js
	swaggerUIBundle []byte
	//go:embed swaggerui/swagger-ui.css
	swaggerUICSS []byte
)

// docsPageHead and docsPageTail frame the inlined stylesheet and bundle:
// one page, no other request than /openapi.json, no CDN.
const (
	docsPageHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>a2aflow HTTP API</title>
<style>
`
	docsPageMiddle = `
body { margin: 0; }
</style>
</head>
<body>
<div id="swagger-ui"></div>
<script>
`
	docsPageTail = `
</script>
<script>
window.ui = SwaggerUIBundle({
  // Relative to /docs, so that the page works behind a proxy's path prefix.
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // No badge asking validator.swagger.io: the page calls nothing outside this server.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  docExpansion: "none",
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  persistAuthorization: false
});
</script>
</body>
</html>
`
)

// staticAsset is a page or document served as is, with its ETag and its
// gzip form for the clients that accept it.
type staticAsset struct {
	contentType string
	body        []byte
	gzipped     []byte
	etag        string
}

func newStaticAsset(contentType string, body []byte) *staticAsset {
	sum := sha256.Sum256(body)
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = w.Write(body)
	_ = w.Close()
	return &staticAsset{contentType: contentType, body: body, gzipped: z.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

func (a *staticAsset) serve(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	// Revalidated on each load (a new server version may serve another
	// document), answered 304 while it has not changed.
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	if match := c.GetHeader("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(c.GetHeader("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Status(http.StatusOK)
	if c.Request.Method != http.MethodHead {
		_, _ = c.Writer.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip
// (leniently: "gzip;q=0" is taken as a refusal, other weights as yes).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

var (
	openAPIAsset = sync.OnceValue(func() *staticAsset {
		return newStaticAsset("application/json", OpenAPIDocument)
	})
	docsAsset = sync.OnceValue(func() *staticAsset {
		var page bytes.Buffer
		page.WriteString(docsPageHead)
		page.Write(swaggerUICSS)
		page.WriteString(docsPageMiddle)
		page.Write(swaggerUIBundle)
		page.WriteString(docsPageTail)
		return newStaticAsset("text/html; charset=utf-8", page.Bytes())
	})
)

// serveOpenAPI serves GET /openapi.json: the OpenAPI document, public like
// the agent cards, readable from any origin (API tools in the browser).
func serveOpenAPI(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*")
	openAPIAsset().serve(c)
}

// serveDocs serves GET /docs: Swagger UI rendering /openapi.json, with
// everything it needs in the page.
func serveDocs(c *gin.Context) { docsAsset().serve(c) }
