// Command memfill measures what learners' data costs the server in memory:
// it fills the playground sandboxes of many fresh learners (cookies) with
// large SETs (or, with -scripts, SCRIPT LOADs) until the playground refuses, then reports the resident
// memory of the server and its sandbox workers. It only talks to a server
// on a loopback address.
//
//	go build -o /tmp/mem-locklab ./cmd/locklab
//	/tmp/mem-locklab -addr 127.0.0.1:18431 -rate-limit 0 -trusted-proxies 127.0.0.1 &
//	go run ./bench/memfill -url http://127.0.0.1:18431 -cookies 300 -forwarded-for
//
// -forwarded-for gives each learner an address of its own, so that the
// cap on sandboxes per address (-sandboxes-per-address) does not reset
// them; without it, all learners share 127.0.0.1, as a classroom behind
// one address does.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/internal/loadgen"
)

func main() {
	if err := run(os.Args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memfill:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var (
		rawURL    = fset.String("url", "http://127.0.0.1:8080", "base URL of the Lock Lab server, on a loopback address")
		cookies   = fset.Int("cookies", 300, "fresh learners to fill")
		value     = fset.Int("value", 60_000, "bytes of each SET's value")
		fill      = fset.Int("fill", 4<<20, "bytes to write per learner at most; the playground refuses earlier at its limits")
		conc      = fset.Int("concurrency", 8, "learners filled at once")
		forwarded = fset.Bool("forwarded-for", false, "give each learner its own X-Forwarded-For address (start the server with -trusted-proxies 127.0.0.1)")
		scripts   = fset.String("scripts", "", `fill with SCRIPT LOAD of distinct scripts of about -value bytes, not SETs: "comment" (a long comment) or "functions" (a table of empty functions)`)
		settle    = fset.Duration("settle", 3*time.Second, "wait this long after filling before the last memory reading")
	)
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	u, err := loadgen.CheckTarget(*rawURL, false)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(u.Port())
	proc := loadgen.Proc{Root: "/proc"}
	pid, err := proc.ListenerPID(port)
	if err != nil {
		return err
	}
	before, err := proc.TreeUsage(pid)
	if err != nil {
		return err
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if tu, err := proc.TreeUsage(pid); err == nil && tu.RSS > peak.Load() {
				peak.Store(tu.RSS)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()

	line := func(i, k int) string { return fmt.Sprintf("SET k%d %s", k, strings.Repeat("x", *value)) }
	switch *scripts {
	case "":
	case "comment":
		line = func(i, k int) string {
			return fmt.Sprintf(`SCRIPT LOAD "-- %d-%d %s"`, i, k, strings.Repeat("x", *value))
		}
	case "functions":
		body := strings.TrimSuffix(strings.Repeat("function()end,", *value/14), ",")
		line = func(i, k int) string {
			return fmt.Sprintf(`SCRIPT LOAD "-- %d-%d\nreturn {%s}"`, i, k, body)
		}
	default:
		return fmt.Errorf("-scripts %q: want comment or functions", *scripts)
	}
	var (
		written, refused, sets atomic.Int64
		refusalsMu             sync.Mutex
		refusals               = map[string]int{} // by the message's start
		wg                     sync.WaitGroup
		next                   atomic.Int64
		failed                 atomic.Value
	)
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= *cookies {
					return
				}
				l, err := newLearner(u, i, *forwarded)
				if err == nil {
					for k := 0; k*(*value) < *fill; k++ {
						var out string
						out, err = l.exec(line(i, k))
						if err != nil {
							break
						}
						sets.Add(1)
						if strings.HasPrefix(out, "(error)") {
							refused.Add(1)
							refusalsMu.Lock()
							refusals[out[:min(len(out), 64)]]++
							refusalsMu.Unlock()
							break
						}
						written.Add(int64(*value))
					}
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		close(stop)
		return err
	}
	elapsed := time.Since(start)
	time.Sleep(*settle)
	close(stop)
	sampler.Wait()
	tree, err := proc.Tree(pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "learners %d, lines %d in %v, refused %d, accepted %.1f MiB of values\n",
		*cookies, sets.Load(), elapsed.Round(time.Millisecond), refused.Load(), float64(written.Load())/(1<<20))
	for msg, n := range refusals {
		fmt.Fprintf(stdout, "refused %d times: %s...\n", n, msg)
	}
	var total int64
	for i, p := range tree {
		rss, _ := proc.RSS(p)
		total += rss
		role := "worker"
		if i == 0 {
			role = "server"
		}
		fmt.Fprintf(stdout, "pid %d (%s): RSS %d MiB\n", p, role, rss>>20)
	}
	fmt.Fprintf(stdout, "RSS before %d MiB, peak %d MiB, after %d MiB (all processes)\n", before.RSS>>20, max(peak.Load(), total)>>20, total>>20)
	return nil
}

// learner is one fresh learner: a cookie jar, and the CSRF token its first
// page gave it.
type learner struct {
	base  *url.URL
	c     *http.Client
	token string
	addr  string
}

func newLearner(base *url.URL, i int, forwarded bool) (*learner, error) {
	jar, _ := cookiejar.New(nil)
	l := &learner{base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	if forwarded {
		// 198.18.0.0/15 is for benchmarks.
		l.addr = fmt.Sprintf("198.18.%d.%d", i/250, i%250+1)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", base.JoinPath("/playground").String(), nil)
	l.header(req)
	resp, err := l.c.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, c := range jar.Cookies(base) {
		if c.Name == "_csrf" {
			l.token = c.Value
		}
	}
	if l.token == "" {
		return nil, errors.New("no _csrf cookie from /playground")
	}
	return l, nil
}

func (l *learner) header(req *http.Request) {
	if l.addr != "" {
		req.Header.Set("X-Forwarded-For", l.addr)
	}
}

func (l *learner) exec(line string) (string, error) {
	body, _ := json.Marshal(map[string]string{"line": line, "client": "A"})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", l.base.JoinPath("/api/playground/exec").String(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.token)
	l.header(req)
	resp, err := l.c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("exec: %s: %.200s", resp.Status, b)
	}
	var r struct{ Output string }
	if err := json.Unmarshal(b, &r); err != nil {
		return "", err
	}
	return r.Output, nil
}
