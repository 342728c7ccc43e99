package web

import (
	"os"
	"regexp"
	"testing"

	"github.com/locklab/locklab/internal/wordrun"
)

// breadcrumbAndTitle match the parts of the lesson page that must read as
// the seed card's do; the check leaves them out, as it leaves them out of
// the card.
var breadcrumbAndTitle = regexp.MustCompile(`(?s)<nav aria-label="Breadcrumb".*?</nav>|<h1>.*?</h1>`)

// TestLessonPageNoCopyFromSeedCard checks the lesson page as rendered, with
// the parts the views add (section intros, the progress line), for runs of
// ten words from the seed card. The content package checks the lesson and
// quiz text on their own and keeps the card's digests.
func TestLessonPageNoCopyFromSeedCard(t *testing.T) {
	f, err := os.Open("../content/testdata/seedcard-runs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	card, err := wordrun.ReadSet(f)
	if err != nil || len(card) == 0 {
		t.Fatalf("seed card digests: %d read, err %v", len(card), err)
	}
	ts := newTestServer(t)
	_, page := get(t, ts.URL, "/topics/distributed-locks")
	main := regexp.MustCompile(`(?s)<main\b.*</main>`).FindString(page)
	if main == "" {
		t.Fatal("lesson page has no <main>")
	}
	// A <pre> in place of each left-out part splits the text there, so no
	// run is made up across it.
	main = breadcrumbAndTitle.ReplaceAllString(main, "<pre></pre>")
	for _, run := range card.Shared(10, wordrun.HTMLSegments(main)...) {
		t.Errorf("the lesson page repeats the seed card: %q", run)
	}
}
