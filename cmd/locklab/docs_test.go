package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// configurationDoc is the manual's page of flags and environment variables.
const configurationDoc = "../../docs/configuration.md"

// docRow is one row of the configuration table: a flag (empty for an
// environment variable without one) and its environment variable.
type docRow struct{ flag, env string }

// readConfigTable reads the rows of the table in docs/configuration.md.
func readConfigTable(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile(configurationDoc)
	if err != nil {
		t.Fatalf("read the manual: %v", err)
	}
	name := regexp.MustCompile("^`(-[a-z0-9-]+)")
	var rows []docRow
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| flag") || strings.HasPrefix(line, "| ---") {
			continue
		}
		var r docRow
		if m := name.FindStringSubmatch(strings.TrimSpace(cells[1])); m != nil {
			r.flag = m[1]
		}
		r.env = strings.Trim(strings.TrimSpace(cells[2]), "`")
		if r.env == "(none)" {
			r.env = ""
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no configuration table", configurationDoc)
	}
	return rows
}

// binaryConfig asks parseFlags for its usage and records every
// environment variable it reads.
func binaryConfig(t *testing.T) (flags map[string]string, envs []string) {
	t.Helper()
	var usage bytes.Buffer
	getenv := func(k string) string {
		if !slices.Contains(envs, k) {
			envs = append(envs, k)
		}
		return ""
	}
	if _, err := parseFlags([]string{"locklab", "-h"}, getenv, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) error = %v; want flag.ErrHelp", err)
	}
	flags = map[string]string{}
	line := regexp.MustCompile(`(?m)^  (-[a-z0-9-]+)`)
	env := regexp.MustCompile(`\(env ([A-Z_]+)`)
	text := usage.String()
	locs := line.FindAllStringSubmatchIndex(text, -1)
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := text[l[2]:l[3]]
		flags[name] = ""
		if m := env.FindStringSubmatch(text[l[0]:end]); m != nil {
			flags[name] = m[1]
		}
	}
	if len(flags) == 0 {
		t.Fatalf("parseFlags(-h) printed no flags:\n%s", text)
	}
	return flags, envs
}

// TestConfigurationDocMatchesFlags keeps the manual's configuration table
// and the binary in step: every flag and every environment variable the
// server reads has its row, with the variable the flag's help names, and
// the table names nothing the binary lacks.
func TestConfigurationDocMatchesFlags(t *testing.T) {
	rows := readConfigTable(t)
	flags, envs := binaryConfig(t)
	documented := map[string]docRow{}
	documentedEnv := map[string]bool{}
	for _, r := range rows {
		if r.flag != "" {
			if _, dup := documented[r.flag]; dup {
				t.Errorf("%s documents %s twice", configurationDoc, r.flag)
			}
			documented[r.flag] = r
		}
		if r.env != "" {
			documentedEnv[r.env] = true
		}
	}
	for name, env := range flags {
		r, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("flag %s has no row in %s", name, configurationDoc)
		case r.env != env:
			t.Errorf("%s documents %s with environment variable %q; its help names %q", configurationDoc, name, r.env, env)
		}
	}
	for name := range documented {
		if _, ok := flags[name]; !ok {
			t.Errorf("%s documents %s, which the binary does not have", configurationDoc, name)
		}
	}
	for _, e := range envs {
		if !documentedEnv[e] && e != "GOMEMLIMIT" && e != "GOGC" {
			t.Errorf("the server reads %s, which %s does not document", e, configurationDoc)
		}
	}
	for e := range documentedEnv {
		if !slices.Contains(envs, e) {
			t.Errorf("%s documents %s, which the server does not read", configurationDoc, e)
		}
	}
}
