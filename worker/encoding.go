package worker

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/locklab/locklab/playground"
)

// Encoding: what is inside a frame. Integers are varints, strings and lists
// are length-prefixed, and optional parts start with a presence byte. It is
// hand-written rather than gob because one round trip per command is on
// the playground's hot path, and gob's reflection doubled its cost. A
// request or response that does not decode is errFrame, as a bad frame is.

// Appending.

func putUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
func putInt(b []byte, v int64) []byte   { return binary.AppendVarint(b, v) }
func putString(b []byte, s string) []byte {
	return append(putUint(b, uint64(len(s))), s...)
}

func putBytes(b []byte, v []byte) []byte {
	return append(putUint(b, uint64(len(v))), v...)
}

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putStrings(b []byte, ss []string) []byte {
	b = putUint(b, uint64(len(ss)))
	for _, s := range ss {
		b = putString(b, s)
	}
	return b
}

func putStringMap(b []byte, m map[string]string) []byte {
	b = putUint(b, uint64(len(m)))
	for k, v := range m {
		b = putString(putString(b, k), v)
	}
	return b
}

func putFloatMap(b []byte, m map[string]float64) []byte {
	b = putUint(b, uint64(len(m)))
	for k, v := range m {
		b = binary.BigEndian.AppendUint64(putString(b, k), math.Float64bits(v))
	}
	return b
}

func putKeyDumps(b []byte, keys []playground.KeyDump) []byte {
	b = putUint(b, uint64(len(keys)))
	for _, d := range keys {
		b = putString(b, d.Key)
		b = putString(b, d.Type)
		b = putInt(b, d.PTTLMS)
		b = putString(b, d.String)
		b = putStringMap(b, d.Hash)
		b = putStrings(b, d.List)
		b = putStrings(b, d.Set)
		b = putFloatMap(b, d.ZSet)
	}
	return b
}

// Reading. A reader keeps the first error and returns zero values after
// it, so that decoders read straight through and check once.

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errFrame
	}
	r.b = nil
}

func (r *reader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length, which cannot be more than the bytes left.
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bool() bool { return r.byte() != 0 }

func (r *reader) string() string {
	n := r.count()
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// bytes reads a byte string, never nil, so that an empty one is told
// from none.
func (r *reader) bytes() []byte {
	n := r.count()
	v := make([]byte, n)
	copy(v, r.b[:n])
	r.b = r.b[n:]
	return v
}

func (r *reader) strings() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.string()
	}
	return ss
}

func (r *reader) stringMap() map[string]string {
	n := r.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.string()
		m[k] = r.string()
	}
	return m
}

func (r *reader) floatMap() map[string]float64 {
	n := r.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]float64, n)
	for range n {
		k := r.string()
		if len(r.b) < 8 {
			r.fail()
			return nil
		}
		m[k] = math.Float64frombits(binary.BigEndian.Uint64(r.b))
		r.b = r.b[8:]
	}
	return m
}

func (r *reader) keyDumps() []playground.KeyDump {
	n := r.count()
	if n == 0 {
		return nil
	}
	keys := make([]playground.KeyDump, n)
	for i := range keys {
		d := &keys[i]
		d.Key = r.string()
		d.Type = r.string()
		d.PTTLMS = r.int()
		d.String = r.string()
		d.Hash = r.stringMap()
		d.List = r.strings()
		d.Set = r.strings()
		d.ZSet = r.floatMap()
	}
	return keys
}

// Requests.

func (q *request) appendTo(b []byte) []byte {
	b = append(b, byte(q.Op))
	b = putUint(b, q.ID)
	b = putUint(b, q.Box)
	b = putInt(b, q.Now)
	switch q.Op {
	case opConfig:
		limits, _ := json.Marshal(q.Limits)
		b = putString(b, string(limits))
	case opOpen:
		b = putBool(b, q.Snap != nil)
		if q.Snap != nil {
			b = putInt(b, int64(q.Snap.Offset))
			b = putKeyDumps(b, q.Snap.Keys)
			b = putStrings(b, q.Snap.Scripts)
			b = putStrings(b, q.Snap.Libraries)
		}
	case opExec:
		b = putString(b, string(q.Client))
		b = putString(b, q.Line)
		b = putInt(b, q.Allow)
	case opAdvance:
		b = putInt(b, q.D)
	case opCancel:
		b = putUint(b, q.Target)
	case opLab:
		b = putBytes(b, q.Job)
	}
	return b
}

func decodeRequest(frame []byte) (*request, error) {
	r := &reader{b: frame}
	q := &request{Op: op(r.byte())}
	q.ID = r.uint()
	q.Box = r.uint()
	q.Now = r.int()
	switch q.Op {
	case opConfig:
		var l playground.Limits
		if err := json.Unmarshal([]byte(r.string()), &l); err != nil && r.err == nil {
			r.err = fmt.Errorf("limits: %w", err)
		}
		q.Limits = &l
	case opOpen:
		if r.bool() {
			q.Snap = &playground.Snapshot{}
			q.Snap.Offset = durationOf(r.int())
			q.Snap.Keys = r.keyDumps()
			q.Snap.Scripts = r.strings()
			q.Snap.Libraries = r.strings()
		}
	case opExec:
		q.Client = playground.Client(r.string())
		q.Line = r.string()
		q.Allow = r.int()
	case opAdvance:
		q.D = r.int()
	case opCancel:
		q.Target = r.uint()
	case opLab:
		q.Job = r.bytes()
	case opClose, opCompact:
	default:
		return nil, fmt.Errorf("request %d: %w", q.Op, errFrame)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	return q, r.err
}

// Responses.

const (
	hasResult = 1 << iota
	hasChanges
	hasExpired
	hasHello
	hasJob
)

func (p *response) appendTo(b []byte) []byte {
	var parts byte
	if r := &p.Result; r.Client != "" || r.Output != "" || r.ClockMS != 0 || r.Notice != "" || r.Clear || r.ScriptTime != 0 || r.RunTime != 0 || r.Stopped {
		parts |= hasResult
	}
	if p.Changes != nil {
		parts |= hasChanges
	}
	if p.Expired != nil {
		parts |= hasExpired
	}
	if p.Hello != "" || p.PID != 0 {
		parts |= hasHello
	}
	if p.Job != nil {
		parts |= hasJob
	}
	b = append(b, parts)
	b = putUint(b, p.ID)
	b = append(b, byte(p.ErrKind))
	b = putString(b, p.ErrMsg)
	b = putInt(b, p.Clock)
	b = putInt(b, p.Timeouts)
	b = putInt(b, p.Size)
	if parts&hasHello != 0 {
		b = putString(b, p.Hello)
		b = putInt(b, int64(p.PID))
	}
	if parts&hasResult != 0 {
		res := &p.Result
		b = putString(b, string(res.Client))
		b = putString(b, res.Output)
		b = putInt(b, res.ClockMS)
		b = putString(b, res.Notice)
		b = putBool(b, res.Clear)
		b = putInt(b, int64(res.ScriptTime))
		b = putInt(b, int64(res.RunTime))
		b = putBool(b, res.Stopped)
	}
	if parts&hasChanges != 0 {
		c := p.Changes
		b = putInt(b, c.ClockMS)
		b = putInt(b, int64(c.Offset))
		b = putBool(b, c.Reset)
		b = putKeyDumps(b, c.Keys)
		b = putStrings(b, c.Deleted)
		b = putBool(b, c.ScriptsChanged)
		b = putStrings(b, c.Scripts)
		b = putStrings(b, c.Libraries)
		b = putBool(b, c.OffsetChanged)
	}
	if parts&hasExpired != 0 {
		b = putStrings(b, p.Expired)
	}
	if parts&hasJob != 0 {
		b = putBytes(b, p.Job)
	}
	return b
}

func decodeResponse(frame []byte) (*response, error) {
	r := &reader{b: frame}
	p := &response{}
	parts := r.byte()
	p.ID = r.uint()
	p.ErrKind = errKind(r.byte())
	p.ErrMsg = r.string()
	p.Clock = r.int()
	p.Timeouts = r.int()
	p.Size = r.int()
	if parts&hasHello != 0 {
		p.Hello = r.string()
		p.PID = int(r.int())
	}
	if parts&hasResult != 0 {
		res := &p.Result
		res.Client = playground.Client(r.string())
		res.Output = r.string()
		res.ClockMS = r.int()
		res.Notice = r.string()
		res.Clear = r.bool()
		res.ScriptTime = durationOf(r.int())
		res.RunTime = durationOf(r.int())
		res.Stopped = r.bool()
	}
	if parts&hasChanges != 0 {
		c := &playground.Changes{}
		c.ClockMS = r.int()
		c.Offset = durationOf(r.int())
		c.Reset = r.bool()
		c.Keys = r.keyDumps()
		c.Deleted = r.strings()
		c.ScriptsChanged = r.bool()
		c.Scripts = r.strings()
		c.Libraries = r.strings()
		c.OffsetChanged = r.bool()
		p.Changes = c
	}
	if parts&hasExpired != 0 {
		p.Expired = r.strings()
		if p.Expired == nil {
			p.Expired = []string{}
		}
	}
	if parts&hasJob != 0 {
		p.Job = r.bytes()
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	return p, r.err
}

func durationOf(ns int64) time.Duration { return time.Duration(ns) }
