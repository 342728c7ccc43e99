package layering

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
)

const module = "github.com/locklab/locklab"

// domain are the folders of the domain packages, each with the packages
// under it. One that does not exist (yet) is left out, so the test covers
// it from the commit that adds it.
var domain = []string{"content", "playground", "lock", "race", "lab", "quiz", "workshop", "limit", "store", "carry", "progress"}

// forbidden are the import paths, with everything under them, that no
// domain package may depend on.
var forbidden = []string{
	module + "/web",
	module + "/cmd",
	"github.com/labstack/echo",
	"github.com/a-h/templ",
}

// TestDomainImports lists every domain package's dependencies, direct and
// indirect, with go list, and fails for each forbidden one.
func TestDomainImports(t *testing.T) {
	root := testenv.RepoRoot(t)
	var patterns []string
	for _, d := range domain {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			patterns = append(patterns, module+"/"+d+"/...")
		}
	}
	if len(patterns) < 7 {
		t.Fatalf("found only %v; the domain folders moved?", patterns)
	}
	goTool := testenv.LookPath(t, "the Go toolchain", "go")
	cmd := exec.Command(goTool, append([]string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		checked++
		for _, dep := range strings.Fields(deps) {
			if bad := forbiddenPrefix(dep); bad != "" {
				t.Errorf("%s depends on %s; a domain package must not depend on %s", pkg, dep, bad)
			}
		}
	}
	if checked < len(patterns) {
		t.Errorf("go list gave %d packages for %d folders", checked, len(patterns))
	}
}

// rules are the one-way dependencies between the house's own rooms: no
// package under from (tests included, unless codeOnly) may depend on a
// package under to.
var rules = []struct {
	from, to string
	codeOnly bool
	why      string
}{
	{"web", "worker", false, "cmd wires the worker host; web acts on the playground's errors (playground.ErrRestarting, ErrStopped), never names the host"},
	{"playground", "lab", false, "the lab builds on the playground, not the other way; the worker host, which runs both, is the one that imports both"},
	{"web", "store", true, "web shows progress through package progress's model and errors and takes its stores as interfaces; cmd wires store (web's tests may open one)"},
}

// TestRoomImports checks each rule with go list -test, so that a test's
// imports count as the package's own.
func TestRoomImports(t *testing.T) {
	root := testenv.RepoRoot(t)
	goTool := testenv.LookPath(t, "the Go toolchain", "go")
	for _, r := range rules {
		t.Run(r.from+" without "+r.to, func(t *testing.T) {
			for _, d := range []string{r.from, r.to} {
				if _, err := os.Stat(filepath.Join(root, d)); err != nil {
					t.Fatalf("%s: %v; the folder moved?", d, err)
				}
			}
			// Deps are joined with "," since a test's variant of a
			// package is named "pkg [pkg.test]".
			args := []string{"list", "-test", "-f", "{{.ImportPath}}|{{join .Deps \",\"}}", module + "/" + r.from + "/..."}
			if r.codeOnly {
				args = slices.Delete(args, 1, 2)
			}
			cmd := exec.Command(goTool, args...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, stderrOf(err))
			}
			to := module + "/" + r.to
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				pkg, deps, _ := strings.Cut(line, "|")
				for _, dep := range strings.Split(deps, ",") {
					dep, _, _ = strings.Cut(dep, " ")
					if dep == to || strings.HasPrefix(dep, to+"/") {
						t.Errorf("%s depends on %s: %s", pkg, dep, r.why)
						break
					}
				}
			}
		})
	}
}

// forbiddenPrefix returns the forbidden path that dep is or is under, or "".
func forbiddenPrefix(dep string) string {
	for _, f := range forbidden {
		if dep == f || strings.HasPrefix(dep, f+"/") {
			return f
		}
	}
	return ""
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
