package content

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/locklab/locklab/quiz"
)

// TestLoadEmbedded loads every embedded content file, as the server does at
// start-up, and checks the shape of what it finds.
func TestLoadEmbedded(t *testing.T) {
	c, err := Load(Embedded())
	if err != nil {
		t.Fatalf("Load(Embedded()) = %v", err)
	}
	if c.Title != "Redis path" || c.TopicCount != 11 {
		t.Errorf("course = %q with %d topics; want \"Redis path\" with 11", c.Title, c.TopicCount)
	}
	// Every file under lessons/ must have become a lesson.
	files, _ := fs.Glob(Embedded(), "lessons/*.md")
	if got := len(c.Lessons()); got != len(files) || got == 0 {
		t.Errorf("loaded %d lessons from %d files", got, len(files))
	}
	l, ok := c.Lesson("distributed-locks")
	if !ok {
		t.Fatal(`Lesson("distributed-locks") not found`)
	}
	if l.Section != "Using it well" || l.Number != 7 {
		t.Errorf("lesson is in %q as topic %d; want \"Using it well\", 7", l.Section, l.Number)
	}
	if len(l.KeyPoints) != 4 {
		t.Errorf("lesson has %d key points; want 4", len(l.KeyPoints))
	}
	if len(l.GoDeeper) != 3 {
		t.Errorf("lesson has %d go-deeper links; want 3", len(l.GoDeeper))
	}
	body := string(l.Body)
	for _, want := range []string{
		`data-redis-cli`,
		`<span class="cli-input">SET lock:invoice:7 3f9a1c NX PX 30000</span>`,
		`<span class="cli-reply">OK</span>`,
		`data-client="B"`,
		`<span class="cli-reply">(nil)</span>`,
		`<span class="cli-reply">(integer) 1</span>`,
		`class="chroma"`,
		`id="redlock-one-lock-on-five-instances"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("lesson body lacks %s", want)
		}
	}
}

const goodCourse = `title: Redis path
topic_count: 11
sections:
  - title: Using it well
    topics:
      - number: 7
        lesson: demo
`

const goodLesson = `---
slug: demo
title: Demo
summary: A summary.
why: A reason.
key_points:
  - title: One
    body: The ` + "`first`" + ` point.
go_deeper:
  - title: Docs
    url: https://example.org/docs
---

### Part

Some text.

` + "```redis-cli\nA> PING\nPONG\n```\n"

// TestLoadRejectsBrokenContent checks that each kind of mistake stops
// loading with an error that names the file and says what is wrong.
func TestLoadRejectsBrokenContent(t *testing.T) {
	for _, tt := range []struct {
		name     string
		course   string
		lesson   string
		wantFile string
		wantMsg  string
	}{
		{"bad yaml", "title: [", goodLesson, "course.yaml", "yaml"},
		{"unknown course field", goodCourse + "colour: red\n", goodLesson, "course.yaml", "colour"},
		{"no title", strings.Replace(goodCourse, "title: Redis path", "title: ''", 1), goodLesson, "course.yaml", `missing "title"`},
		{"topic out of range", strings.Replace(goodCourse, "number: 7", "number: 12", 1), goodLesson, "course.yaml", "outside 1..11"},
		{"missing lesson", strings.Replace(goodCourse, "lesson: demo", "lesson: nope", 1), goodLesson, "course.yaml", `no lessons/nope.md`},
		{"no front matter", goodCourse, "# Demo\n", "lessons/demo.md", "no front matter"},
		{"unclosed front matter", goodCourse, "---\nslug: demo\n", "lessons/demo.md", "not closed"},
		{"missing summary", goodCourse, strings.Replace(goodLesson, "summary: A summary.\n", "", 1), "lessons/demo.md", `missing "summary"`},
		{"unknown lesson field", goodCourse, strings.Replace(goodLesson, "why:", "whyy:", 1), "lessons/demo.md", "whyy"},
		{"slug differs from file", goodCourse, strings.Replace(goodLesson, "slug: demo", "slug: other", 1), "lessons/demo.md", "match the file name"},
		{"no key points", goodCourse, strings.Replace(goodLesson, "key_points:\n  - title: One\n    body: The `first` point.\n", "", 1), "lessons/demo.md", "key_points"},
		{"relative link", goodCourse, strings.Replace(goodLesson, "https://example.org/docs", "/docs", 1), "lessons/demo.md", "absolute"},
		{"h2 in body", goodCourse, strings.Replace(goodLesson, "### Part", "## Part", 1), "lessons/demo.md", "line 14: a level-2 heading"},
		{"unknown code language", goodCourse, goodLesson + "\n```klingon\nx\n```\n", "lessons/demo.md", `unknown code language "klingon"`},
		{"cli reply before command", goodCourse, goodLesson + "\n```redis-cli\nOK\n```\n", "lessons/demo.md", "reply before any command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"course.yaml":     {Data: []byte(tt.course)},
				"lessons/demo.md": {Data: []byte(tt.lesson)},
			}
			_, err := Load(fsys)
			if err == nil {
				t.Fatal("Load = nil error; want one")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Load error %q does not wrap ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), tt.wantFile+":") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Load error = %q; want it to start with %q and mention %q", err, tt.wantFile, tt.wantMsg)
			}
		})
	}
}

func TestLoadGoodFixture(t *testing.T) {
	fsys := fstest.MapFS{
		"course.yaml":     {Data: []byte(goodCourse)},
		"lessons/demo.md": {Data: []byte(goodLesson)},
	}
	c, err := Load(fsys)
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	l, _ := c.Lesson("demo")
	if got, want := string(l.KeyPoints[0].Body), "The <code>first</code> point."; got != want {
		t.Errorf("key point body = %q; want %q", got, want)
	}
}

func TestLessonNotListed(t *testing.T) {
	fsys := fstest.MapFS{
		"course.yaml":      {Data: []byte(goodCourse)},
		"lessons/demo.md":  {Data: []byte(goodLesson)},
		"lessons/extra.md": {Data: []byte(strings.Replace(goodLesson, "slug: demo", "slug: extra", 1))},
	}
	_, err := Load(fsys)
	if err == nil || !strings.HasPrefix(err.Error(), "lessons/extra.md:") || !strings.Contains(err.Error(), "not listed") {
		t.Errorf("Load = %v; want lessons/extra.md not listed", err)
	}
}

// TestEmbeddedQuizzesBelongToLessons loads the embedded quizzes and checks
// that each one is for a lesson that exists.
func TestEmbeddedQuizzesBelongToLessons(t *testing.T) {
	c, err := Load(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	bank, err := quiz.Load(Embedded())
	if err != nil {
		t.Fatalf("quiz.Load(Embedded()) = %v", err)
	}
	if len(bank.Topics()) == 0 {
		t.Fatal("no quizzes embedded")
	}
	for _, topic := range bank.Topics() {
		if _, ok := c.Lesson(topic); !ok {
			t.Errorf("quiz for %q has no lesson", topic)
		}
	}
}

func TestRenderCLI(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"default client", "> PING\nPONG", `<span class="cli-cmd" data-client="A" data-keys="[]"><span class="cli-prompt">A&gt;</span> <span class="cli-input">PING</span></span>` + "\n" + `<span class="cli-reply">PONG</span>`},
		{"client B and escaping", `B> SET k "<b>"` + "\nOK", `data-client="B" data-keys="[&#34;k&#34;]"><span class="cli-prompt">B&gt;</span> <span class="cli-input">SET k &#34;&lt;b&gt;&#34;</span>`},
		{"keys by the command table", `A> EVAL "return redis.call('del', KEYS[1])" 1 "lock:<7>" tok` + "\n(integer) 1", `data-keys="[&#34;lock:\u003c7\u003e&#34;]"`},
		{"several keys", "A> MSET a 1 b 2\nOK", `data-keys="[&#34;a&#34;,&#34;b&#34;]"`},
		{"note", "A> GET k\n(nil)\n# nobody", `<span class="cli-note"># nobody</span>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderCLI(tt.src)
			if err != nil || !strings.Contains(got, tt.want) {
				t.Errorf("renderCLI(%q) = %q, %v; want it to contain %q", tt.src, got, err, tt.want)
			}
		})
	}
}

func TestHighlightCSS(t *testing.T) {
	css, err := HighlightCSS()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(css, ".chroma") || !strings.Contains(css, "prefers-color-scheme: dark") {
		t.Errorf("HighlightCSS lacks .chroma rules or the dark theme:\n%.300s", css)
	}
}
