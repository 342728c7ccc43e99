package loadgen

import (
	"errors"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	for _, tt := range []struct {
		url         string
		allowRemote bool
		want        string // the normalized URL; "" for an error
		notLoopback bool   // the error is ErrNotLoopback
	}{
		{url: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{url: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080"},
		{url: "http://127.1.2.3:80/?x=1#f", want: "http://127.1.2.3:80"},
		{url: "http://localhost:8080", want: "http://localhost:8080"},
		{url: "http://LOCALHOST", want: "http://LOCALHOST"},
		{url: "http://[::1]:8080", want: "http://[::1]:8080"},
		{url: "https://127.0.0.1", want: "https://127.0.0.1"},
		{url: "http://10.0.0.1:8080", notLoopback: true},
		{url: "http://0.0.0.0:8080", notLoopback: true},
		{url: "http://[::]:8080", notLoopback: true},
		{url: "http://example.com", notLoopback: true},
		{url: "http://localhost.example.com", notLoopback: true},
		{url: "http://127.0.0.1.nip.io", notLoopback: true},
		{url: "http://[::ffff:10.0.0.1]", notLoopback: true},
		{url: "http://example.com:8080", allowRemote: true, want: "http://example.com:8080"},
		{url: "ftp://127.0.0.1"},
		{url: "127.0.0.1:8080"},
		{url: "http://"},
		{url: "http://%zz"},
	} {
		t.Run(tt.url, func(t *testing.T) {
			u, err := CheckTarget(tt.url, tt.allowRemote)
			switch {
			case tt.want != "" && err != nil:
				t.Fatalf("CheckTarget(%q, %t) = %v; want %q", tt.url, tt.allowRemote, err, tt.want)
			case tt.want != "" && u.String() != tt.want:
				t.Fatalf("CheckTarget(%q, %t) = %q; want %q", tt.url, tt.allowRemote, u, tt.want)
			case tt.want == "" && err == nil:
				t.Fatalf("CheckTarget(%q, %t) = %q; want an error", tt.url, tt.allowRemote, u)
			case tt.want == "" && errors.Is(err, ErrNotLoopback) != tt.notLoopback:
				t.Fatalf("CheckTarget(%q, %t) = %v; want ErrNotLoopback: %t", tt.url, tt.allowRemote, err, tt.notLoopback)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"localhost", true},
		{"localhost.", true},
		{"::ffff:127.0.0.1", true},
		{"128.0.0.1", false},
		{"::", false},
		{"", false},
		{"localhostx", false},
		{"192.168.1.10", false},
	} {
		if got := IsLoopback(tt.host); got != tt.want {
			t.Errorf("IsLoopback(%q) = %t; want %t", tt.host, got, tt.want)
		}
	}
}
