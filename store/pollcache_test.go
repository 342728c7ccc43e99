package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/locklab/locklab/workshop"
)

// TestDecodedPollsKeepTheirRevealTime: a poll decoded once is kept, but
// its reveal time is each caller's own.
func TestDecodedPollsKeepTheirRevealTime(t *testing.T) {
	want := workshop.Poll{ID: "cachedpoll", PollSpec: pollSpec(), OpenedAt: time.UnixMilli(1_700_000_000_000)}
	js, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, revealed := range []string{"1700000060000", "", "1700000090000", ""} {
		p, err := decodePoll(string(js), revealed)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != want.ID || p.Title != want.Title || len(p.Choices) != len(want.Choices) || !p.OpenedAt.Equal(want.OpenedAt) {
			t.Errorf("decoded %+v; want %+v", p, want)
		}
		switch {
		case revealed == "" && p.Revealed():
			t.Errorf("poll decoded without a reveal time is revealed at %v", p.RevealedAt)
		case revealed != "" && p.RevealedAt.UnixMilli() != mustAtoi(t, revealed):
			t.Errorf("poll revealed at %s decoded as revealed at %v", revealed, p.RevealedAt)
		}
	}
	if _, err := decodePoll("{not json", ""); err == nil {
		t.Error("decoding bad JSON succeeded; want an error")
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}
