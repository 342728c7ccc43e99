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
	"github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/css"

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
	// versions holds a short content hash of every static file.
	versions map[string]string
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
	// One minified sheet: the site's own rules and the highlighting themes.
	var min bytes.Buffer
	if err := css.Minify(minify.New(), &min, bytes.NewReader(append(append(site, '\n'), hl...)), nil); err != nil {
		return nil, fmt.Errorf("minify css: %w", err)
	}
	sheet := min.Bytes()
	versions := map[string]string{}
	err = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		versions[p] = shortHash(b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	name := "site." + shortHash(sheet) + ".css"
	return &assets{files: files, css: sheet, cssName: name, cssHref: "/static/" + name, versions: versions}, nil
}

// href is the URL of a static file, versioned by its content so that
// browsers can cache it for good and still see a new release at once.
func (a *assets) href(name string) string {
	if v, ok := a.versions[name]; ok {
		return "/static/" + name + "?v=" + v
	}
	return "/static/" + name
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
	if c.QueryParam("v") != "" {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=3600")
	}
	return c.Stream(http.StatusOK, ctype, bytes.NewReader(b))
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}
