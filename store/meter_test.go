package store

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
)

// TestMeter checks both meters: a key starts with its burst, Take removes
// what was used (all that is left when more was used), keys are separate,
// and the Redis meter is shared by two Store instances (two replicas).
func TestMeter(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	for _, tt := range []struct {
		name  string
		first limit.Meter
		other limit.Meter // the same meter as seen by another replica
	}{
		{"memory", limit.NewMemoryMeter(1, 100), nil},
		{"redis", a.Meter(1, 100), b.Meter(1, 100)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			other := tt.other
			if other == nil {
				other = tt.first
			}
			avail := func(m limit.Meter, key string) int {
				t.Helper()
				n, err := m.Available(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := avail(tt.first, "k"); n != 100 {
				t.Errorf("Available(new key) = %d; want the burst, 100", n)
			}
			if err := tt.first.Take(ctx, "k", 30); err != nil {
				t.Fatal(err)
			}
			if n := avail(other, "k"); n < 70 || n > 71 {
				t.Errorf("Available after taking 30 of 100 = %d; want 70", n)
			}
			if err := other.Take(ctx, "k", 500); err != nil {
				t.Errorf("Take(more than there is) = %v; want it to take all", err)
			}
			if n := avail(tt.first, "k"); n > 1 {
				t.Errorf("Available after taking everything = %d; want 0", n)
			}
			if n := avail(tt.first, "other"); n != 100 {
				t.Errorf("Available(another key) = %d; want 100", n)
			}
		})
	}
}

// TestMeterPer checks a meter refilled per hour: what one replica takes
// is gone for the other, and it does not come back within the second a
// per-second meter would refill it in.
func TestMeterPer(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	mem := limit.NewMemoryMeterPer(5, time.Hour, 5)
	for _, tt := range []struct {
		name         string
		first, other limit.Meter
	}{
		{"memory", mem, mem},
		{"redis", a.MeterPer(5, time.Hour, 5), b.MeterPer(5, time.Hour, 5)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 {
				if err := tt.first.Take(ctx, "ip:x", 1); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := tt.other.Available(ctx, "ip:x"); err != nil || n != 0 {
				t.Errorf("Available after 5 of 5 = %d, %v; want 0", n, err)
			}
			if n, err := tt.other.Available(ctx, "ip:y"); err != nil || n != 5 {
				t.Errorf("Available(another key) = %d, %v; want 5", n, err)
			}
		})
	}
}
