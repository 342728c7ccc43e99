package web

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/web/views"
)

// assertSameAnswer fails unless appendExecAnswer writes res as the JSON
// encoding/json makes of it: the same members with the same values, and
// a newline.
func assertSameAnswer(t *testing.T, res playground.Result, keysHTML []byte, nodesHTML ...[]byte) {
	t.Helper()
	var nodes []byte
	if len(nodesHTML) > 0 {
		nodes = nodesHTML[0]
	}
	got := appendExecAnswer(nil, res, keysHTML, nodes)
	if !bytes.HasSuffix(got, []byte("}\n")) {
		t.Fatalf("appendExecAnswer(%+v) = %q; want an object and a newline", res, got)
	}
	a := execAnswer{Result: res}
	if keysHTML != nil {
		rows := string(keysHTML)
		a.KeysHTML = &rows
	}
	if nodes != nil {
		items := string(nodes)
		a.NodesHTML = &items
	}
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var gotV, wantV map[string]any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatalf("appendExecAnswer(%+v) = %q: not JSON: %v", res, got, err)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("appendExecAnswer(%+v) = %s; encoding/json writes %s", res, got, want)
	}
}

func TestExecAnswerIsWhatEncodingJSONWrites(t *testing.T) {
	for _, res := range []playground.Result{
		{Client: playground.ClientA, Output: "OK", ClockMS: 1796182837069},
		{Client: playground.ClientB, Output: "(nil)"},
		{Client: playground.ClientA, Output: "", ClockMS: -1},
		{Client: playground.ClientA, Output: "1) \"lock:a\"\n2) \"<b>&amp;</b>\"", Notice: "Your sandbox was reset.", Clear: true},
		{Client: playground.ClientA, Output: "\"\\x00\x00\x01\x1f\t\r\u2028\u2029é😀", Notice: "\x7f"},
		{Client: playground.ClientA, Output: "bad \xff\xfe utf-8 \xe2\x82", ClockMS: 42},
		{Client: playground.ClientA, Output: strings.Repeat("x", 70_000)},
	} {
		assertSameAnswer(t, res, nil)
		assertSameAnswer(t, res, []byte{})
		assertSameAnswer(t, res, []byte(`<tr data-pttl-ms="30000"><td>lock:invoice:7</td><td>string</td><td>&#34;3f9a1c&#34;</td><td>30 s</td></tr>`))
		assertSameAnswer(t, res, []byte("<tr></tr>"), []byte(`<li class="pg-node-item pg-node-stopped"><span class="pg-node">@3</span> stopped</li>`))
	}
}

// TestExecAnswerHasEveryMember fills every member of playground.Result
// that JSON shows: a member added to Result must be added to
// appendExecAnswer too, or the answer would silently lack it.
func TestExecAnswerHasEveryMember(t *testing.T) {
	var res playground.Result
	v := reflect.ValueOf(&res).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if v.Type().Field(i).Tag.Get("json") == "-" {
			continue // not sent; Keys comes as keys_html
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		default:
			t.Fatalf("playground.Result.%s is a %v, which appendExecAnswer does not know", v.Type().Field(i).Name, f.Kind())
		}
	}
	assertSameAnswer(t, res, []byte("<tr></tr>"))
}

func FuzzExecAnswer(f *testing.F) {
	f.Add("A", "OK", "", int64(1796182837069), false, "", true)
	f.Add("B", "\xff<\u2028>&\"\\", "notice\x00", int64(-5), true, "<tr>\xff</tr>", true)
	f.Add("A", "PONG", "", int64(1), false, "", false)
	f.Fuzz(func(t *testing.T, client, output, notice string, clock int64, clear bool, keysHTML string, listed bool) {
		var rows []byte
		if listed {
			rows = []byte(keysHTML)
		}
		assertSameAnswer(t, playground.Result{Client: playground.Client(client), Output: output, Notice: notice, ClockMS: clock, Clear: clear}, rows, rows)
	})
}

func BenchmarkExecAnswer(b *testing.B) {
	res := playground.Result{Client: playground.ClientA, Output: "OK", ClockMS: 1796182837069}
	rows := `<tr data-pttl-ms="30000"><td>lock:invoice:7</td><td>string</td><td>&#34;3f9a1c&#34;</td><td>30 s</td></tr>`
	b.Run("appendExecAnswer", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf = appendExecAnswer(buf[:0], res, []byte(rows), nil)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			_ = json.NewEncoder(&buf).Encode(execAnswer{Result: res, KeysHTML: &rows})
		}
	})
}

// assertSameRows fails unless appendKeyRows writes what the template
// views.PGKeyRows renders for keys.
func assertSameRows(t *testing.T, keys []playground.KeyInfo) {
	t.Helper()
	var want bytes.Buffer
	if err := views.PGKeyRows(pgKeys(keys)).Render(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	if got := appendKeyRows(nil, keys); string(got) != want.String() {
		t.Fatalf("appendKeyRows(%+v) =\n%q\nthe template renders\n%q", keys, got, want.String())
	}
}

func TestKeyRowsAreWhatTheTemplateRenders(t *testing.T) {
	for _, keys := range [][]playground.KeyInfo{
		nil,
		{{Key: "lock:invoice:7", Type: "string", Value: `"3f9a1c"`, PTTLMS: 29999}},
		{
			{Key: `<b>&'"</b>`, Type: "hash", Value: `{"f": "<v>"}`, PTTLMS: -1},
			{Key: "bad \xff utf-8 é😀", Type: "zset", Value: `{"a": 1.5}`, PTTLMS: 0},
			{Key: "long", Type: "list", Value: strings.Repeat("x", 60), PTTLMS: 86_400_000},
		},
		{
			{Key: "lock", Type: "string", Value: `"a"`, PTTLMS: 100, Node: 1},
			{Key: "lock", Type: "string", Value: `"b"`, PTTLMS: 200, Node: 3},
			{Key: "<k>", Type: "set", Value: `{"x"}`, PTTLMS: -1, Node: 5},
		},
	} {
		assertSameRows(t, keys)
	}
}

func FuzzKeyRows(f *testing.F) {
	f.Add("lock:invoice:7", "string", `"3f9a1c"`, int64(30000))
	f.Add(`<&'">`, "hash", "\xff\x00", int64(-1))
	f.Fuzz(func(t *testing.T, key, typ, value string, pttl int64) {
		node := int(uint64(pttl) % 6)
		assertSameRows(t, []playground.KeyInfo{{Key: key, Type: typ, Value: value, PTTLMS: pttl, Node: node}, {Key: value, Type: typ, Value: key, PTTLMS: -1}})
	})
}
