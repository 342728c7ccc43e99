package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set at build time with -ldflags "-X main.version=... -X main.revision=...
// -X main.buildTime=...", as the Dockerfile does from its build arguments:
// an image is built without .git, so the Go toolchain cannot stamp it.
var (
	version   string
	revision  string
	buildTime string
)

// buildInfo is what `locklab version` prints: the module version and the
// VCS revision, from the -ldflags stamp if there is one, else from what the
// Go toolchain recorded when it built from a git checkout.
type buildInfo struct {
	Version, Revision, Time, Go string
	Modified                    bool
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: revision, Time: buildTime, Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Revision == "" {
					b.Revision = s.Value
				}
			case "vcs.time":
				if b.Time == "" {
					b.Time = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true" && revision == ""
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

func (b buildInfo) String() string {
	rev := b.Revision
	switch {
	case rev == "":
		rev = "unknown revision"
	case b.Modified:
		rev += " (with uncommitted changes)"
	}
	s := fmt.Sprintf("locklab %s, %s", b.Version, rev)
	if b.Time != "" {
		s += ", built " + b.Time
	}
	return s + ", " + b.Go
}

// printVersion is `locklab version`.
func printVersion(stdout io.Writer) error {
	_, err := fmt.Fprintln(stdout, readBuildInfo())
	return err
}
