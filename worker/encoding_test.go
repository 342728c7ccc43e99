package worker

import (
	"fmt"
	"reflect"
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
		Scripts:   []string{"return 1", "return redis.call('GET', KEYS[1])"},
		Libraries: []string{"#!lua name=lib\nredis.register_function('f', function() return 1 end)"},
	}
	testRequests = []request{
		{Op: opConfig, Limits: &playground.Limits{MaxKeys: 7, Script: luaredis.Limits{Timeout: time.Second, MaxPatternSteps: 1e8}}},
		{Op: opOpen, Box: 3, Now: 1772366400000000000},
		{Op: opOpen, Box: 3, Now: -1, Snap: &testSnapshot},
		{Op: opExec, ID: 1 << 40, Box: 1, Now: 42, Client: "B", Line: "EVAL \"return 'é'\" 0\x00", Allow: 4 << 20},
		{Op: opAdvance, ID: 2, Box: 1, D: int64(24 * time.Hour)},
		{Op: opAdvance, ID: 3, Box: 1, D: int64(time.Second)},
		{Op: opCompact, Box: 1},
		{Op: opClose, Box: 1},
		{Op: opCancel, Target: 99},
		{Op: opLab, ID: 4, Job: []byte(`{"request":{"recipe":{"acquire":["SET {key} {token} NX PX {ttl}"]}},"budget":{}}`)},
		{Op: opLab, ID: 5, Job: []byte{}},
	}
	testResponses = []response{
		{Hello: helloMagic, PID: 1234},
		{ID: 1, Result: playground.Result{Client: "A", Output: "OK", ClockMS: 1772366400000}, Timeouts: 3, Size: 60_123},
		{ID: 2, Result: playground.Result{Client: "B", Output: "(error) ERR no", Notice: "reset", Clear: true, ScriptTime: 1500 * time.Millisecond, RunTime: 1600 * time.Millisecond}, ErrKind: errLimit, ErrMsg: "ERR no"},
		{ID: 10, Result: playground.Result{Client: "A", Output: "(error) ERR the playground stopped the script", Stopped: true}},
		{ID: 3, Changes: &playground.Changes{ClockMS: 7, Offset: time.Second, Reset: true, Keys: testSnapshot.Keys,
			Deleted: []string{"gone"}, ScriptsChanged: true, Scripts: testSnapshot.Scripts, Libraries: testSnapshot.Libraries, OffsetChanged: true}},
		{ID: 4, Clock: 7, Expired: []string{"lock:invoice:7", "k"}},
		{ID: 5, Expired: []string{}},
		{ID: 6, Clock: 1772366400000000000},
		{ID: 7, Job: []byte(`{"schedules":256}`)},
		{ID: 8, ErrKind: errLabBadRecipe, ErrMsg: "acquire line 1: blank", Job: []byte(`{"part":"acquire","line":1}`)},
		{ID: 9, ErrKind: errLabBudget, ErrMsg: "check: budget spent"},
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
