package main

import (
	"io"
	"log/slog"
	"testing"
)

func TestRaisedFiles(t *testing.T) {
	for _, tt := range []struct {
		name       string
		soft, hard uint64
		want       uint64
		raise      bool
	}{
		{"soft below hard", 1024, 524288, 524288, true},
		{"soft at hard", 1024, 1024, 1024, false},
		{"a container's", 1048576, 1048576, 1048576, false},
		{"an infinite hard limit", 1024, rlimInfinity, infiniteFiles, true},
		{"an infinite hard limit, soft above the fallback", 2 << 20, rlimInfinity, 2 << 20, false},
		{"soft above hard (never lowered)", 4096, 1024, 4096, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, raise := raisedFiles(tt.soft, tt.hard)
			if got != tt.want || raise != tt.raise {
				t.Errorf("raisedFiles(%d, %d) = %d, %v; want %d, %v", tt.soft, tt.hard, got, raise, tt.want, tt.raise)
			}
		})
	}
}

func TestConnRoom(t *testing.T) {
	for _, tt := range []struct {
		files uint64
		want  int
	}{
		{0, 0},             // unknown: no ceiling
		{rlimInfinity, 0},  // no limit
		{100, 50},          // fewer than twice the reserve: half
		{256, 192},         // the reserve's floor of 64
		{1024, 896},        // an eighth in reserve
		{1048576, 917504},  // a container's limit
		{1 << 40, 1 << 30}, // held to what an int counts on any platform
	} {
		if got := connRoom(tt.files); got != tt.want {
			t.Errorf("connRoom(%d) = %d; want %d", tt.files, got, tt.want)
		}
	}
}

func TestStreamCapsHeldToTheRoom(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cc := connConfig{streamsPerLearner: 4, streamsPerAddress: 32, streams: 1000}
	for _, tt := range []struct {
		room, want int
	}{
		{0, 1000},      // no ceiling known
		{917504, 1000}, // plenty of descriptors
		{896, 448},     // 1,024 descriptors: half the connections at most
		{1, 1},
	} {
		if got := cc.streamCaps(tt.room, logger); got.Total != tt.want || got.PerLearner != 4 || got.PerAddress != 32 {
			t.Errorf("streamCaps(room %d) = %+v; want Total %d, PerLearner 4, PerAddress 32", tt.room, got, tt.want)
		}
	}
}
