package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/static"
)

// assets serves the embedded static files. The site's one style sheet is
// built once at start-up from static/site.css and the code-highlighting
// styles, and is served under a content hash so browsers can keep it forever.
type assets struct {
	files   fs.FS
	css     []byte
	cssName string
	cssHref string
}

func newAssets() (*assets, error) {
	files := static.FS()
	site, err := fs.ReadFile(files, "site.css")
	if err != nil {
		return nil, err
	}
	hl, err := content.HighlightCSS()
	if err != nil {
		return nil, err
	}
	css := append(append(site, '\n'), hl...)
	sum := sha256.Sum256(css)
	name := fmt.Sprintf("site.%s.css", hex.EncodeToString(sum[:])[:12])
	return &assets{files: files, css: css, cssName: name, cssHref: "/static/" + name}, nil
}

func (a *assets) handle(c echo.Context) error {
	name := c.Param("*")
	h := c.Response().Header()
	if name == a.cssName {
		h.Set(echo.HeaderContentType, "text/css; charset=utf-8")
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		return c.Blob(http.StatusOK, "text/css; charset=utf-8", a.css)
	}
	if strings.HasSuffix(name, ".go") || strings.Contains(name, "..") || !fs.ValidPath(name) {
		return echo.ErrNotFound
	}
	b, err := fs.ReadFile(a.files, name)
	if err != nil {
		return echo.ErrNotFound
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = http.DetectContentType(b)
	}
	h.Set("Cache-Control", "public, max-age=3600")
	return c.Stream(http.StatusOK, ctype, bytes.NewReader(b))
}
