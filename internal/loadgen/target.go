package loadgen

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ErrNotLoopback is returned for a target outside this machine when remote
// targets are not allowed.
var ErrNotLoopback = errors.New("target is not a loopback address (pass -allow-remote to load a remote server)")

// CheckTarget parses rawURL and makes sure it names an http or https
// server on a loopback address (127.0.0.0/8, ::1 or localhost), unless
// allowRemote is set. Host names other than localhost are refused without
// being resolved, so a DNS answer cannot point the load elsewhere.
func CheckTarget(rawURL string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse target %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("target %q: want an http:// or https:// URL", rawURL)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("target %q: no host", rawURL)
	}
	if !allowRemote && !IsLoopback(host) {
		return nil, fmt.Errorf("target %q: %w", rawURL, ErrNotLoopback)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// IsLoopback reports whether host (a name or an IP address, without port
// or brackets) is localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckTargets parses a list of base URLs, as -url gives them (each
// entry may itself be a comma-separated list), with CheckTarget, and
// refuses an empty list and a URL listed twice: each is a replica of its
// own.
func CheckTargets(raw []string, allowRemote bool) ([]*url.URL, error) {
	var targets []*url.URL
	seen := make(map[string]bool)
	for _, entry := range raw {
		for part := range strings.SplitSeq(entry, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			u, err := CheckTarget(part, allowRemote)
			if err != nil {
				return nil, err
			}
			key := strings.ToLower(u.String())
			if seen[key] {
				return nil, fmt.Errorf("target %q is listed twice", part)
			}
			seen[key] = true
			targets = append(targets, u)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no target URL")
	}
	return targets, nil
}

// ParsePIDs parses a list of process ids, as -pid gives them (each entry
// may itself be a comma-separated list), refusing ids that are not
// positive and ids listed twice. An empty list is nil: the servers are
// then found by their ports.
func ParsePIDs(raw []string) ([]int, error) {
	var pids []int
	for _, entry := range raw {
		for part := range strings.SplitSeq(entry, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			pid, err := strconv.Atoi(part)
			if err != nil || pid <= 0 {
				return nil, fmt.Errorf("pid %q: want a positive process id", part)
			}
			if slices.Contains(pids, pid) {
				return nil, fmt.Errorf("pid %d is listed twice", pid)
			}
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
