package loadgen

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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
