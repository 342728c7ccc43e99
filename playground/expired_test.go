package playground

import (
	"slices"
	"testing"
	"time"
)

func TestExpired(t *testing.T) {
	lock := KeyInfo{Key: "lock:invoice:7", Type: "string", PTTLMS: 25000}
	later := KeyInfo{Key: "lock:report", Type: "string", PTTLMS: 45000}
	forever := KeyInfo{Key: "counter", Type: "string", PTTLMS: -1}
	for _, tt := range []struct {
		name          string
		before, after []KeyInfo
		d, slack      time.Duration
		want          []string
	}{
		{"due and gone", []KeyInfo{forever, lock, later}, []KeyInfo{forever, later}, 30 * time.Second, 0, []string{"lock:invoice:7"}},
		{"not due yet", []KeyInfo{lock}, []KeyInfo{lock}, 10 * time.Second, 0, nil},
		{"due within the slack", []KeyInfo{lock}, nil, 24990 * time.Millisecond, 20 * time.Millisecond, []string{"lock:invoice:7"}},
		{"gone but not due: deleted, not expired", []KeyInfo{later}, nil, 30 * time.Second, 0, nil},
		{"no TTL never expires", []KeyInfo{forever}, nil, 24 * time.Hour, 0, nil},
		{"several in listing order", []KeyInfo{lock, later}, nil, time.Minute, 0, []string{"lock:invoice:7", "lock:report"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Expired(tt.before, tt.after, tt.d, tt.slack); !slices.Equal(got, tt.want) {
				t.Errorf("Expired(...) = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestExpiredOnSandbox lists a sandbox's keys around a real Advance.
func TestExpiredOnSandbox(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sb, err := NewSandbox(SandboxOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for _, line := range []string{"SET lock:invoice:7 3f9a1c NX PX 30000", "SET lock:report r PX 60000", "SET counter 1"} {
		if _, err := sb.Exec(t.Context(), ClientA, line); err != nil {
			t.Fatalf("Exec(%q): %v", line, err)
		}
	}
	before, _ := sb.Keys()
	if _, err := sb.Advance(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	after, _ := sb.Keys()
	if got, want := Expired(before, after, 30*time.Second, 0), []string{"lock:invoice:7"}; !slices.Equal(got, want) {
		t.Errorf("after +30 s: Expired = %q; want %q", got, want)
	}
}
