package web

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/playground"
)

// The exec API's answer is the JSON the site writes most often, one per
// line a learner runs. It is built here rather than by encoding/json,
// whose reflection costs seven times as much for so small an object: the
// same members, in the same order, with the same values.

// execAnswer is the exec API's answer: the line's result and the key
// inspector's rows after it, rendered as the page renders them, so that a
// typed line costs the page one request.
type execAnswer struct {
	playground.Result
	// KeysHTML is nil when the sandbox could not list its keys: the page
	// keeps the rows it has.
	KeysHTML *string `json:"keys_html,omitempty"`
	// NodesHTML, when the line may have changed the nodes, is the node
	// panel's items after it.
	NodesHTML *string `json:"nodes_html,omitempty"`
}

// writeExecAnswer writes res, with the inspector's rows keysHTML (none
// when nil), as the exec API's answer.
func writeExecAnswer(c echo.Context, res playground.Result, keysHTML, nodesHTML []byte) error {
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer putPageBuffer(buf)
	buf.Reset()
	return c.JSONBlob(http.StatusOK, appendExecAnswer(buf.AvailableBuffer(), res, keysHTML, nodesHTML))
}

// appendExecAnswer appends the JSON object encoding/json makes of the
// execAnswer of res and keysHTML, and a newline, as encoding/json's
// Encoder ends a value. Strings are quoted as encoding/json/v2 quotes
// them: only what JSON requires is escaped (not <, > and &, which matter
// only inside HTML, and an answer is application/json), and invalid UTF-8
// becomes U+FFFD, as encoding/json makes it.
func appendExecAnswer(dst []byte, res playground.Result, keysHTML, nodesHTML []byte) []byte {
	dst = append(dst, `{"client":`...)
	dst = appendJSONString(dst, string(res.Client))
	dst = append(dst, `,"output":`...)
	dst = appendJSONString(dst, res.Output)
	dst = append(dst, `,"clock_ms":`...)
	dst = strconv.AppendInt(dst, res.ClockMS, 10)
	if res.Notice != "" {
		dst = append(dst, `,"notice":`...)
		dst = appendJSONString(dst, res.Notice)
	}
	if res.Clear {
		dst = append(dst, `,"clear":true`...)
	}
	if keysHTML != nil {
		dst = append(dst, `,"keys_html":`...)
		dst, _ = jsontext.AppendQuote(dst, keysHTML)
	}
	if nodesHTML != nil {
		dst = append(dst, `,"nodes_html":`...)
		dst, _ = jsontext.AppendQuote(dst, nodesHTML)
	}
	return append(dst, "}\n"...)
}

// appendKeyRows appends the key inspector's rows of keys exactly as
// views.PGKeyRows renders them (TestKeyRowsAreWhatTheTemplateRenders and
// FuzzKeyRows compare the two byte for byte): the template is what the
// rows are, and this is how the exec API writes them after every line,
// where templ's rendering, a formatted string per cell, cost as much as
// the rest of the answer.
func appendKeyRows(dst []byte, keys []playground.KeyInfo) []byte {
	for _, k := range keys {
		dst = append(dst, `<tr data-pttl-ms="`...)
		dst = strconv.AppendInt(dst, k.PTTLMS, 10)
		dst = append(dst, `"><td>`...)
		if k.Node > 1 {
			dst = append(dst, `<span class="pg-node">@`...)
			dst = strconv.AppendInt(dst, int64(k.Node), 10)
			dst = append(dst, `</span> `...)
		}
		dst = appendEscapedHTML(dst, k.Key)
		dst = append(dst, `</td><td>`...)
		dst = appendEscapedHTML(dst, k.Type)
		dst = append(dst, `</td><td>`...)
		dst = appendEscapedHTML(dst, k.Value)
		dst = append(dst, `</td><td>`...)
		dst = appendEscapedHTML(dst, ttlText(k.PTTLMS))
		dst = append(dst, `</td></tr>`...)
	}
	return dst
}

// appendEscapedHTML appends s escaped as html.EscapeString, which templ
// uses, escapes it.
func appendEscapedHTML(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&#34;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}

// appendJSONString appends s as a JSON string. The error AppendQuote
// returns says only that invalid UTF-8 was replaced, which is meant.
func appendJSONString(dst []byte, s string) []byte {
	dst, _ = jsontext.AppendQuote(dst, s)
	return dst
}
