package playground

import (
	"context"
	"fmt"
	"testing"
)

// TestRawStringNotesHaveACeiling: keys changed in place and then expired
// leave no more notes behind than a sandbox may have keys.
func TestRawStringNotesHaveACeiling(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{MaxKeys: 20})
	for i := range 200 {
		k := fmt.Sprintf("k%d", i)
		for _, line := range []string{"SET " + k + " x PX 1", "SETRANGE " + k + " 0 y"} {
			if res, err := s.Exec(context.Background(), ClientA, line); err != nil {
				t.Fatalf("%s: %v %q", line, err, res.Output)
			}
		}
		clock.Add(2e6) // 2 ms: the key expires
	}
	if n := len(s.rawStrings); n > 20 {
		t.Errorf("%d raw-string notes after 200 expired keys; want at most MaxKeys (20)", n)
	}
	runSteps(t, s, []step{
		{ClientA, "SETRANGE k 0 x", "(integer) 1"},
		{ClientA, "OBJECT ENCODING k", `"raw"`},
		{ClientA, "SET k 5", "OK"},
		{ClientA, "OBJECT ENCODING k", `"int"`},
	})
}

// TestHashOrdersHaveACeiling: hashes made and expired leave no more noted
// orders than a sandbox may have keys, and what the orders hold is counted
// with the sandbox's data, and given back when they go.
func TestHashOrdersHaveACeiling(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{MaxKeys: 20})
	for i := range 200 {
		k := fmt.Sprintf("h%d", i)
		for _, line := range []string{"HSET " + k + " f v", "PEXPIRE " + k + " 1"} {
			if res, err := s.Exec(context.Background(), ClientA, line); err != nil {
				t.Fatalf("%s: %v %q", line, err, res.Output)
			}
		}
		clock.Add(2e6)
	}
	if n := len(s.hashOrders); n > 20 {
		t.Errorf("%d hash orders after 200 expired hashes; want at most MaxKeys (20)", n)
	}
	runSteps(t, s, []step{{ClientA, "FLUSHALL", "OK"}})
	if s.orderBytes != 0 || len(s.hashOrders) != 0 {
		t.Errorf("after FLUSHALL: %d orders holding %d bytes; want none", len(s.hashOrders), s.orderBytes)
	}
	runSteps(t, s, []step{{ClientA, "HSET h b 1 a 2", "(integer) 2"}})
	if want := orderEntryBytes + 2*(1+orderFieldBytes); s.orderBytes != want || s.queuedBytes() != want {
		t.Errorf("a hash of two one-byte fields: orderBytes %d, queuedBytes %d; want %d", s.orderBytes, s.queuedBytes(), want)
	}
	// A hash that outgrows the listpack is forgotten.
	line := "HSET h"
	for i := range 130 {
		line += fmt.Sprintf(" f%d 1", i)
	}
	runSteps(t, s, []step{{ClientA, line, "(integer) 130"}})
	if len(s.hashOrders) != 0 || s.orderBytes != 0 {
		t.Errorf("a hash of 132 fields: %d orders holding %d bytes; want none", len(s.hashOrders), s.orderBytes)
	}
}
