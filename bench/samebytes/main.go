// Command samebytes is the yardstick for the page benchmark
// (bench/pages.sh): it fetches pages from a running Lock Lab once, with
// the cookie it is given, and then serves exactly those bytes from memory
// through a bare net/http server, at the same paths. What Lock Lab costs
// beyond that is its own work: routing, middleware, rendering.
//
//	go run ./bench/samebytes -origin http://127.0.0.1:18182 -addr 127.0.0.1:18183 / /topics/distributed-locks /race
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "samebytes:", err)
		os.Exit(1)
	}
}

func run() error {
	origin := flag.String("origin", "http://127.0.0.1:18182", "the Lock Lab server to copy the pages from")
	addr := flag.String("addr", "127.0.0.1:18183", "address to serve the copies on")
	cookie := flag.String("cookie", "", "Cookie header to fetch the pages with (a learner's)")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("name the paths to copy")
	}
	mux := http.NewServeMux()
	for _, p := range flag.Args() {
		body, ctype, err := fetch(*origin+p, *cookie)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "samebytes: %s: %d bytes\n", p, len(body))
		pattern := "GET " + p // exact, as a path without a trailing slash is
		if strings.HasSuffix(p, "/") {
			pattern += "{$}"
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write(body)
		})
	}
	return http.ListenAndServe(*addr, mux)
}

// fetch reads a page as wrk would: no Accept-Encoding, so the bytes are
// the page itself.
func fetch(url, cookie string) ([]byte, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	// Set explicitly, so that the client does not ask for gzip itself.
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		return nil, "", fmt.Errorf("fetch %s: %s, %s", url, res.Status, res.Header.Get("Content-Type"))
	}
	return body, res.Header.Get("Content-Type"), nil
}
