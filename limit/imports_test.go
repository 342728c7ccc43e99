package limit

import (
	"go/build"
	"strings"
	"testing"
)

// The limit package is a domain package: it decides, and knows nothing of
// the web layer or of storage.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, bad := range []string{"github.com/locklab/locklab/web", "github.com/labstack/echo", "github.com/a-h/templ", "github.com/locklab/locklab/store", "github.com/redis/"} {
			if strings.HasPrefix(imp, bad) {
				t.Errorf("limit imports %s; want no web, Echo, templ, store or Redis client", imp)
			}
		}
	}
}
