package main

import (
	"flag"
	"fmt"
	"regexp"
)

// envInUsage finds the environment variable a flag's help names, as
// "(env NAME" ("(env NAME)" or "(env NAME; ...)").
var envInUsage = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)`)

// setFromEnv is the one way an environment variable sets a flag: every
// flag whose help names a variable (see envInUsage) is set from it, when
// it is set, with the flag's own parsing and checks. It runs after the
// flags are declared with their defaults and before the command line is
// parsed, so a flag on the command line wins over its variable.
func setFromEnv(fset *flag.FlagSet, getenv func(string) string) error {
	var err error
	fset.VisitAll(func(f *flag.Flag) {
		m := envInUsage.FindStringSubmatch(f.Usage)
		if err != nil || m == nil {
			return
		}
		if v := getenv(m[1]); v != "" {
			if e := fset.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", m[1], v, e)
			}
		}
	})
	return err
}
