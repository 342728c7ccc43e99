//go:build ignore

// Command vulngate reads govulncheck's JSON output on stdin and fails when
// the code calls a known vulnerable function, unless the vulnerability is
// listed below with the reason it does not apply to Lock Lab. Run from
// .ci/run: govulncheck -format json ./... | go run .ci/vulngate.go
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// accepted are vulnerabilities with no fixed version whose cause Lock Lab
// avoids; each entry says how. Remove an entry once a fixed version exists.
var accepted = map[string]string{
	"GO-2026-6872": "Echo's default IP extraction trusts X-Forwarded-For; web.New always sets an IPExtractor (the peer address, or only the proxies given with -trusted-proxies), tested in web.TestAddressLimitIgnoresForwardedFor",
	"GO-2026-6875": "Echo's proxy middleware forwards X-Real-IP; Lock Lab does not use the proxy middleware",
}

type message struct {
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

func main() {
	dec := json.NewDecoder(os.Stdin)
	called := map[string]string{}
	for {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "vulngate: reading govulncheck output:", err)
			os.Exit(2)
		}
		// Only findings whose trace reaches a function are called from our
		// code; the others are in packages or modules we merely import.
		if f := m.Finding; f != nil && len(f.Trace) > 0 && f.Trace[0].Function != "" && called[f.OSV] == "" {
			t := f.Trace[0]
			called[f.OSV] = fmt.Sprintf("%s@%s %s.%s (fixed in %s)", t.Module, t.Version, t.Package, t.Function, orNone(f.FixedVersion))
		}
	}
	ids := make([]string, 0, len(called))
	for id := range called {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	failed := 0
	for _, id := range ids {
		if why, ok := accepted[id]; ok {
			fmt.Printf("accepted %s: %s\n  because %s\n", id, called[id], why)
			continue
		}
		fmt.Printf("VULNERABLE %s: %s\n", id, called[id])
		failed++
	}
	fmt.Printf("govulncheck: %d called vulnerabilities, %d accepted with a reason, %d failing\n", len(ids), len(ids)-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func orNone(v string) string {
	if v == "" {
		return "no fixed version"
	}
	return v
}
