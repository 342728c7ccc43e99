package web

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/playground"
)

// lessonExample is one example of a lesson as playground.js sees it: the
// redis-cli blocks of one ### section, each command with the reply the
// page prints under it.
type lessonExample struct {
	section string
	steps   []exampleStep
}

type exampleStep struct{ client, line, printed string }

var (
	cliPart    = regexp.MustCompile(`<h3[^>]*>(.*?)</h3>|<span class="cli-cmd" data-client="([AB])"[^>]*>.*?<span class="cli-input">(.*?)</span></span>|<span class="cli-reply">(.*?)</span>`)
	cliOrder   = regexp.MustCompile(`(?s)<h3[^>]*>.*?</h3>|<div class="cli" data-redis-cli>.*?</div>`)
	htmlTagPat = regexp.MustCompile(`<[^>]+>`)
)

// lessonExamples reads a lesson's rendered body as the page's script
// reads its markup.
func lessonExamples(body string) []lessonExample {
	var out []lessonExample
	section, open := "", false
	// Headings and blocks in document order.
	for _, m := range cliOrder.FindAllString(body, -1) {
		if strings.HasPrefix(m, "<h3") {
			section, open = html.UnescapeString(htmlTagPat.ReplaceAllString(m, "")), false
			continue
		}
		if !open {
			out = append(out, lessonExample{section: section})
			open = true
		}
		ex := &out[len(out)-1]
		for _, p := range cliPart.FindAllStringSubmatch(m, -1) {
			switch {
			case p[2] != "":
				ex.steps = append(ex.steps, exampleStep{client: p[2], line: html.UnescapeString(p[3])})
			case p[4] != "" && len(ex.steps) > 0:
				st := &ex.steps[len(ex.steps)-1]
				if st.printed != "" {
					st.printed += "\n"
				}
				st.printed += html.UnescapeString(p[4])
			}
		}
	}
	return out
}

// TestLessonExamplesAgreeWithThePage runs every example of every lesson,
// its lines in order and back to back, in a fresh sandbox, as "Run this
// example from the start" does, and checks each reply against the one
// the page prints: a lesson whose printed replies the playground does not
// give is caught here, before a learner sees the difference.
func TestLessonExamplesAgreeWithThePage(t *testing.T) {
	course, err := content.Load(content.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t)
	for _, l := range course.Lessons() {
		examples := lessonExamples(string(l.Body))
		if strings.Contains(string(l.Body), "data-redis-cli") && len(examples) == 0 {
			t.Fatalf("%s: found no examples in a body with redis-cli blocks; the markup changed under this test", l.Slug)
		}
		steps := 0
		for _, ex := range examples {
			steps += len(ex.steps)
		}
		if strings.Count(string(l.Body), `class="cli-cmd"`) != steps {
			t.Fatalf("%s: read %d commands of %d; the markup changed under this test", l.Slug, steps, strings.Count(string(l.Body), `class="cli-cmd"`))
		}
		for _, ex := range examples {
			learner := newLearner(t, ts.URL) // a sandbox of its own
			for _, st := range ex.steps {
				code, r, body := learner.exec(st.client, st.line)
				if code != 200 {
					t.Fatalf("%s, %q: %s> %s = %d %s", l.Slug, ex.section, st.client, st.line, code, body)
				}
				if st.printed != "" && !playground.ReplyMatches(st.printed, r.Output) {
					t.Errorf("%s, %q: %s> %s answers %q; the page prints %q", l.Slug, ex.section, st.client, st.line, r.Output, st.printed)
				}
			}
		}
	}
}

func TestLessonExamplesParse(t *testing.T) {
	body := `<h3 id="a">The single-instance lock</h3><p>x</p>` +
		`<div class="cli" data-redis-cli><pre><code><span class="cli-cmd" data-client="A"><span class="cli-prompt">A&gt;</span> <span class="cli-input">SET k &#34;v&#34; NX</span></span>` + "\n" +
		`<span class="cli-reply">OK</span></code></pre></div>` +
		`<div class="cli" data-redis-cli><pre><code><span class="cli-cmd" data-client="B"><span class="cli-prompt">B&gt;</span> <span class="cli-input">LRANGE l 0 -1</span></span>` + "\n" +
		`<span class="cli-reply">1) &#34;a&#34;</span>` + "\n" + `<span class="cli-reply">2) &#34;b&#34;</span>` + "\n" + `<span class="cli-note"># a note</span></code></pre></div>` +
		`<h3>Redlock</h3><div class="cli" data-redis-cli><pre><code><span class="cli-cmd" data-client="A"><span class="cli-prompt">A&gt;</span> <span class="cli-input">PING</span></span></code></pre></div>`
	got := lessonExamples(body)
	if len(got) != 2 || len(got[0].steps) != 2 || len(got[1].steps) != 1 {
		t.Fatalf("lessonExamples = %+v; want 2 examples of 2 and 1 steps", got)
	}
	if s := got[0].steps[0]; s.client != "A" || s.line != `SET k "v" NX` || s.printed != "OK" {
		t.Errorf("first step = %+v", s)
	}
	if s := got[0].steps[1]; s.client != "B" || s.printed != "1) \"a\"\n2) \"b\"" {
		t.Errorf("second step = %+v", s)
	}
	if got[1].section != "Redlock" || got[1].steps[0].printed != "" {
		t.Errorf("second example = %+v", got[1])
	}
}
