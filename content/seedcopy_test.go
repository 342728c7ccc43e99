package content

import (
	"bytes"
	"flag"
	"html"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/wordrun"
	"github.com/locklab/locklab/quiz"
)

// seedCard names the seed card's text file. Given, the test reads the card
// and rewrites testdata/seedcard-runs.txt from it before checking.
var seedCard = flag.String("seedcard", "", "seed card text file; rewrite "+seedDigests+" from it")

const (
	// runLength is the shortest run of words that counts as copied.
	runLength = 10
	// seedDigests holds a digest of every run of runLength words on the
	// seed card, never the card's text: the course is written in its own
	// words, and the repository does not carry the card.
	seedDigests = "testdata/seedcard-runs.txt"
)

// TestNoCopyFromSeedCard fails if a lesson or its quiz repeats a run of ten
// or more consecutive words from the seed card (case and punctuation
// ignored). The card's breadcrumb and title are left out of the check,
// since the lesson must carry the same ones; code blocks are left out of
// the lesson, since the release script is the standard one.
func TestNoCopyFromSeedCard(t *testing.T) {
	c, err := Load(Embedded())
	if err != nil {
		t.Fatalf("Load(Embedded()) = %v", err)
	}
	card := seedCardRuns(t, c)
	bank, err := quiz.Load(Embedded())
	if err != nil {
		t.Fatalf("quiz.Load(Embedded()) = %v", err)
	}
	for _, l := range c.Lessons() {
		t.Run(l.Slug, func(t *testing.T) {
			for _, run := range card.Shared(runLength, lessonSegments(l)...) {
				t.Errorf("the lesson repeats the seed card: %q", run)
			}
			q, err := bank.Quiz(l.Slug)
			if err != nil {
				return
			}
			for _, qn := range q.Questions {
				for _, run := range card.Shared(runLength, questionText(qn)) {
					t.Errorf("quiz question %s repeats the seed card: %q", qn.ID, run)
				}
			}
		})
	}
}

// lessonSegments is the lesson's prose in page order: summary, "Why it
// matters", key points, body. Runs may cross from one part into the next,
// as a reader's eye does, but not across a code block.
func lessonSegments(l *Lesson) []string {
	var b strings.Builder
	b.WriteString(html.EscapeString(l.Summary))
	b.WriteString("\nWhy it matters: ")
	b.WriteString(html.EscapeString(l.Why))
	for _, kp := range l.KeyPoints {
		b.WriteString("\n" + html.EscapeString(kp.Title) + "\n" + string(kp.Body))
	}
	b.WriteString("\n" + string(l.Body))
	return wordrun.HTMLSegments(b.String())
}

// questionText is a question as a learner reads it: the prompt, then every
// choice with its explanation.
func questionText(qn *quiz.Question) string {
	parts := []string{qn.Prompt}
	for _, ch := range qn.Choices {
		parts = append(parts, ch.Text, ch.Explanation)
	}
	return strings.Join(parts, "\n")
}

// seedCardRuns returns the digests of the seed card's runs: from the file
// named by -seedcard, rewriting testdata, or else from testdata.
func seedCardRuns(t *testing.T, c *Course) wordrun.Set {
	t.Helper()
	if *seedCard == "" {
		f, err := os.Open(seedDigests)
		if err != nil {
			t.Fatalf("%v (run go test ./content -run TestNoCopyFromSeedCard -seedcard=FILE to create it)", err)
		}
		defer f.Close()
		s, err := wordrun.ReadSet(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) == 0 {
			t.Fatalf("%s holds no digests", seedDigests)
		}
		return s
	}
	raw, err := os.ReadFile(*seedCard)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range c.Lessons() {
		titles = append(titles, l.Title)
	}
	s := wordrun.DigestSet(runLength, seedSegments(string(raw), titles)...)
	var buf bytes.Buffer
	buf.WriteString("# A digest of every run of 10 words on the seed card, breadcrumb and\n")
	buf.WriteString("# title left out; never the card's text. Regenerate with:\n")
	buf.WriteString("# go test ./content -run TestNoCopyFromSeedCard -seedcard=FILE\n")
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedDigests, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// seedSegments splits the card's text at its breadcrumb (the line with the
// "·" separators) and at lines that are a lesson title, and drops both.
func seedSegments(card string, titles []string) []string {
	var segs []string
	var cur strings.Builder
	for _, line := range strings.Split(card, "\n") {
		if isBreadcrumbOrTitle(line, titles) {
			segs = append(segs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line + "\n")
	}
	return append(segs, cur.String())
}

func isBreadcrumbOrTitle(line string, titles []string) bool {
	line = strings.TrimSpace(line)
	if strings.Contains(line, "·") {
		return true
	}
	for _, t := range titles {
		if strings.EqualFold(line, t) {
			return true
		}
	}
	return false
}

// TestSeedSegments checks that the breadcrumb and the title are what is
// left out of the card, and nothing else.
func TestSeedSegments(t *testing.T) {
	card := "site\n\nPath · Section · Topic 1 of 2\n\nThe Title\n\nNot started\nBody text.\n"
	got := seedSegments(card, []string{"The title"})
	var words []string
	for _, s := range got {
		words = append(words, strings.Join(wordrun.Words(s), " "))
	}
	want := []string{"site", "", "not started body text"}
	if strings.Join(words, "|") != strings.Join(want, "|") {
		t.Errorf("seedSegments = %q; want %q", words, want)
	}
}
