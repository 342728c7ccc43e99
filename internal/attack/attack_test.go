package attack

import (
	"os"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// adminToken is the instructor token both servers are started with.
const adminToken = "attack-suite-admin-token"

// target is what the attacks run against.
type target struct {
	// open has every rate limit off (-rate-limit 0), so that the suite's
	// own parallel requests are not turned away: the attacks on it are
	// about what a request costs, not about how many are allowed.
	open *server
	// limited has the default limits: the attacks on it try to get round
	// them (the script time budget, admin sign-in), or need them on to
	// reach the code under attack (a line is tokenized to see whether it
	// runs a script only when limits are on).
	limited *server
	// control is attacked by nobody; its bystander's PINGs show what the
	// machine alone adds to a PING's time.
	control *server
	mon     *monitor
}

// TestAttacks builds the server, starts three of it (see target) with two
// sandbox workers each, and attacks two of them over HTTP. Every attack
// is a subtest; a bystander learner on each server PINGs all along, and
// the memory of each server with its workers is sampled, for the summary
// at the end and for the targets every attack is held to.
func TestAttacks(t *testing.T) {
	testenv.Slow(t, "attack")
	if _, err := os.Stat("/proc/self/status"); err != nil {
		testenv.Missing(t, "no /proc file system to measure the server's memory (Linux only)")
	}
	bin := buildServer(t, t.TempDir())
	env := map[string]string{"LOCKLAB_ADMIN_TOKEN": adminToken}
	tg := &target{
		open:    startServer(t, bin, "open", env, "-sandbox-workers", "2", "-rate-limit", "0"),
		limited: startServer(t, bin, "limited", env, "-sandbox-workers", "2"),
		control: startServer(t, bin, "control", env, "-sandbox-workers", "2"),
	}
	tg.mon = startMonitor(t, tg.control, tg.open, tg.limited)
	start := time.Now()

	for _, a := range []struct {
		name string
		f    func(t *testing.T, tg *target)
	}{
		{"tokenize", attackTokenize},
		{"script-budget", attackScriptBudget},
		{"memory", attackMemory},
		{"open-redirect", attackOpenRedirect},
		{"cache-control", attackCacheControl},
		{"admin-guessing", attackAdminGuessing},
		{"unknown-workshop", attackUnknownWorkshop},
		{"carry-codes", attackCarryCodes},
		{"host-header", attackHostHeader},
		{"cross-site", attackCrossSite},
		{"fresh-cookies", attackFreshCookies},
		{"race-api", attackRaceAPI},
		{"long-requests", attackLongRequests},
		{"lab-queue", attackLabQueue},
		{"join-guessing", attackJoinGuessing},
		{"join-squatting", attackJoinSquatting},
		{"workshop-writes", attackWorkshopWrites},
		{"lua-memory", attackLuaMemory},
		{"event-streams", attackEventStreams},
		{"idle-conns", attackIdleConns},
		{"progress-flood", attackProgressFlood},
		{"full-disk", attackFullDisk},
	} {
		tg.mon.run(t, a.name, func(t *testing.T) { a.f(t, tg) })
	}

	tg.mon.stop()
	t.Logf("attack suite summary (cpu: server and workers; ping99: a bystander learner's PING p99, server-side; client99: as the test saw it; control: a server nobody attacks):%s", tg.mon.summary())
	t.Run("whole-suite", func(t *testing.T) {
		for _, s := range []*server{tg.open, tg.limited} {
			tg.mon.checkPings(t, s, start, time.Now(), s.name+" server, whole suite")
			tg.mon.mu.Lock()
			peak := tg.mon.peak[s.name]
			tg.mon.mu.Unlock()
			if peak >= maxRSS {
				t.Errorf("%s server: peak memory of the server and its workers = %d MB; want < %d MB", s.name, peak/1e6, maxRSS/1e6)
			}
		}
	})
}
