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

// healthcheck asks the server on -addr for /healthz and fails unless it
// answers 200. Containers use it as their HEALTHCHECK, since the final
// image has no shell or curl.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fset := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := fset.String("addr", ":8080", "address the server listens on (env LOCKLAB_ADDR)")
	if err := setFromEnv(fset, getenv); err != nil {
		return err
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("healthcheck: -addr %q: %w", *addr, err)
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
