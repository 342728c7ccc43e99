package limit

import "testing"

// streamOpen is one stream a test opens: of a learner, from an address.
type streamOpen struct{ learner, addr string }

func TestStreamsCaps(t *testing.T) {
	caps := StreamCaps{PerLearner: 2, PerAddress: 3, Total: 5}
	for _, tt := range []struct {
		name string
		open []streamOpen // held open, in order, all admitted
		next streamOpen
		want string // the cap that refuses next; "" admits it
	}{
		{"first of a learner", nil, streamOpen{"ann", "10.0.0.1"}, ""},
		{"a learner's second", []streamOpen{{"ann", "10.0.0.1"}}, streamOpen{"ann", "10.0.0.1"}, ""},
		{"a learner's third", []streamOpen{{"ann", "10.0.0.1"}, {"ann", "10.0.0.1"}}, streamOpen{"ann", "10.0.0.1"}, "streams_per_learner"},
		{"a learner's third from another address", []streamOpen{{"ann", "10.0.0.1"}, {"ann", "10.0.0.2"}}, streamOpen{"ann", "10.0.0.3"}, "streams_per_learner"},
		{"another learner beside a full one", []streamOpen{{"ann", "10.0.0.1"}, {"ann", "10.0.0.1"}}, streamOpen{"bob", "10.0.0.1"}, ""},
		{"an address's fourth", []streamOpen{{"ann", "10.0.0.1"}, {"bob", "10.0.0.1"}, {"cy", "10.0.0.1"}}, streamOpen{"dee", "10.0.0.1"}, "streams_per_address"},
		{"another address beside a full one", []streamOpen{{"ann", "10.0.0.1"}, {"bob", "10.0.0.1"}, {"cy", "10.0.0.1"}}, streamOpen{"dee", "10.0.0.2"}, ""},
		{"without a learner, by address", []streamOpen{{"", "10.0.0.1"}, {"", "10.0.0.1"}, {"", "10.0.0.1"}}, streamOpen{"", "10.0.0.1"}, "streams_per_address"},
		{"the sixth in all", []streamOpen{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}, streamOpen{"f", "6"}, "streams"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStreams(caps)
			for _, o := range tt.open {
				if _, d := s.Open(o.learner, o.addr); !d.Allowed() {
					t.Fatalf("Open(%q, %q) while setting up = %+v; want allowed", o.learner, o.addr, d)
				}
			}
			_, d := s.Open(tt.next.learner, tt.next.addr)
			if d.Limit != tt.want {
				t.Errorf("Open(%q, %q) = %q; want %q", tt.next.learner, tt.next.addr, d.Limit, tt.want)
			}
			if d.Limit != "" && d.Wait <= 0 {
				t.Errorf("a refusal's Wait = %v; want a positive wait for Retry-After", d.Wait)
			}
			// A refusal counts nothing: what was open still is, and no more.
			_, _, total := s.Count("", "")
			want := len(tt.open)
			if d.Allowed() {
				want++
			}
			if total != want {
				t.Errorf("%d streams open; want %d", total, want)
			}
		})
	}
}

func TestStreamsDoneReleases(t *testing.T) {
	s := NewStreams(StreamCaps{PerLearner: 1, PerAddress: 1, Total: 1})
	done, d := s.Open("ann", "10.0.0.1")
	if !d.Allowed() {
		t.Fatalf("first Open = %+v; want allowed", d)
	}
	if _, d := s.Open("bob", "10.0.0.2"); d.Limit != "streams" {
		t.Fatalf("Open beyond the total = %q; want streams", d.Limit)
	}
	done()
	done() // a second call changes nothing
	if l, a, n := s.Count("ann", "10.0.0.1"); l != 0 || a != 0 || n != 0 {
		t.Fatalf("after done, counts = %d, %d, %d; want 0, 0, 0", l, a, n)
	}
	if len(s.learners) != 0 || len(s.addrs) != 0 {
		t.Errorf("after done, %d learners and %d addresses kept; want none", len(s.learners), len(s.addrs))
	}
	again, d := s.Open("bob", "10.0.0.2")
	if !d.Allowed() {
		t.Fatalf("Open after done = %+v; want allowed", d)
	}
	again()
}

func TestStreamsRefusedDoneIsANoOp(t *testing.T) {
	s := NewStreams(StreamCaps{PerLearner: 1})
	held, _ := s.Open("ann", "10.0.0.1")
	refusedDone, d := s.Open("ann", "10.0.0.1")
	if d.Allowed() {
		t.Fatal("a learner's second stream was admitted past a cap of one")
	}
	refusedDone()
	if l, _, _ := s.Count("ann", ""); l != 1 {
		t.Errorf("after a refused stream's done, the learner has %d open; want 1 (the refusal must not free the held one)", l)
	}
	held()
}

func TestStreamsDefaults(t *testing.T) {
	got := NewStreams(StreamCaps{}).Caps()
	want := StreamCaps{PerLearner: DefaultStreamsPerLearner, PerAddress: DefaultStreamsPerAddress, Total: DefaultStreams}
	if got != want {
		t.Errorf("NewStreams(zero).Caps() = %+v; want %+v", got, want)
	}
}

// TestStreamsManyAtTheCaps holds a learner and an address at their caps
// from many goroutines: exactly the caps are admitted, and all is
// released once they are done.
func TestStreamsManyAtTheCaps(t *testing.T) {
	s := NewStreams(StreamCaps{PerLearner: 4, PerAddress: 32, Total: 1000})
	const tries = 200
	type result struct {
		done func()
		ok   bool
	}
	results := make(chan result, 2*tries)
	for i := range tries {
		go func() {
			done, d := s.Open("mallory", "10.0.0.9")
			results <- result{done, d.Allowed()}
		}()
		go func() {
			done, d := s.Open(string(rune('a'+i%26))+string(rune('a'+i/26)), "10.0.0.8")
			results <- result{done, d.Allowed()}
		}()
	}
	var admitted int
	var dones []func()
	for range 2 * tries {
		r := <-results
		if r.ok {
			admitted++
		}
		dones = append(dones, r.done)
	}
	if want := 4 + 32; admitted != want {
		t.Errorf("%d streams admitted; want %d (4 for the learner, 32 for the other address)", admitted, want)
	}
	for _, done := range dones {
		done()
	}
	if _, _, n := s.Count("", ""); n != 0 {
		t.Errorf("%d streams open after all were done; want 0", n)
	}
}
