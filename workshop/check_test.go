package workshop

import (
	"errors"
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestNewCode checks that join codes are six characters from the
// alphabet without look-alikes, valid codes, and not all the same.
func TestNewCode(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c := NewCode()
		if len(c) != 6 || strings.Trim(c, codeAlphabet) != "" {
			t.Fatalf("NewCode() = %q; want 6 characters from %s", c, codeAlphabet)
		}
		if err := checkCode(c); err != nil {
			t.Fatalf("NewCode() = %q, which checkCode refuses: %v", c, err)
		}
		seen[c] = true
	}
	if len(seen) < 190 {
		t.Errorf("200 codes, %d different; want nearly all different", len(seen))
	}
	for _, confusing := range "01IOL" {
		if strings.ContainsRune(codeAlphabet, confusing) {
			t.Errorf("code alphabet has %q, which is easy to confuse", confusing)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"k7qx2m", "K7QX2M"},
		{"  K7qx2M\n", "K7QX2M"},
		{"", ""},
		{"ab cd", "AB CD"}, // inner spaces stay, so checkCode refuses it
	} {
		if got := NormalizeCode(tt.in); got != tt.want {
			t.Errorf("NormalizeCode(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckCode(t *testing.T) {
	for _, tt := range []struct {
		code string
		ok   bool
	}{
		{"ABCD", true},
		{"ABCDEFGHIJ12", true},
		{"K7QX2M", true},
		{"ABC", false},
		{"ABCDEFGHIJ123", false},
		{"abcd", false},
		{"AB-CD", false},
		{"AB CD", false},
		{"ÄBCD", false},
		{"", false},
	} {
		err := checkCode(tt.code)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrBadInput) {
			t.Errorf("checkCode(%q) = %v; want ok %v (else ErrBadInput)", tt.code, err, tt.ok)
		}
	}
}

// TestImports keeps the domain free of HTTP and storage: workshops are
// rules, and web and store depend on them, not the other way round.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, bad := range []string{
			"github.com/locklab/locklab/web", "github.com/locklab/locklab/store",
			"github.com/labstack/echo/v4", "github.com/a-h/templ", "net/http",
			"go.etcd.io/bbolt", "github.com/redis/go-redis/v9",
		} {
			if imp == bad || strings.HasPrefix(imp, bad+"/") {
				t.Errorf("workshop imports %s; want no HTTP, web, Echo, templ or storage", imp)
			}
		}
	}
	if !slices.Contains(pkg.Imports, "context") {
		t.Errorf("workshop imports %v; want context among them (did ImportDir read the package?)", pkg.Imports)
	}
}

// TestCleanText: names shown beside others' refuse what could make one
// pass for another or hide: controls, bidi overrides, zero-width
// characters, private use; ordinary letters and emoji pass.
func TestCleanText(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"  Ada  ", "Ada", true},
		{"Zoë 🦊", "Zoë 🦊", true},
		{"ab\u202ecd", "", false},     // right-to-left override
		{"a\u200bb", "", false},       // zero-width space
		{"a\u2066b\u2069", "", false}, // isolates
		{"a\ue000b", "", false},       // private use
		{"a\x07b", "", false},         // control
		{"a\xffb", "", false},         // not UTF-8
	} {
		got, err := cleanText("nickname", tt.in, 40)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("cleanText(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBadInput) {
			t.Errorf("cleanText(%q) = %v; want ErrBadInput", tt.in, err)
		}
	}
}
