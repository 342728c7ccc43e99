package content

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalid marks every error caused by the content itself (as opposed to
// failing to read it). Callers can show such errors to the content's author.
var ErrInvalid = errors.New("invalid content")

// courseFile is the file that describes the path.
const courseFile = "course.yaml"

type courseYAML struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	TopicCount  int    `yaml:"topic_count"`
	Sections    []struct {
		Title  string `yaml:"title"`
		Topics []struct {
			Number int    `yaml:"number"`
			Lesson string `yaml:"lesson"`
		} `yaml:"topics"`
	} `yaml:"sections"`
}

type lessonYAML struct {
	Slug      string `yaml:"slug"`
	Title     string `yaml:"title"`
	Summary   string `yaml:"summary"`
	Why       string `yaml:"why"`
	KeyPoints []struct {
		Title string `yaml:"title"`
		Body  string `yaml:"body"`
	} `yaml:"key_points"`
	// Race names the race scenario shown beside the key points, if any.
	Race string `yaml:"race"`
	// Playground puts the redis-cli playground in the lesson.
	Playground bool `yaml:"playground"`
	GoDeeper   []struct {
		Title  string `yaml:"title"`
		Source string `yaml:"source"`
		URL    string `yaml:"url"`
	} `yaml:"go_deeper"`
}

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Load reads, parses and validates all course content in fsys: course.yaml
// and every lessons/*.md. The first problem found is returned as an error
// that names the file and wraps ErrInvalid.
func Load(fsys fs.FS) (*Course, error) {
	md := newMarkdown()
	lessons, err := loadLessons(fsys, md)
	if err != nil {
		return nil, err
	}
	return loadCourse(fsys, lessons)
}

func invalid(file, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", file, fmt.Sprintf(format, args...), ErrInvalid)
}

func loadCourse(fsys fs.FS, lessons map[string]*Lesson) (*Course, error) {
	raw, err := fs.ReadFile(fsys, courseFile)
	if err != nil {
		return nil, fmt.Errorf("content: read %s: %w", courseFile, err)
	}
	var cy courseYAML
	if err := decodeStrict(raw, &cy); err != nil {
		return nil, invalid(courseFile, "%v", err)
	}
	switch {
	case strings.TrimSpace(cy.Title) == "":
		return nil, invalid(courseFile, `missing "title"`)
	case cy.TopicCount < 1:
		return nil, invalid(courseFile, `"topic_count" must be at least 1, got %d`, cy.TopicCount)
	case len(cy.Sections) == 0:
		return nil, invalid(courseFile, `no sections`)
	}
	c := &Course{Title: cy.Title, Description: strings.TrimSpace(cy.Description), TopicCount: cy.TopicCount, lessons: map[string]*Lesson{}}
	seenNumber := map[int]bool{}
	last := 0
	for i, s := range cy.Sections {
		if strings.TrimSpace(s.Title) == "" {
			return nil, invalid(courseFile, "section %d has no title", i+1)
		}
		sec := Section{Title: s.Title}
		for _, t := range s.Topics {
			switch {
			case t.Number < 1 || t.Number > cy.TopicCount:
				return nil, invalid(courseFile, "topic %d of section %q is outside 1..%d", t.Number, s.Title, cy.TopicCount)
			case seenNumber[t.Number]:
				return nil, invalid(courseFile, "topic number %d is used twice", t.Number)
			case t.Number < last:
				return nil, invalid(courseFile, "topic %d comes after topic %d: list topics in path order", t.Number, last)
			}
			seenNumber[t.Number], last = true, t.Number
			l, ok := lessons[t.Lesson]
			if !ok {
				return nil, invalid(courseFile, "topic %d names lesson %q, but there is no lessons/%s.md", t.Number, t.Lesson, t.Lesson)
			}
			if _, dup := c.lessons[t.Lesson]; dup {
				return nil, invalid(courseFile, "lesson %q is listed twice", t.Lesson)
			}
			l.Section, l.Number = s.Title, t.Number
			c.lessons[t.Lesson] = l
			sec.Topics = append(sec.Topics, Topic{Number: t.Number, Lesson: l})
		}
		c.Sections = append(c.Sections, sec)
	}
	for slug, l := range lessons {
		if _, ok := c.lessons[slug]; !ok {
			return nil, invalid(l.File, "lesson %q is not listed in %s", slug, courseFile)
		}
	}
	return c, nil
}

func loadLessons(fsys fs.FS, md *markdown) (map[string]*Lesson, error) {
	files, err := fs.Glob(fsys, "lessons/*.md")
	if err != nil {
		return nil, fmt.Errorf("content: list lessons: %w", err)
	}
	sort.Strings(files)
	lessons := map[string]*Lesson{}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("content: read %s: %w", f, err)
		}
		l, err := parseLesson(f, raw, md)
		if err != nil {
			return nil, err
		}
		lessons[l.Slug] = l
	}
	return lessons, nil
}

func parseLesson(file string, raw []byte, md *markdown) (*Lesson, error) {
	front, body, err := splitFrontMatter(raw)
	if err != nil {
		return nil, invalid(file, "%v", err)
	}
	var ly lessonYAML
	if err := decodeStrict(front, &ly); err != nil {
		return nil, invalid(file, "front matter: %v", err)
	}
	want := strings.TrimSuffix(path.Base(file), ".md")
	for _, f := range []struct{ name, value string }{
		{"slug", ly.Slug}, {"title", ly.Title}, {"summary", ly.Summary}, {"why", ly.Why},
	} {
		if strings.TrimSpace(f.value) == "" {
			return nil, invalid(file, "front matter: missing %q", f.name)
		}
	}
	if !slugPattern.MatchString(ly.Slug) || ly.Slug != want {
		return nil, invalid(file, "front matter: slug %q must be lower-case words joined by hyphens and match the file name %q", ly.Slug, want)
	}
	if len(ly.KeyPoints) == 0 {
		return nil, invalid(file, `front matter: no "key_points"`)
	}
	if ly.Race != "" && !slugPattern.MatchString(ly.Race) {
		return nil, invalid(file, "front matter: race %q must be a scenario id such as gc-pause", ly.Race)
	}
	l := &Lesson{
		Slug: ly.Slug, Title: strings.TrimSpace(ly.Title), File: file, Race: ly.Race, Playground: ly.Playground,
		Summary: strings.TrimSpace(ly.Summary), Why: strings.TrimSpace(ly.Why),
	}
	for i, kp := range ly.KeyPoints {
		if strings.TrimSpace(kp.Title) == "" || strings.TrimSpace(kp.Body) == "" {
			return nil, invalid(file, "front matter: key point %d needs a title and a body", i+1)
		}
		html, err := md.inline(kp.Body)
		if err != nil {
			return nil, invalid(file, "key point %d: %v", i+1, err)
		}
		l.KeyPoints = append(l.KeyPoints, KeyPoint{Title: strings.TrimSpace(kp.Title), Body: html})
	}
	for i, g := range ly.GoDeeper {
		u, err := url.Parse(g.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, invalid(file, "front matter: go_deeper link %d has no absolute http(s) URL: %q", i+1, g.URL)
		}
		if strings.TrimSpace(g.Title) == "" {
			return nil, invalid(file, "front matter: go_deeper link %d has no title", i+1)
		}
		l.GoDeeper = append(l.GoDeeper, Link{Title: g.Title, Source: g.Source, URL: g.URL})
	}
	// Blank lines in place of the front matter keep line numbers in
	// Markdown errors true to the file.
	lead := bytes.Count(front, []byte("\n")) + 2 // and the two "---" lines
	html, err := md.document(append(bytes.Repeat([]byte("\n"), lead), body...))
	if err != nil {
		return nil, invalid(file, "%v", err)
	}
	if strings.TrimSpace(string(html)) == "" {
		return nil, invalid(file, "the lesson has no body")
	}
	l.Body = template.HTML(html)
	return l, nil
}

// splitFrontMatter separates a leading "---" YAML block from the Markdown
// that follows it.
func splitFrontMatter(raw []byte) (front, body []byte, err error) {
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(raw, []byte("---\n")) {
		return nil, nil, errors.New(`no front matter: the file must start with a "---" line`)
	}
	rest := raw[len("---\n"):]
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		return nil, nil, errors.New(`front matter is not closed by a "---" line`)
	}
	return rest[:end+1], rest[end+len("\n---\n"):], nil
}

// decodeStrict decodes YAML and rejects fields the schema does not know, so a
// typo in a field name is an error rather than a silently missing value.
func decodeStrict(raw []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}
