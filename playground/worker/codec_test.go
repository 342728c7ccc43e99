package worker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

var (
	testSnapshot = playground.Snapshot{
		Offset: 5 * time.Second,
		Keys: []playground.KeyDump{
			{Key: "s", Type: "string", PTTLMS: 30000, String: "v\x00\xff"},
			{Key: "h", Type: "hash", PTTLMS: -1, Hash: map[string]string{"f": "v", "": "empty"}},
			{Key: "l", Type: "list", PTTLMS: -1, List: []string{"b", "a", "b"}},
			{Key: "set", Type: "set", PTTLMS: -1, Set: []string{"x", "y"}},
			{Key: "z", Type: "zset", PTTLMS: 1, ZSet: map[string]float64{"m": 1.5, "n": -2e300}},
		},
		Scripts: []string{"return 1", "return redis.call('GET', KEYS[1])"},
	}
	testRequests = []request{
		{Op: opConfig, Limits: &playground.Limits{MaxKeys: 7, Script: luaredis.Limits{Timeout: time.Second, MaxPatternSteps: 1e8}}},
		{Op: opOpen, Box: 3, Now: 1772366400000000000},
		{Op: opOpen, Box: 3, Now: -1, Snap: &testSnapshot},
		{Op: opExec, ID: 1 << 40, Box: 1, Now: 42, Client: "B", Line: "EVAL \"return 'é'\" 0\x00", Allow: 4 << 20},
		{Op: opAdvance, ID: 2, Box: 1, D: int64(24 * time.Hour)},
		{Op: opKeys, ID: 3, Box: 1},
		{Op: opCompact, Box: 1},
		{Op: opClose, Box: 1},
		{Op: opCancel, Target: 99},
	}
	testResponses = []response{
		{Hello: helloMagic, PID: 1234},
		{ID: 1, Result: playground.Result{Client: "A", Output: "OK", ClockMS: 1772366400000}, Timeouts: 3, Size: 60_123},
		{ID: 2, Result: playground.Result{Client: "B", Output: "(error) ERR no", Notice: "reset", Clear: true, ScriptTime: 1500 * time.Millisecond, RunTime: 1600 * time.Millisecond}, ErrKind: errLimit, ErrMsg: "ERR no"},
		{ID: 3, Changes: &playground.Changes{ClockMS: 7, Offset: time.Second, Reset: true, Keys: testSnapshot.Keys,
			Deleted: []string{"gone"}, ScriptsChanged: true, Scripts: testSnapshot.Scripts, OffsetChanged: true}},
		{ID: 4, Keys: []playground.KeyInfo{{Key: "k", Type: "string", Value: `"v"`, PTTLMS: -1}}},
		{ID: 5, Keys: []playground.KeyInfo{}},
		{ID: 6, Clock: 1772366400000000000},
	}
)

// TestFramesRoundTrip encodes requests and responses with every field
// set and decodes them back.
func TestFramesRoundTrip(t *testing.T) {
	for _, q := range testRequests {
		got, err := decodeRequest(q.appendTo(nil))
		if err != nil || !reflect.DeepEqual(*got, q) {
			t.Errorf("request %+v came back as %+v, %v", q, got, err)
		}
	}
	for _, p := range testResponses {
		got, err := decodeResponse(p.appendTo(nil))
		if err != nil || !reflect.DeepEqual(*got, p) {
			t.Errorf("response %+v came back as %+v, %v", p, got, err)
		}
	}
}

// TestBatchWriter sends frames from many goroutines, now and then one
// larger than the buffer the writer keeps, to a slow writer, and reads
// them all back whole. A writer that went on appending to the buffer it
// was writing from corrupted frames once.
func TestBatchWriter(t *testing.T) {
	var out slowWriter
	w := &batchWriter{w: &out}
	const goroutines, frames = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range frames {
				resp := &response{ID: uint64(g*frames + i + 1), Result: playground.Result{Output: fmt.Sprint(i)}}
				if i%50 == 7 {
					resp.Result.Output = strings.Repeat("x", 1<<20+i)
				}
				if err := w.send(resp.appendTo); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	in := &frameReader{r: bufio.NewReader(&out.buf)}
	seen := map[uint64]bool{}
	for {
		frame, err := in.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := decodeResponse(frame)
		if err != nil {
			t.Fatalf("frame %d: %v", len(seen), err)
		}
		seen[resp.ID] = true
	}
	if len(seen) != goroutines*frames {
		t.Errorf("%d distinct frames read; want %d", len(seen), goroutines*frames)
	}
}

// slowWriter keeps what is written, taking its time, as a pipe to a busy
// reader does.
type slowWriter struct{ buf bytes.Buffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(100 * time.Microsecond)
	return w.buf.Write(bytes.Clone(p))
}

// TestBatchWriterAfterLargeFrame is the case that corrupted frames, step
// by step: after a frame too large to keep the buffer of, a write went
// out from the buffer that the next frames were appended to.
func TestBatchWriterAfterLargeFrame(t *testing.T) {
	gate := &gatedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	w := &batchWriter{w: gate}
	frame := func(id uint64, size int) func([]byte) []byte {
		return (&response{ID: id, Result: playground.Result{Output: strings.Repeat("x", size)}}).appendTo
	}
	w.send(frame(1, 10))
	w.send(frame(2, 2<<20))
	gate.block = true
	done := make(chan struct{})
	go func() {
		w.send(frame(3, 10)) // writes, and blocks in the gate
		close(done)
	}()
	<-gate.entered
	w.send(frame(4, 10)) // appended while 3 is being written
	close(gate.release)
	<-done
	in := &frameReader{r: bufio.NewReader(&gate.buf)}
	for want := uint64(1); want <= 4; want++ {
		frame, err := in.read()
		if err != nil {
			t.Fatalf("frame %d: %v", want, err)
		}
		if resp, err := decodeResponse(frame); err != nil || resp.ID != want {
			t.Fatalf("frame %d decodes as %+v, %v", want, resp, err)
		}
	}
}

// gatedWriter keeps what is written; once block is set, a write waits
// for release, and keeps the bytes as they are when released.
type gatedWriter struct {
	buf     bytes.Buffer
	block   bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if w.block {
		w.once.Do(func() { close(w.entered) })
		<-w.release
	}
	return w.buf.Write(p)
}

// FuzzFrames decodes arbitrary frames: no input may panic, and what
// decodes encodes back to itself.
func FuzzFrames(f *testing.F) {
	for _, q := range testRequests {
		f.Add(q.appendTo(nil), false)
	}
	for _, p := range testResponses {
		f.Add(p.appendTo(nil), true)
	}
	f.Fuzz(func(t *testing.T, frame []byte, isResponse bool) {
		if isResponse {
			p, err := decodeResponse(frame)
			if err != nil {
				return
			}
			again, err := decodeResponse(p.appendTo(nil))
			if err != nil || show(again) != show(p) {
				t.Fatalf("response %+v re-decoded as %+v, %v", p, again, err)
			}
			return
		}
		q, err := decodeRequest(frame)
		if err != nil {
			return
		}
		if _, err := decodeRequest(q.appendTo(nil)); err != nil {
			t.Fatalf("request %+v does not re-decode: %v", q, err)
		}
	})
}

// show prints a response for comparing: NaN scores print alike (they do
// not compare equal), and maps print sorted.
func show(p *response) string {
	c := *p
	changes := ""
	if c.Changes != nil {
		changes = fmt.Sprintf("%+v", *c.Changes)
		c.Changes = nil
	}
	return fmt.Sprintf("%+v %s", c, changes)
}

// TestFrameLimits: a frame header over the limit or a short frame is an
// error, not an allocation or a hang.
func TestFrameLimits(t *testing.T) {
	for _, input := range [][]byte{
		{0xff, 0xff, 0xff, 0xff},
		{0, 0, 0, 10, 1, 2},
		{0, 0},
	} {
		in := &frameReader{r: bufio.NewReader(bytes.NewReader(input))}
		if _, err := in.read(); err == nil {
			t.Errorf("read(% x) succeeded; want an error", input)
		}
	}
}
