package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks the server for /healthz and fails unless it answers
// 200. Containers use it as their HEALTHCHECK, since the final image has
// no shell or curl. It asks, in this order, the address given with -addr
// on its own command line, the one the running server recorded in the
// data directory (addrFile: the server's -addr however it was given), and
// LOCKLAB_ADDR's or the default.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fset := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := &givenString{value: ":8080"}
	fset.Var(addr, "addr", "address the server listens on; without it, the address the running server recorded in -data, else LOCKLAB_ADDR's (env LOCKLAB_ADDR)")
	dataDir := fset.String("data", "data", "the server's data directory, where it records its address (env LOCKLAB_DATA)")
	if err := setFromEnv(fset, getenv); err != nil {
		return err
	}
	addr.given = false // the environment's value is not the command line's
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	target := addr.value
	if !addr.given {
		recorded, ok, err := recordedAddr(*dataDir)
		if err != nil {
			return fmt.Errorf("healthcheck: %w", err)
		}
		if ok {
			target = recorded
		}
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("healthcheck: address %q: %w", target, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}

// givenString is a string flag that says whether it was set since given
// was last cleared: the health check clears it after the environment is
// read, to know whether its command line named an address.
type givenString struct {
	value string
	given bool
}

func (g *givenString) String() string { return g.value }

func (g *givenString) Set(v string) error {
	g.value, g.given = v, true
	return nil
}
