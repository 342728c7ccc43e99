package loadgen

import (
	"errors"
	"slices"
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

func TestCheckTargets(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  []string
		want []string // "" for an error
	}{
		{name: "one", raw: []string{"http://127.0.0.1:1"}, want: []string{"http://127.0.0.1:1"}},
		{name: "comma-separated", raw: []string{"http://127.0.0.1:1, http://127.0.0.1:2/"}, want: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}},
		{name: "repeated", raw: []string{"http://127.0.0.1:1", "http://localhost:1,http://127.0.0.1:3"}, want: []string{"http://127.0.0.1:1", "http://localhost:1", "http://127.0.0.1:3"}},
		{name: "empty entries", raw: []string{",http://127.0.0.1:1,,"}, want: []string{"http://127.0.0.1:1"}},
		{name: "twice", raw: []string{"http://127.0.0.1:1,http://127.0.0.1:1/"}},
		{name: "one remote", raw: []string{"http://127.0.0.1:1,http://192.0.2.1:2"}},
		{name: "none", raw: []string{" , "}},
		{name: "nil", raw: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			us, err := CheckTargets(tt.raw, false)
			var got []string
			for _, u := range us {
				got = append(got, u.String())
			}
			switch {
			case tt.want == nil && err == nil:
				t.Fatalf("CheckTargets(%q) = %q; want an error", tt.raw, got)
			case tt.want != nil && (err != nil || !slices.Equal(got, tt.want)):
				t.Fatalf("CheckTargets(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestParsePIDs(t *testing.T) {
	for _, tt := range []struct {
		raw     []string
		want    []int
		wantErr bool
	}{
		{raw: nil, want: nil},
		{raw: []string{"12"}, want: []int{12}},
		{raw: []string{"12,13", "14"}, want: []int{12, 13, 14}},
		{raw: []string{" 12 , 13 "}, want: []int{12, 13}},
		{raw: []string{"12,12"}, wantErr: true},
		{raw: []string{"0"}, wantErr: true},
		{raw: []string{"-3"}, wantErr: true},
		{raw: []string{"x"}, wantErr: true},
	} {
		got, err := ParsePIDs(tt.raw)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePIDs(%q) = %v, %v; want %v (error: %t)", tt.raw, got, err, tt.want, tt.wantErr)
		}
	}
}
