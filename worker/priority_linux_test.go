package worker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// threadNices returns the nice value of each thread of process pid.
func threadNices(t *testing.T, pid int) map[int]int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/stat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		// Fields after the command's closing parenthesis: state is the
		// 3rd field of the line, nice the 19th.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		nice, err := strconv.Atoi(f[19-3])
		if err != nil {
			t.Fatalf("%s: nice %q: %v", e.Name(), f[19-3], err)
		}
		tid, _ := strconv.Atoi(e.Name())
		out[tid] = nice
	}
	return out
}

// lowered returns the threads of pid at longScriptNice.
func lowered(t *testing.T, pid int) []int {
	var out []int
	for tid, n := range threadNices(t, pid) {
		if n == longScriptNice {
			out = append(out, tid)
		}
	}
	return out
}

// TestLongScriptRunsAtLowPriority: a script that turns long runs the rest
// of its time on a thread at longScriptNice, never the worker's main
// thread; the line queued behind it in the same sandbox and another
// learner's line are answered; when the script ends the thread is
// discarded, and the next long script gets one of its own.
func TestLongScriptRunsAtLowPriority(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1})
	pid := s.pids()[0]
	if n := threadNices(t, pid)[pid]; n >= longScriptNice {
		t.Fatalf("the worker runs at nice %d already; this test needs a process below %d", n, longScriptNice)
	}
	ctx := context.Background()
	for round := range 2 {
		spun := make(chan playground.Result, 1)
		go func() {
			res, _ := s.Exec(ctx, "spinner", playground.ClientA, spinLine)
			spun <- res
		}()
		var low []int
		for deadline := time.Now().Add(900 * time.Millisecond); len(low) == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
			low = lowered(t, pid)
		}
		if len(low) != 1 || low[0] == pid {
			t.Fatalf("round %d: threads at nice %d while a script spins: %v; want one, not the main thread %d", round, longScriptNice, low, pid)
		}
		other, err := s.Exec(ctx, "bystander", playground.ClientA, "INCR n")
		if err != nil || other.Output != fmt.Sprintf("(integer) %d", round+1) {
			t.Errorf("round %d: a bystander's INCR while the script spins = %q, %v", round, other.Output, err)
		}
		after, err := s.Exec(ctx, "spinner", playground.ClientA, "SET after 1")
		if err != nil || after.Output != "OK" {
			t.Errorf("round %d: the spinner's next line = %q, %v; want OK", round, after.Output, err)
		}
		if res := <-spun; !strings.Contains(res.Output, "stopped the script after") {
			t.Errorf("round %d: the spinning script = %q; want it stopped at its deadline", round, res.Output)
		}
		for deadline := time.Now().Add(2 * time.Second); len(low) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			low = lowered(t, pid)
		}
		if len(low) > 0 {
			t.Errorf("round %d: threads still at nice %d after the script ended: %v", round, longScriptNice, low)
		}
	}
}

// syncBuffer is a bytes.Buffer the worker's writers and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// responses decodes the frames written so far.
func (b *syncBuffer) responses(t *testing.T) map[uint64]*response {
	b.mu.Lock()
	data := slices.Clone(b.buf.Bytes())
	b.mu.Unlock()
	in := &frameReader{r: bufio.NewReader(bytes.NewReader(data))}
	out := map[uint64]*response{}
	for {
		frame, err := in.read()
		if err != nil {
			return out
		}
		resp, err := decodeResponse(frame)
		if err != nil {
			t.Fatal(err)
		}
		out[resp.ID] = resp
	}
}

// TestLoweredRunnerHandsOnItsQueue: when the runner of a sandbox whose
// script locked it to its thread ends, the requests queued behind the
// script run on another runner, in order. Its lower locks the thread as
// lowerPriority does and leaves the priority alone, so that the hand-off
// is tested whichever thread runs the script.
func TestLoweredRunnerHandsOnItsQueue(t *testing.T) {
	var out syncBuffer
	s := newServer(context.Background(), playground.Limits{}, &out, io.Discard)
	lowered := make(chan struct{}, 1)
	s.lower = func() bool {
		runtime.LockOSThread()
		lowered <- struct{}{}
		return true
	}
	now := time.Now().UnixNano()
	s.handle(&request{Op: opOpen, Box: 1, Now: now})
	s.handle(&request{Op: opExec, ID: 1, Box: 1, Now: now, Client: playground.ClientA, Line: spinLine, Allow: 1 << 20})
	select {
	case <-lowered:
	case <-time.After(900 * time.Millisecond):
		t.Fatal("the spinning script never turned long")
	}
	// Queued behind the script, as its sandbox is busy.
	for i, line := range []string{"SET after 1", "APPEND after 2", "GET after"} {
		s.handle(&request{Op: opExec, ID: uint64(2 + i), Box: 1, Now: now, Client: playground.ClientA, Line: line, Allow: 1 << 20})
	}
	want := map[uint64]string{2: "OK", 3: "(integer) 2", 4: `"12"`}
	var got map[uint64]*response
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = out.responses(t); len(got) == 4 {
			break
		}
	}
	if r := got[1]; r == nil || !strings.Contains(r.Result.Output, "stopped the script after") {
		t.Errorf("the spinning script = %+v; want it stopped at its deadline", r)
	}
	for id, w := range want {
		if r := got[id]; r == nil || r.Result.Output != w {
			t.Errorf("request %d behind the script = %+v; want %q", id, r, w)
		}
	}
}
