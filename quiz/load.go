package quiz

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalid marks errors caused by the quiz files themselves.
var ErrInvalid = errors.New("invalid quiz")

type quizYAML struct {
	Topic     string `yaml:"topic"`
	Questions []struct {
		ID      string `yaml:"id"`
		Prompt  string `yaml:"prompt"`
		Choices []struct {
			ID          string `yaml:"id"`
			Text        string `yaml:"text"`
			Correct     bool   `yaml:"correct"`
			Explanation string `yaml:"explanation"`
		} `yaml:"choices"`
	} `yaml:"questions"`
}

var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Load reads and validates every quizzes/*.yaml in fsys. Each file is one
// topic's quiz, named after the topic. The first problem found is returned
// as an error that names the file and wraps ErrInvalid.
func Load(fsys fs.FS) (*Bank, error) {
	files, err := fs.Glob(fsys, "quizzes/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("quiz: list quizzes: %w", err)
	}
	sort.Strings(files)
	b := &Bank{quizzes: map[string]*Quiz{}}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("quiz: read %s: %w", f, err)
		}
		q, err := parse(f, raw)
		if err != nil {
			return nil, err
		}
		b.quizzes[q.Topic] = q
	}
	return b, nil
}

func invalid(file, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", file, fmt.Sprintf(format, args...), ErrInvalid)
}

func parse(file string, raw []byte) (*Quiz, error) {
	var qy quizYAML
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&qy); err != nil {
		return nil, invalid(file, "%v", err)
	}
	if want := strings.TrimSuffix(path.Base(file), ".yaml"); qy.Topic != want {
		return nil, invalid(file, "topic %q must match the file name %q", qy.Topic, want)
	}
	if len(qy.Questions) == 0 {
		return nil, invalid(file, "no questions")
	}
	q := &Quiz{Topic: qy.Topic}
	seenQ := map[string]bool{}
	for i, qq := range qy.Questions {
		where := fmt.Sprintf("question %d (%q)", i+1, qq.ID)
		switch {
		case !idPattern.MatchString(qq.ID):
			return nil, invalid(file, "%s: id must be lower-case words joined by hyphens", where)
		case seenQ[qq.ID]:
			return nil, invalid(file, "%s: id is used twice", where)
		case strings.TrimSpace(qq.Prompt) == "":
			return nil, invalid(file, "%s: no prompt", where)
		case len(qq.Choices) < 2:
			return nil, invalid(file, "%s: needs at least two choices, has %d", where, len(qq.Choices))
		}
		seenQ[qq.ID] = true
		qn := &Question{ID: qq.ID, Prompt: strings.TrimSpace(qq.Prompt)}
		seenC := map[string]bool{}
		rights := 0
		for j, c := range qq.Choices {
			switch {
			case !idPattern.MatchString(c.ID):
				return nil, invalid(file, "%s choice %d: id %q must be lower-case words joined by hyphens", where, j+1, c.ID)
			case seenC[c.ID]:
				return nil, invalid(file, "%s: choice id %q is used twice", where, c.ID)
			case strings.TrimSpace(c.Text) == "":
				return nil, invalid(file, "%s choice %q: no text", where, c.ID)
			case strings.TrimSpace(c.Explanation) == "":
				return nil, invalid(file, "%s choice %q: no explanation", where, c.ID)
			}
			seenC[c.ID] = true
			if c.Correct {
				rights++
				qn.right = c.ID
			}
			qn.Choices = append(qn.Choices, Choice{ID: c.ID, Text: strings.TrimSpace(c.Text), Explanation: strings.TrimSpace(c.Explanation)})
		}
		if rights != 1 {
			return nil, invalid(file, "%s: needs exactly one right choice, has %d", where, rights)
		}
		q.Questions = append(q.Questions, qn)
	}
	return q, nil
}
