package resources

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// consoleFiles holds the web console: one page (index.html, a template for
// the authentication the server takes) and its scripts and style, plain
// files with no build step, embedded so the console works offline.
//
//go:embed console
var consoleFiles embed.FS

var consolePage = template.Must(template.ParseFS(consoleFiles, "console/index.html"))

// consoleAsset is one of the console's static files, ready to serve.
type consoleAsset struct {
	body        []byte
	contentType string
	etag        string
}

// consoleAssets are the console's files but its page, by name.
var consoleAssets = loadConsoleAssets()

// consoleTypes are the content types of the console's files, by extension;
// a file of another kind is not served.
var consoleTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

func loadConsoleAssets() map[string]consoleAsset {
	out := map[string]consoleAsset{}
	entries, err := fs.ReadDir(consoleFiles, "console")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		ct, ok := consoleTypes[path.Ext(e.Name())]
		if !ok || e.IsDir() {
			continue
		}
		b, err := consoleFiles.ReadFile("console/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = consoleAsset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out
}

// consoleSecurity is the Content-Security-Policy of the console: its own
// scripts, styles and API only, nothing inline, in no frame.
const consoleSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' blob:; " +
	"img-src 'self' data: blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

func (s *Resources) consoleRoutes(r gin.IRouter) {
	r.GET(guard.ConsolePath, s.console)
	r.GET(guard.ConsolePath+"/:file", serveConsoleFile)
}

// consoleHeaders sets what every answer of the console carries.
func consoleHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", consoleSecurity)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// console serves GET /console: the page of the web console. It is public
// and holds no data: its scripts read everything from the API's own routes
// with the credential the user types into it (an API key, sent in the
// header the server reads, or a bearer token), so the console sees and
// does what that caller may, under the same rule as every other way in.
func (s *Resources) console(c *gin.Context) {
	page := struct {
		Auth         bool
		APIKeyHeader string
		Bearer       bool
		Approver     string
	}{s.cfg.Auth.Enabled(), s.cfg.Auth.APIKeyHeader(), s.cfg.Auth.BearerTokens(), guard.ApproverHeader}
	var buf bytes.Buffer
	if err := consolePage.Execute(&buf, page); err != nil {
		c.String(http.StatusInternalServerError, "console: %v", err)
		return
	}
	consoleHeaders(c)
	c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}

// serveConsoleFile serves GET /console/{file}: one of the console's
// scripts or its style; 404 for any other name.
func serveConsoleFile(c *gin.Context) {
	name := c.Param("file")
	a, ok := consoleAssets[name]
	if !ok || strings.Contains(name, "/") {
		apierror.AbortResource(c, apierror.NotFound("the console has no file %q", name))
		return
	}
	consoleHeaders(c)
	c.Header("Content-Type", a.contentType)
	c.Header("ETag", a.etag)
	http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(a.body))
}
