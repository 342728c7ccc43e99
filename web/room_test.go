package web

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
)

// exampleForm matches one of the forms that run a lesson's example
// without JavaScript, as lesson.templ renders it.
var exampleForm = regexp.MustCompile(`<form method="post" action="/playground/exec" class="cli-form">(.*?)</form>`)

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// lineButton matches a button of such a form: it sends its line.
var lineButton = regexp.MustCompile(`<button type="submit" name="line" value="([^"]*)" class="cli-form-run">`)

// TestSplitCLI checks that a lesson's body split after its examples is
// the body unchanged, and that each part's commands are the block's, in
// order, with the characters the markup escapes (quotes in an EVAL)
// given back.
func TestSplitCLI(t *testing.T) {
	course, err := content.Load(content.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range course.Lessons() {
		parts := content.SplitCLI(l.Body)
		var joined strings.Builder
		cmds := 0
		for _, p := range parts {
			joined.WriteString(string(p.HTML))
			cmds += len(p.Commands)
			for _, c := range p.Commands {
				if c.Client != "A" && c.Client != "B" || c.Line == "" || !strings.Contains(string(l.Body), `<span class="cli-input">`+html.EscapeString(c.Line)+`</span>`) {
					t.Errorf("%s: command %+v is not one of the body's", l.Slug, c)
				}
			}
		}
		if joined.String() != string(l.Body) {
			t.Errorf("%s: the parts joined differ from the body", l.Slug)
		}
		if want := strings.Count(string(l.Body), `class="cli-cmd"`); cmds != want {
			t.Errorf("%s: SplitCLI found %d commands; the body has %d", l.Slug, cmds, want)
		}
	}
	if parts := content.SplitCLI("<p>No examples.</p>"); len(parts) != 1 || len(parts[0].Commands) != 0 {
		t.Errorf("SplitCLI of a body without examples = %+v; want one part, no commands", parts)
	}
}

// TestLessonExampleForms reads the lesson as a browser without JavaScript
// gets it: every command of every example has a button, in a form of
// its client's, that posts its line to the playground's form, from the
// lesson, in the example's order; posting the
// release script, quotes and all, runs it as written, and the page the
// redirect leads to shows the reply at the terminal.
func TestLessonExampleForms(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	code, page := l.do("GET", "/topics/distributed-locks", "", "")
	if code != http.StatusOK {
		t.Fatalf("GET lesson = %d", code)
	}
	forms := exampleForm.FindAllStringSubmatch(page, -1)
	course, _ := content.Load(content.Embedded())
	lesson, _ := course.Lesson("distributed-locks")
	var want []content.CLICommand
	for _, p := range content.SplitCLI(lesson.Body) {
		want = append(want, p.Commands...)
	}
	var got []content.CLICommand
	var release url.Values
	for i, f := range forms {
		v := url.Values{}
		for _, m := range hiddenField.FindAllStringSubmatch(f[1], -1) {
			v.Set(m[1], html.UnescapeString(m[2]))
		}
		if v.Get("from") != "lesson" || v.Get("topic") != "distributed-locks" || v.Get("_csrf") == "" {
			t.Errorf("form %d posts from=%q topic=%q with CSRF %q; want the lesson, its topic and a token", i, v.Get("from"), v.Get("topic"), v.Get("_csrf"))
		}
		for _, m := range lineButton.FindAllStringSubmatch(f[1], -1) {
			line := html.UnescapeString(m[1])
			got = append(got, content.CLICommand{Client: v.Get("client"), Line: line})
			if strings.HasPrefix(line, "EVAL ") && release == nil {
				release = url.Values{"_csrf": {v.Get("_csrf")}, "from": {v.Get("from")}, "topic": {v.Get("topic")}, "client": {v.Get("client")}, "line": {line}}
			}
		}
	}
	if len(want) == 0 || len(got) != len(want) || len(got) != strings.Count(page, `class="cli-cmd"`) {
		t.Fatalf("the lesson's example forms run %d lines; its examples have %d commands", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("example button %d runs %s> %q; the example has %s> %q", i, got[i].Client, got[i].Line, want[i].Client, want[i].Line)
		}
	}
	if release == nil {
		t.Fatal("no example form runs an EVAL")
	}
	if _, r, _ := l.exec("A", "SET lock:invoice:7 3f9a1c NX PX 30000"); r.Output != "OK" {
		t.Fatalf("taking the lock = %q", r.Output)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/playground/exec", strings.NewReader(release.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", l.csrfToken())
	noFollow := *l.http
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/topics/distributed-locks#pg-lesson-terminal" {
		t.Fatalf("POST of the release example = %d to %q; want 303 to the lesson's terminal", resp.StatusCode, loc)
	}
	_, page = l.do("GET", "/topics/distributed-locks", "", "")
	if !strings.Contains(page, `<pre class="pg-out">(integer) 1</pre>`) {
		t.Error("after the release example's form the lesson does not show (integer) 1 in the terminal")
	}
	// A second example form, which carries no transcript either, keeps
	// the first one's reply above its own.
	again := release
	again.Set("line", "EXISTS lock:invoice:7")
	if code, _ := l.do("POST", "/playground/exec", "application/x-www-form-urlencoded", again.Encode()); code != http.StatusOK {
		t.Fatalf("POST of a second example form = %d", code)
	}
	_, page = l.do("GET", "/topics/distributed-locks", "", "")
	if !strings.Contains(page, `<pre class="pg-out">(integer) 1</pre>`) || !strings.Contains(page, `<pre class="pg-out">(integer) 0</pre>`) {
		t.Error("after two example forms the terminal does not show both replies")
	}
	if _, r, _ := l.exec("A", "EXISTS lock:invoice:7"); r.Output != "(integer) 0" {
		t.Errorf("after the release example EXISTS lock:invoice:7 = %q; want (integer) 0", r.Output)
	}
}

// TestProgressLinkOnEveryPage checks that the site header links to the
// progress page from every kind of page, and that the race's settings
// come after its player in the page.
func TestProgressLinkOnEveryPage(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	for _, path := range []string{"/", "/topics/distributed-locks", "/race", "/playground", "/lab", "/progress", "/no/such/page"} {
		_, page := l.do("GET", path, "", "")
		nav := page[strings.Index(page, `<nav aria-label="Site">`):]
		nav = nav[:strings.Index(nav, "</nav>")]
		if !strings.Contains(nav, `<a href="/progress"`) {
			t.Errorf("%s: the site header has no link to /progress", path)
		}
	}
	_, race := l.do("GET", "/race", "", "")
	if play, settings := strings.Index(race, `data-act="play"`), strings.Index(race, `data-race-settings`); play < 0 || settings < 0 || play > settings {
		t.Errorf("/race: Play at byte %d, the settings at %d; want Play first", play, settings)
	}
}
