package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/workshop"
)

// pollSpec is a poll on a run whose outcomes are two holders and a stale
// write accepted.
func pollSpec() workshop.PollSpec {
	return workshop.PollSpec{
		Scenario: "gc-pause", Title: "A GC pause longer than the TTL", Query: "scenario=gc-pause",
		Setup:    []string{"TTL 10 s", "client 1 pauses 12 s"},
		Choices:  []workshop.PollChoice{{ID: "two-holders", Label: "Two holders"}, {ID: "stale-write-accepted", Label: "Stale write accepted"}, {ID: "safe", Label: "Safe"}},
		Outcomes: []string{"two-holders", "stale-write-accepted"},
	}
}

func TestPollCountsOncePerLearnerAcrossReplicas(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		ctx := context.Background()
		mustCreate(t, s, workshop.Workshop{Code: "POLL42", Title: "Polls", StartedAt: t0})
		learners := make([]string, 20)
		for i := range learners {
			learners[i] = fmt.Sprintf("learner-%02d-0123456789a", i)
			mustJoin(t, []*workshop.Service{s, replica}[i%2], "POLL42", learners[i], "", t0)
		}
		p, err := s.OpenPoll(ctx, "POLL42", pollSpec(), t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		// Every learner predicts on their replica; every third changes
		// their mind on the other one, at the same time as the others.
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i, l := range learners {
			wg.Go(func() {
				svc, other := s, replica
				if i%2 == 1 {
					svc, other = replica, s
				}
				if err := svc.Predict(ctx, "POLL42", p.ID, l, []string{"safe"}, t0.Add(2*time.Minute)); err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					errs <- other.Predict(ctx, "POLL42", p.ID, l, []string{"two-holders", "stale-write-accepted", "two-holders"}, t0.Add(3*time.Minute))
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// i%3 == 0 for 7 of the 20.
		want := map[string]int{"safe": 13, "two-holders": 7, "stale-write-accepted": 7}
		for _, svc := range []*workshop.Service{s, replica} {
			r, err := svc.Poll(ctx, "POLL42", "")
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != p.ID || r.Answered != 20 || r.Joined != 20 || !reflect.DeepEqual(r.Counts, want) || r.Revealed() {
				t.Errorf("Poll = %s answered %d of %d, %v, revealed %v; want %s 20 of 20, %v, not revealed", r.ID, r.Answered, r.Joined, r.Counts, r.Revealed(), p.ID, want)
			}
		}
		st, err := replica.Learner(ctx, "POLL42", learners[3])
		if err != nil {
			t.Fatal(err)
		}
		if st.Poll == nil || st.Poll.ID != p.ID || !reflect.DeepEqual(st.Prediction, []string{"two-holders", "stale-write-accepted"}) || st.Judged() != nil {
			t.Fatalf("Learner before the reveal = %+v; want the poll, the changed prediction, nothing judged", st)
		}
		if err := replica.Reveal(ctx, "POLL42", p.ID, t0.Add(4*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.Predict(ctx, "POLL42", p.ID, learners[0], []string{"safe"}, t0.Add(5*time.Minute)); !errors.Is(err, workshop.ErrRevealed) {
			t.Errorf("Predict after the reveal = %v; want ErrRevealed", err)
		}
		for i, l := range learners {
			st, err := []*workshop.Service{s, replica}[i%2].Learner(ctx, "POLL42", l)
			if err != nil {
				t.Fatal(err)
			}
			if st.Poll == nil || !st.Poll.Revealed() || st.Right() != (i%3 == 0) || len(st.Judged()) != 3 {
				t.Errorf("learner %d after the reveal: %+v right %v; want revealed, right %v, 3 judgements", i, st.Poll, st.Right(), i%3 == 0)
			}
		}
		rs, err := replica.Polls(ctx, "POLL42")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Number != 1 || !reflect.DeepEqual(rs[0].Counts, want) || !rs[0].Revealed() || rs[0].Answered != 20 {
			t.Errorf("Polls = %+v; want the one revealed poll with %v", rs, want)
		}
	})
}

func TestPollErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		ctx := context.Background()
		mustCreate(t, s, workshop.Workshop{Code: "POLL43", Title: "Polls", StartedAt: t0})
		mustJoin(t, s, "POLL43", alice, "Alice", t0)
		if _, err := s.Poll(ctx, "POLL43", ""); !errors.Is(err, workshop.ErrNoPoll) {
			t.Errorf("Poll with none open = %v; want ErrNoPoll", err)
		}
		st, err := s.Learner(ctx, "POLL43", alice)
		if err != nil || st.Poll != nil || st.Nickname != "Alice" || st.Workshop.Title != "Polls" {
			t.Errorf("Learner with none open = %+v, %v; want Alice in Polls, no poll", st, err)
		}
		p, err := s.OpenPoll(ctx, "POLL43", pollSpec(), t0)
		if err != nil {
			t.Fatal(err)
		}
		bad := pollSpec()
		bad.Outcomes = []string{"no-such"}
		for _, tt := range []struct {
			name string
			err  error
			want error
		}{
			{"not joined", replica.Predict(ctx, "POLL43", p.ID, bob, []string{"safe"}, t0), workshop.ErrNotJoined},
			{"not joined, state", func() error { _, err := replica.Learner(ctx, "POLL43", bob); return err }(), workshop.ErrNotJoined},
			{"no such poll", replica.Predict(ctx, "POLL43", "nosuchpoll", alice, []string{"safe"}, t0), workshop.ErrNoPoll},
			{"unknown outcome", replica.Predict(ctx, "POLL43", p.ID, alice, []string{"lost"}, t0), workshop.ErrBadInput},
			{"empty prediction", replica.Predict(ctx, "POLL43", p.ID, alice, nil, t0), workshop.ErrBadInput},
			{"no such workshop", replica.Predict(ctx, "NOPE99", p.ID, alice, []string{"safe"}, t0), workshop.ErrNotFound},
			{"reveal unknown poll", replica.Reveal(ctx, "POLL43", "nosuchpoll", t0), workshop.ErrNoPoll},
			{"outcome not a choice", func() error { _, err := s.OpenPoll(ctx, "POLL43", bad, t0); return err }(), workshop.ErrBadInput},
		} {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v; want %v", tt.name, tt.err, tt.want)
			}
		}
		r, _ := s.Poll(ctx, "POLL43", p.ID)
		if r.Answered != 0 || len(r.Counts) != 0 {
			t.Errorf("after refused predictions: answered %d, %v; want nothing counted", r.Answered, r.Counts)
		}
		if err := s.End(ctx, "POLL43", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.OpenPoll(ctx, "POLL43", pollSpec(), t0.Add(2*time.Hour)); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("OpenPoll after the end = %v; want ErrEnded", err)
		}
		// After the end, the end is the reason, for a participant and for
		// anyone else alike (workshop.PredictState.MayPredict's order).
		if err := replica.Predict(ctx, "POLL43", p.ID, alice, []string{"safe"}, t0.Add(2*time.Hour)); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("Predict after the end = %v; want ErrEnded", err)
		}
		if err := replica.Predict(ctx, "POLL43", "nosuchpoll", bob, []string{"safe"}, t0.Add(2*time.Hour)); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("Predict after the end, not joined, no such poll = %v; want ErrEnded", err)
		}
	})
}

func TestPollsAtMost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		ctx := context.Background()
		mustCreate(t, s, workshop.Workshop{Code: "POLL44", Title: "Polls", StartedAt: t0})
		var last workshop.Poll
		for i := range workshop.MaxPolls {
			var err error
			if last, err = []*workshop.Service{s, replica}[i%2].OpenPoll(ctx, "POLL44", pollSpec(), t0.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatalf("poll %d: %v", i+1, err)
			}
		}
		if _, err := s.OpenPoll(ctx, "POLL44", pollSpec(), t0.Add(time.Hour)); !errors.Is(err, workshop.ErrTooManyPolls) {
			t.Errorf("poll %d = %v; want ErrTooManyPolls", workshop.MaxPolls+1, err)
		}
		rs, err := replica.Polls(ctx, "POLL44")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != workshop.MaxPolls || rs[len(rs)-1].ID != last.ID || rs[len(rs)-1].Number != workshop.MaxPolls {
			t.Errorf("Polls: %d, the last %s number %d; want %d, the last opened last", len(rs), rs[len(rs)-1].ID, rs[len(rs)-1].Number, workshop.MaxPolls)
		}
		cur, err := s.Poll(ctx, "POLL44", "")
		if err != nil || cur.ID != last.ID {
			t.Errorf("current poll = %s, %v; want the last opened, %s", cur.ID, err, last.ID)
		}
	})
}
