package content

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/locklab/locklab/playground"
)

// CLILanguage is the fence language of code blocks that hold redis-cli
// sessions. Such blocks are rendered with data-redis-cli on their wrapper
// and data-client on each command, so the playground can run them.
const CLILanguage = "redis-cli"

// markdown renders lesson Markdown: GitHub-flavoured, heading IDs, code
// highlighted by chroma with CSS classes, and redis-cli sessions marked up
// for the playground. Raw HTML in the source is not passed through.
type markdown struct {
	gm goldmark.Markdown
}

func newMarkdown() *markdown {
	formatter := chromahtml.New(chromahtml.WithClasses(true))
	return &markdown{gm: goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(
			// A lower number wins over goldmark's own code block renderer (1000).
			util.Prioritized(&codeRenderer{formatter: formatter}, 100),
		)),
	)}
}

// document renders a lesson body. Headings must start at level 3: the page
// itself provides the h1 and the h2 sections around the body.
func (m *markdown) document(src []byte) (string, error) {
	doc := m.gm.Parser().Parse(text.NewReader(src))
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering && h.Level < 3 {
			return ast.WalkStop, fmt.Errorf("line %d: a level-%d heading; the page provides the h1 and h2s, so body headings start at ###", lineOf(src, n), h.Level)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := m.gm.Renderer().Render(&buf, src, doc); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// inline renders a short Markdown fragment, such as a key point, without
// the surrounding paragraph.
func (m *markdown) inline(src string) (template.HTML, error) {
	var buf bytes.Buffer
	if err := m.gm.Convert([]byte(strings.TrimSpace(src)), &buf); err != nil {
		return "", err
	}
	out := strings.TrimSpace(buf.String())
	if !strings.HasPrefix(out, "<p>") || strings.Count(out, "<p>") != 1 {
		return "", fmt.Errorf("must be a single paragraph")
	}
	out = strings.TrimSuffix(strings.TrimPrefix(out, "<p>"), "</p>")
	return template.HTML(out), nil
}

// lineOf returns the 1-based source line where a block node starts.
func lineOf(src []byte, n ast.Node) int {
	for c := n; c != nil; c = c.FirstChild() {
		if c.Type() == ast.TypeBlock && c.Lines().Len() > 0 {
			return bytes.Count(src[:c.Lines().At(0).Start], []byte("\n")) + 1
		}
		if t, ok := c.(*ast.Text); ok {
			return bytes.Count(src[:t.Segment.Start], []byte("\n")) + 1
		}
	}
	return 0
}

type codeRenderer struct {
	formatter *chromahtml.Formatter
}

func (r *codeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.fenced)
	reg.Register(ast.KindCodeBlock, r.fenced)
}

func (r *codeRenderer) fenced(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	var code bytes.Buffer
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		code.Write(seg.Value(src))
	}
	lang := ""
	if fb, ok := n.(*ast.FencedCodeBlock); ok {
		lang = string(fb.Language(src))
	}
	line := lineOf(src, n)
	switch lang {
	case CLILanguage:
		out, err := renderCLI(code.String())
		if err != nil {
			return ast.WalkStop, fmt.Errorf("line %d: redis-cli block: %w", line, err)
		}
		_, _ = w.WriteString(out)
	case "", "text":
		_, _ = fmt.Fprintf(w, "<pre class=\"code\"><code>%s</code></pre>\n", html.EscapeString(code.String()))
	default:
		lexer := lexers.Get(lang)
		if lexer == nil {
			return ast.WalkStop, fmt.Errorf("line %d: unknown code language %q", line, lang)
		}
		it, err := chroma.Coalesce(lexer).Tokenise(nil, code.String())
		if err != nil {
			return ast.WalkStop, fmt.Errorf("line %d: highlight %s: %w", line, lang, err)
		}
		_, _ = fmt.Fprintf(w, "<div class=\"code\" data-lang=\"%s\">", html.EscapeString(lang))
		if err := r.formatter.Format(w, styles.Fallback, it); err != nil {
			return ast.WalkStop, fmt.Errorf("line %d: highlight %s: %w", line, lang, err)
		}
		_, _ = w.WriteString("</div>\n")
	}
	return ast.WalkSkipChildren, nil
}

var promptPattern = regexp.MustCompile(`^([AB])?> (.+)$`)

// renderCLI turns a redis-cli transcript into HTML. The source format is:
//
//	A> SET lock:invoice:7 3f9a1c NX PX 30000
//	OK
//	# a note for the reader
//
// "A>" or "B>" names the client that sends the command ("> " alone means A);
// every other line is the reply printed by the command above it. Each
// command carries the keys it names (data-keys, a JSON array), read by
// the playground's own tokenizer and command table, for the page to
// narrate a reply and to run the example from the start.
func renderCLI(src string) (string, error) {
	// A command's span is written once its replies are read: a reply
	// with playground.VariesMark gives the command the pattern its reply
	// must match (data-expect-pattern).
	type cmdLine struct {
		client, cmd string
		replies     []string
		at          int // index in pieces
	}
	var pieces []string
	var cmds []*cmdLine
	var last *cmdLine
	for i, line := range strings.Split(strings.TrimRight(src, "\n"), "\n") {
		switch m := promptPattern.FindStringSubmatch(line); {
		case m != nil:
			client := m[1]
			if client == "" {
				client = "A"
			}
			last = &cmdLine{client: client, cmd: strings.TrimSpace(m[2]), at: len(pieces)}
			cmds = append(cmds, last)
			pieces = append(pieces, "")
		case strings.HasPrefix(line, "#"):
			pieces = append(pieces, fmt.Sprintf(`<span class="cli-note">%s</span>`, html.EscapeString(line)))
		case strings.TrimSpace(line) == "":
			pieces = append(pieces, "")
		default:
			if last == nil {
				return "", fmt.Errorf("line %d of the block is a reply before any command (start commands with \"A> \" or \"B> \")", i+1)
			}
			last.replies = append(last.replies, line)
			pieces = append(pieces, fmt.Sprintf(`<span class="cli-reply">%s</span>`, html.EscapeString(line)))
		}
	}
	if len(cmds) == 0 {
		return "", fmt.Errorf(`no command in the block (start commands with "A> " or "B> ")`)
	}
	for _, c := range cmds {
		keys, _ := json.Marshal(playground.LineKeys(c.cmd))
		pattern := ""
		if p := playground.ReplyPattern(strings.Join(c.replies, "\n")); p != "" {
			pattern = fmt.Sprintf(` data-expect-pattern="%s"`, html.EscapeString(p))
		}
		pieces[c.at] = fmt.Sprintf(`<span class="cli-cmd" data-client="%s" data-keys="%s"%s><span class="cli-prompt">%s&gt;</span> <span class="cli-input">%s</span></span>`,
			c.client, html.EscapeString(string(keys)), pattern, c.client, html.EscapeString(c.cmd))
	}
	var b strings.Builder
	b.WriteString(`<div class="cli" data-redis-cli><pre><code>`)
	b.WriteString(strings.Join(pieces, "\n"))
	b.WriteString("</code></pre></div>\n")
	return b.String(), nil
}

// HighlightCSS returns the style sheet for highlighted code: a light theme,
// and a dark one that applies when the reader prefers dark colours.
func HighlightCSS() (string, error) {
	f := chromahtml.New(chromahtml.WithClasses(true))
	var b strings.Builder
	if err := f.WriteCSS(&b, styles.Get("github")); err != nil {
		return "", fmt.Errorf("content: highlight css: %w", err)
	}
	// The dark theme does not style every token the light one does; reset
	// them first so no light colour survives on a dark background.
	b.WriteString("@media (prefers-color-scheme: dark) {\n.chroma [class] { color: inherit; background: none; font-weight: inherit; font-style: inherit; }\n")
	if err := f.WriteCSS(&b, styles.Get("github-dark")); err != nil {
		return "", fmt.Errorf("content: highlight css: %w", err)
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// BodyPart is a stretch of a lesson's rendered body and, when the stretch
// ends with a redis-cli block, that block's commands in order: the page
// puts a form after the block that runs each of them without JavaScript.
type BodyPart struct {
	HTML     template.HTML
	Commands []CLICommand
}

// CLICommand is one command of a redis-cli block: the client that sends
// it ("A" or "B") and the line, as the learner would type it.
type CLICommand struct {
	Client string
	Line   string
}

// cliEnd closes a block renderCLI writes, and cliCommand matches one of
// its commands; inside both, renderCLI escapes every '<', so neither can
// be matched by the text of a command, a reply or a note.
const cliEnd = "</code></pre></div>\n"

var cliCommand = regexp.MustCompile(`<span class="cli-cmd" data-client="([AB])" data-keys="[^"]*"(?: data-expect-pattern="[^"]*")?><span class="cli-prompt">[AB]&gt;</span> <span class="cli-input">([^<]*)</span></span>`)

// SplitCLI splits a lesson body rendered by this package after each of
// its redis-cli blocks, reading each block's commands back from the
// markup renderCLI wrote. The parts, joined, are the body unchanged.
func SplitCLI(body template.HTML) []BodyPart {
	const start = `<div class="cli" data-redis-cli>`
	var parts []BodyPart
	rest := string(body)
	for {
		i := strings.Index(rest, start)
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], cliEnd)
		if j < 0 {
			break
		}
		end := i + j + len(cliEnd)
		p := BodyPart{HTML: template.HTML(rest[:end])}
		for _, m := range cliCommand.FindAllStringSubmatch(rest[i:end], -1) {
			p.Commands = append(p.Commands, CLICommand{Client: m[1], Line: html.UnescapeString(m[2])})
		}
		parts = append(parts, p)
		rest = rest[end:]
	}
	if rest != "" {
		parts = append(parts, BodyPart{HTML: template.HTML(rest)})
	}
	return parts
}
