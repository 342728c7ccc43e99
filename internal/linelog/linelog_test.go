package linelog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSameBytesAsSlog writes each record through this handler and
// through slog's, and wants the same bytes, for the records it encodes
// itself and those it hands to slog.
func TestSameBytesAsSlog(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 32, 30, 123456789, time.UTC)
	round := time.Date(2026, 12, 1, 12, 32, 30, 0, time.FixedZone("CET", 3600))
	for _, tt := range []struct {
		name  string
		t     time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
	}{
		{"request", at, slog.LevelInfo, "request", []slog.Attr{
			slog.String("method", "GET"), slog.String("uri", "/topics/distributed-locks?x=1&y=%20"),
			slog.Int("status", 200), slog.Duration("latency", 1234567*time.Nanosecond),
			slog.Int64("bytes", 38370), slog.String("remote_ip", "127.0.0.1"),
		}},
		{"whole second, other zone", round, slog.LevelError, "request", []slog.Attr{slog.Int("status", 500)}},
		{"no attrs", at, slog.LevelWarn, "hello", nil},
		{"custom level", at, slog.LevelInfo + 2, "m", []slog.Attr{slog.Int64("n", -5)}},
		{"space in value", at, slog.LevelInfo, "request", []slog.Attr{slog.String("error", "read tcp: reset by peer")}},
		{"equals in value", at, slog.LevelInfo, "request", []slog.Attr{slog.String("uri", "/race?a=b")}},
		{"quote", at, slog.LevelInfo, "request", []slog.Attr{slog.String("uri", `/a"b`)}},
		{"backslash", at, slog.LevelInfo, "request", []slog.Attr{slog.String("uri", `/a\b`)}},
		{"newline", at, slog.LevelInfo, "request", []slog.Attr{slog.String("error", "a\nb")}},
		{"non-ASCII", at, slog.LevelInfo, "request", []slog.Attr{slog.String("uri", "/é")}},
		{"empty value", at, slog.LevelInfo, "request", []slog.Attr{slog.String("uri", "")}},
		{"message with space", at, slog.LevelInfo, "request failed", []slog.Attr{slog.String("a", "b")}},
		{"error value", at, slog.LevelError, "x", []slog.Attr{slog.Any("error", errors.New("boom"))}},
		{"bool", at, slog.LevelInfo, "x", []slog.Attr{slog.Bool("ok", true)}},
		{"float", at, slog.LevelInfo, "x", []slog.Attr{slog.Float64("f", 1.5)}},
		{"group", at, slog.LevelInfo, "x", []slog.Attr{slog.Group("g", slog.Int("a", 1))}},
		{"time attr", at, slog.LevelInfo, "x", []slog.Attr{slog.Time("when", at)}},
		{"zero time", time.Time{}, slog.LevelInfo, "x", []slog.Attr{slog.Int("a", 1)}},
		{"long duration", at, slog.LevelInfo, "x", []slog.Attr{slog.Duration("d", 90*time.Minute+time.Millisecond)}},
	} {
		for _, format := range []string{"json", "text"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				var ours, theirs bytes.Buffer
				var h, want slog.Handler
				if format == "json" {
					h, want = NewJSON(&ours, nil), slog.NewJSONHandler(&theirs, nil)
				} else {
					h, want = NewText(&ours, nil), slog.NewTextHandler(&theirs, nil)
				}
				for _, hh := range []slog.Handler{h, want} {
					r := slog.NewRecord(tt.t, tt.level, tt.msg, 0)
					r.AddAttrs(tt.attrs...)
					if err := hh.Handle(context.Background(), r); err != nil {
						t.Fatal(err)
					}
				}
				if ours.String() != theirs.String() {
					t.Errorf("wrote\n%q\nwant (slog's)\n%q", ours.String(), theirs.String())
				}
				// LogAttrs writes the same line as Handle.
				ours.Reset()
				if err := h.(*Handler).LogAttrs(context.Background(), tt.t, tt.level, tt.msg, tt.attrs...); err != nil {
					t.Fatal(err)
				}
				if ours.String() != theirs.String() {
					t.Errorf("LogAttrs wrote\n%q\nwant (slog's)\n%q", ours.String(), theirs.String())
				}
			})
		}
	}
}

// TestOptionsGoToSlog: with AddSource or ReplaceAttr every record is
// slog's, so that what they do is applied.
func TestOptionsGoToSlog(t *testing.T) {
	var ours bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	logger := slog.New(NewJSON(&ours, opts))
	logger.Info("request", "status", 200)
	if want := `{"level":"INFO","msg":"request","status":200}` + "\n"; ours.String() != want {
		t.Errorf("wrote %q; want %q", ours.String(), want)
	}
}

// TestLevelAndWithAttrs: a record below the level is not written, and a
// logger with attributes writes them (through slog).
func TestLevelAndWithAttrs(t *testing.T) {
	var ours bytes.Buffer
	logger := slog.New(NewText(&ours, &slog.HandlerOptions{Level: slog.LevelWarn}))
	logger.Info("quiet")
	if ours.Len() != 0 {
		t.Errorf("an info record below the warn level wrote %q", ours.String())
	}
	ours.Reset()
	logger.With("who", "me").Warn("loud")
	if got := ours.String(); !bytes.Contains([]byte(got), []byte("level=WARN msg=loud who=me\n")) {
		t.Errorf("wrote %q; want the warn line with who=me", got)
	}
}

func BenchmarkHandle(b *testing.B) {
	var sink discard
	for _, bb := range []struct {
		name string
		h    slog.Handler
	}{{"linelog", NewJSON(&sink, nil)}, {"slog", slog.NewJSONHandler(&sink, nil)}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
				r.AddAttrs(slog.String("method", "GET"), slog.String("uri", "/topics/distributed-locks"),
					slog.Int("status", 200), slog.Duration("latency", 12345), slog.Int64("bytes", 38370),
					slog.String("remote_ip", "127.0.0.1"))
				_ = bb.h.Handle(context.Background(), r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestTimesAsSlogWritesThem: the kept second gives the bytes that
// AppendFormat gives, and slog's millisecond form, for times across
// years, zones, seconds shared with the line before and a zone's change.
func TestTimesAsSlogWritesThem(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600) // no zone database here
	}
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("IST", 5*3600+1800), time.FixedZone("odd", -(3*3600 + 25*60 + 7)), ny}
	// slog's text handler: AppendFormat, then the fourth digit dropped.
	slogMillis := func(t time.Time) string {
		t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
		b := t.AppendFormat(nil, time.RFC3339Nano)
		const prefixLen = len("2006-01-02T15:04:05.000")
		return string(append(b[:prefixLen], b[prefixLen+1:]...))
	}
	var times []time.Time
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		sec := rng.Int64N(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix()-time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) + time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		ns := []int64{0, 1, 100, 1_000_000, 999_999_999, 120_000_000, rng.Int64N(1e9)}[rng.IntN(7)]
		z := rng.IntN(len(zones))
		at := time.Unix(sec, ns).In(zones[z])
		// The same second again, a moment later, and in another zone.
		times = append(times, at, at.Add(time.Duration(rng.Int64N(1e9))), at, at.In(zones[(z+1)%len(zones)]))
	}
	// Around New York's change to summer time, a second at a time.
	change := time.Date(2026, 3, 8, 6, 59, 58, 500_000_000, time.UTC)
	for i := range 4 {
		times = append(times, change.Add(time.Duration(i)*time.Second).In(ny))
	}
	for _, at := range times {
		if got, want := string(appendRFC3339Nano(nil, at)), at.Format(time.RFC3339Nano); got != want {
			t.Fatalf("appendRFC3339Nano(%v) = %s; want %s", at, got, want)
		}
		if got, want := string(appendRFC3339Millis([]byte("x"), at)), "x"+slogMillis(at); got != want {
			t.Fatalf("appendRFC3339Millis(%v) = %s; want %s", at, got, want)
		}
	}
}
