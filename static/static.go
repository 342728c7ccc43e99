// Package static holds the site's front-end files (CSS, JavaScript, icons),
// embedded in the binary and handed out as an fs.FS.
package static

import (
	"embed"
	"io/fs"
)

//go:embed *.css *.js *.svg
var files embed.FS

// FS returns the embedded front-end files.
func FS() fs.FS { return files }
