// Command samebytes is the yardstick for the page benchmark
// (bench/pages.sh): it fetches pages from a running Lock Lab once, with
// the cookie it is given, and then serves exactly those bytes from memory
// through a bare net/http server, at the same paths. What Lock Lab costs
// beyond that is its own work: routing, middleware, rendering. With
// -headers it also sends the headers Lock Lab sent with each page (its
// security headers, Cache-Control and Vary; not Date, which net/http
// writes, nor a Set-Cookie), to tell what those cost apart from the rest.
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
	headers := flag.Bool("headers", false, "send each page's headers as Lock Lab sent them, but Date and Set-Cookie")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("name the paths to copy")
	}
	mux := http.NewServeMux()
	for _, p := range flag.Args() {
		body, sent, err := fetch(*origin+p, *cookie)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "samebytes: %s: %d bytes\n", p, len(body))
		pattern := "GET " + p // exact, as a path without a trailing slash is
		if strings.HasSuffix(p, "/") {
			pattern += "{$}"
		}
		ctype := sent.Get("Content-Type")
		if !*headers {
			mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", ctype)
				_, _ = w.Write(body)
			})
			continue
		}
		hdr := sent.Clone()
		for _, k := range []string{"Date", "Set-Cookie", "Content-Length", "Transfer-Encoding"} {
			delete(hdr, k)
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
			h := w.Header()
			for k, v := range hdr {
				h[k] = v // shared: net/http copies the header as it writes it
			}
			_, _ = w.Write(body)
		})
	}
	return http.ListenAndServe(*addr, mux)
}

// fetch reads a page as wrk would: no Accept-Encoding, so the bytes are
// the page itself.
func fetch(url, cookie string) ([]byte, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	// Set explicitly, so that the client does not ask for gzip itself.
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		return nil, nil, fmt.Errorf("fetch %s: %s, %s", url, res.Status, res.Header.Get("Content-Type"))
	}
	return body, res.Header, nil
}
