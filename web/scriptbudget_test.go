package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

// TestScriptBudgetCannotBeDodged sends spinning scripts in every way a
// learner can type them: a repeat count, mixed case, escapes, queued in a
// transaction, EVALSHA after SCRIPT LOAD. Each learner holds two deadlines
// of script time and earns almost nothing back during the test, so however
// the scripts are typed, at most two lines may spin to their deadline
// before the learner is refused with 429.
func TestScriptBudgetCannotBeDodged(t *testing.T) {
	// A deadline of 20 units: a queued script costs a unit, so a budget
	// that charged only queueing would let many transactions spin.
	const timeout = 200 * time.Millisecond
	const need = int(timeout / limit.ScriptUnit)
	spin := `EVAL "while true do end" 0`
	sha := "c36f4bb0bbf3e17b3e3b0e0c5b0c8c1bb0a2b3e1" // replaced below by SCRIPT LOAD's answer
	for _, tt := range []struct {
		name  string
		setup []string
		lines []string // sent in turn, again and again
	}{
		{"plain", nil, []string{spin}},
		{"repeat count 1", nil, []string{`1 EVAL "while true do end" 0`}},
		{"repeat count 3, mixed case", nil, []string{`3 eVaL "while true do end" 0`}},
		{"escaped name", nil, []string{`"\x45VAL" "while true do end" 0`}},
		{"transaction", nil, []string{"MULTI", spin, spin, spin, "EXEC"}},
		{"transaction with a repeat count", nil, []string{"MULTI", `5 EVAL "while true do end" 0`, "EXEC"}},
		{"EVALSHA", []string{`SCRIPT LOAD "while true do end"`}, []string{"2 EVALSHA " + sha + " 0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			pg := playground.NewManager(playground.Options{Limits: playground.Limits{Script: luaredis.Limits{Timeout: timeout}}})
			t.Cleanup(pg.Close)
			cfg.Playground = pg
			cfg.Limits = limit.Limits{ScriptTime: limit.ScriptBudget{
				Learner: limit.NewMemoryMeter(1, 2*need), Address: limit.NewMemoryMeter(1, 1000*need),
				Need: need, LearnerRefill: 1, AddressRefill: 1,
			}}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l := newLearner(t, newServerFor(t, s))
			lines := tt.lines
			for _, line := range tt.setup {
				code, r, body := l.exec("A", line)
				if code != http.StatusOK {
					t.Fatalf("%s = %d %s", line, code, body)
				}
				if strings.HasPrefix(line, "SCRIPT LOAD") {
					got := strings.Trim(r.Output, `"`)
					lines = []string{strings.ReplaceAll(lines[0], sha, got)}
				}
			}
			spun, refused := 0, false
			for i := 0; i < 10*len(lines) && !refused; i++ {
				line := lines[i%len(lines)]
				start := time.Now()
				code, r, body := l.exec("A", line)
				switch {
				case code == http.StatusTooManyRequests:
					refused = true
				case code != http.StatusOK:
					t.Fatalf("%s = %d %s", line, code, body)
				case time.Since(start) >= timeout:
					if !strings.Contains(r.Output, "(error)") {
						t.Errorf("%s took %v and answered %q; want the deadline's error", line, time.Since(start), r.Output)
					}
					spun++
				}
			}
			if !refused {
				t.Errorf("the learner was never refused; %d lines spun to their deadline", spun)
			}
			if spun > 2 {
				t.Errorf("%d lines spun to their deadline before the learner was refused; the budget holds 2", spun)
			}
			l.exec("A", "DISCARD") // a refusal may have come mid-transaction
			// A repeat count may run until the line's deadline too, so it
			// waits for the budget like a script; one command does not.
			if code, _, body := l.exec("A", "50 SUNION a b"); code != http.StatusTooManyRequests {
				t.Errorf("50 SUNION after the budget ran out = %d %s; want 429", code, body)
			}
			if code, r, _ := l.exec("A", "SET k v"); code != http.StatusOK || r.Output != "OK" {
				t.Errorf("SET after the budget ran out = %d %q; want OK", code, r.Output)
			}
		})
	}
}

// TestStoppedScriptsWait sends scripts the playground must stop, at their
// deadline and for their memory, with script time to spare: three are
// run and stopped, a quick script runs between them, and then scripts are
// refused with 429 and the wait until a stop comes back, while plain
// lines and other learners are not held up.
func TestStoppedScriptsWait(t *testing.T) {
	const timeout = 100 * time.Millisecond
	const need = int(timeout / limit.ScriptUnit)
	for _, bomb := range []string{
		`EVAL "while true do end" 0`,
		`EVAL "local t = {} for i = 1, 1e8 do t[i] = i end" 0`,
	} {
		t.Run(bomb, func(t *testing.T) {
			cfg := testConfig(t)
			pg := playground.NewManager(playground.Options{Limits: playground.Limits{Script: luaredis.Limits{Timeout: timeout, MaxAllocBytes: 4 << 20}}})
			t.Cleanup(pg.Close)
			cfg.Playground = pg
			cfg.Limits = limit.Limits{ScriptTime: limit.ScriptBudget{
				Learner: limit.NewMemoryMeter(1, 100*need), Address: limit.NewMemoryMeter(1, 100*need),
				Need: need, LearnerRefill: 1, AddressRefill: 1,
				Stopped: limit.NewMemoryMeterPer(1, 30*time.Second, 3), StoppedPerAddress: limit.NewMemoryMeterPer(1, 6*time.Second, 15),
				StoppedEvery: 30 * time.Second, StoppedEveryPerAddress: 6 * time.Second,
			}}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l := newLearner(t, newServerFor(t, s))
			for i := range 3 {
				if code, r, body := l.exec("A", bomb); code != http.StatusOK || !strings.Contains(r.Output, "stopped the script") {
					t.Fatalf("bomb %d = %d %s; want it run and stopped", i+1, code, body)
				}
				if i == 0 {
					if code, r, body := l.exec("A", `EVAL "return 7" 0`); code != http.StatusOK || r.Output != "(integer) 7" {
						t.Fatalf("a quick script after the first bomb = %d %s; want (integer) 7", code, body)
					}
				}
			}
			for _, line := range []string{bomb, `EVAL "return 7" 0`} {
				code, _, body := l.exec("A", line)
				if code != http.StatusTooManyRequests || !strings.Contains(body, "had to stop your scripts") || !strings.Contains(body, "try again in 30 s") {
					t.Errorf("%s after three bombs = %d %s; want 429 saying why and to wait 30 s", line, code, body)
				}
			}
			if code, r, _ := l.exec("A", "SET k v"); code != http.StatusOK || r.Output != "OK" {
				t.Errorf("SET after the refusal = %d %q; want OK", code, r.Output)
			}
			other := newLearner(t, l.base)
			if code, r, body := other.exec("A", `EVAL "return 7" 0`); code != http.StatusOK || r.Output != "(integer) 7" {
				t.Errorf("another learner's script = %d %s; want (integer) 7", code, body)
			}
		})
	}
}
