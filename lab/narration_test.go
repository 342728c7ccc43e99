package lab

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
)

// TestNarrationIsTrue checks every sentence of every systematic schedule
// of several locks, good and broken, against the replies and the state
// after it: a line's event quotes its reply; "the key is deleted" leaves
// no key; "the TTL is now N ms" is the key's TTL; "holds the lock" makes
// the actor a holder; a release that succeeded is narrated as one only
// if the recipe's rule says so.
func TestNarrationIsTrue(t *testing.T) {
	recipes := map[string]Recipe{
		"textbook, redis-py extend": {Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{addTimeExtend}},
		"get-then-del":              {Acquire: []string{lineSetNXPX}, Release: []string{"GET {key}", "DEL {key}"}},
		"plain-pexpire":             {Acquire: []string{lineSetNXPX}, Release: []string{"DEL {key}"}, Extend: []string{"PEXPIRE {key} {ttl}"}},
		"redisson":                  {Acquire: []string{redissonAcquire}, Release: []string{redissonRelease}, TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}},
	}
	ttlNow := regexp.MustCompile(`TTL is now (\d+) ms`)
	m := DefaultModel()
	m.ClockJumps = JumpsBoth
	for name, r := range recipes {
		t.Run(name, func(t *testing.T) {
			sp := newSpace(r, m)
			limit := sp.pairBase()
			if !testenv.SlowTier() || raceCPUFactor > 1 {
				limit = min(limit, 60)
			}
			bad := 0
			for n := range limit {
				ce, err := Replay(context.Background(), r, &m, scheduleSeed(1, n))
				if err != nil {
					t.Fatal(err)
				}
				for i, e := range ce.Events {
					where := fmt.Sprintf("schedule %d event %d (%s %s): %q", n, i, e.Actor, e.Kind, e.Text)
					node := e.Nodes[0]
					switch {
					case e.Line != "" && !strings.Contains(e.Text, e.Reply):
						t.Errorf("%s does not quote the reply %q", where, e.Reply)
					case strings.Contains(e.Text, "the key is deleted") && node.Holder != "":
						t.Errorf("%s, but the key holds %s", where, node.Holder)
					case strings.HasSuffix(e.Text, "holds the lock.") && e.Kind == "acquire-ok" && !slices.Contains(e.Holding, e.Actor):
						t.Errorf("%s, but the holders are %v", where, e.Holding)
					case strings.Contains(e.Text, "no longer its own") || strings.Contains(e.Text, "TTL starts again"):
						t.Errorf("%s: a sentence that is no longer said", where)
					}
					if mm := ttlNow.FindStringSubmatch(e.Text); mm != nil && mm[1] != fmt.Sprint(node.TTLMS) {
						t.Errorf("%s, but the key's TTL is %d ms", where, node.TTLMS)
					}
					if e.Kind == "release-ok" && !strings.Contains(e.Text, "releases its lock") {
						t.Errorf("%s: a release that succeeded, narrated otherwise", where)
					}
				}
				if t.Failed() {
					bad++
					if bad > 3 {
						t.FailNow()
					}
				}
			}
		})
	}
}
