// Package wordrun finds runs of consecutive words that two texts share. The
// course tests use it to keep lessons and quizzes from repeating the seed
// card word for word: the card is kept only as digests of its runs, so the
// repository never holds its text.
package wordrun

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Words splits s into lower-case words. Letters and digits make up words;
// everything else separates them, so case and punctuation never hide a
// copied run ("SET ... NX," and "set nx" are the same two words).
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Runs returns every run of n consecutive words in each segment, each run's
// words joined by single spaces. A run never crosses from one segment into
// the next: segments are the pieces of a text that a reader does not see
// side by side, such as the prose on either side of a code block.
func Runs(n int, segments ...string) []string {
	var out []string
	for _, seg := range segments {
		w := Words(seg)
		for i := 0; i+n <= len(w); i++ {
			out = append(out, strings.Join(w[i:i+n], " "))
		}
	}
	return out
}

// Digest is a short, stable digest of a run. Keeping digests instead of runs
// lets a test know a text's runs without the repository holding the text.
func Digest(run string) string {
	sum := sha256.Sum256([]byte(run))
	return hex.EncodeToString(sum[:8])
}

// Set is a set of run digests.
type Set map[string]bool

// DigestSet returns the digests of all runs of n words in segments.
func DigestSet(n int, segments ...string) Set {
	s := Set{}
	for _, r := range Runs(n, segments...) {
		s[Digest(r)] = true
	}
	return s
}

// Shared returns the runs of n words in segments whose digests are in s, in
// the order they occur, without repeats.
func (s Set) Shared(n int, segments ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range Runs(n, segments...) {
		if s[Digest(r)] && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// Write writes the digests of s one per line, sorted, so that a regenerated
// file only differs where the text it stands for changed.
func (s Set) Write(w io.Writer) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := fmt.Fprintln(w, k); err != nil {
			return fmt.Errorf("write digests: %w", err)
		}
	}
	return nil
}

// ReadSet reads digests written by Write; blank lines and lines starting
// with # are skipped.
func ReadSet(r io.Reader) (Set, error) {
	s := Set{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read digests: %w", err)
	}
	return s, nil
}

var (
	preBlock = regexp.MustCompile(`(?is)<pre\b.*?</pre>`)
	tag      = regexp.MustCompile(`(?s)<[^>]*>`)
)

// HTMLSegments turns rendered HTML into the text a reader sees, split into
// segments at every <pre> block: code is left out (the standard release
// script is the same everywhere), and the prose before and after a block
// does not join into one run.
func HTMLSegments(h string) []string {
	parts := preBlock.Split(h, -1)
	for i, p := range parts {
		// A tag separates words: "<li>a</li><li>b</li>" reads "a b".
		parts[i] = html.UnescapeString(tag.ReplaceAllString(p, " "))
	}
	return parts
}
