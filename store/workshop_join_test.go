package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/workshop"
)

// TestWorkshopBatchesAddUp: two replicas each count the same
// participants' commands and write them in batches; the totals are the
// sums (added, never overwritten) and the last-active time only moves
// forward, whichever replica writes last.
func TestWorkshopBatchesAddUp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "SUMS", StartedAt: t0})
		mustJoin(t, s, "SUMS", alice, "", t0)
		mustJoin(t, replica, "SUMS", bob, "", t0)
		for i := range 3 {
			for _, svc := range []*workshop.Service{s, replica} {
				for _, l := range []string{alice, bob} {
					mustRecord(t, svc, "SUMS", l, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(time.Duration(i) * time.Minute)})
				}
			}
		}
		// The replica has seen alice later than s has.
		mustRecord(t, replica, "SUMS", alice, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(10 * time.Minute)})
		mustFlush(t, replica, s)
		if st := mustStats(t, s, "SUMS", t0); st.Commands != 13 {
			t.Errorf("commands = %d; want 13 from both replicas", st.Commands)
		}
		ps := mustParticipants(t, replica, "SUMS")
		if len(ps) != 2 || ps[0].Commands+ps[1].Commands != 13 {
			t.Fatalf("participants = %+v; want 13 commands between them", ps)
		}
		for _, p := range ps {
			want := t0.Add(2 * time.Minute)
			if p.Learner == alice {
				want = t0.Add(10 * time.Minute)
			}
			if !p.LastActive.Equal(want) {
				t.Errorf("%s last active %v; want %v (the latest of both replicas)", p.Learner, p.LastActive, want)
			}
		}
	})
}

// TestWorkshopNonMemberWritesNothing: events of a learner who has not
// joined (a cookie that names the workshop) reach no counter.
func TestWorkshopNonMemberWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, _ *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "OUTS", StartedAt: t0})
		mustJoin(t, s, "OUTS", alice, "", t0)
		for range 10 {
			mustRecord(t, s, "OUTS", bob, workshop.Event{Kind: workshop.EventCommand, At: t0})
		}
		mustFlush(t, s)
		if st := mustStats(t, s, "OUTS", t0); st.Commands != 0 || st.Joined != 1 {
			t.Errorf("stats = %+v; want nothing from a learner who has not joined", st)
		}
	})
}

// TestWorkshopUniqueNicknames: no two participants have the same
// nickname, whatever its case or spacing; a participant may join again
// with their own, and a nickname left behind by a rename is free again.
// The check is one atomic step with the join, on every replica.
func TestWorkshopUniqueNicknames(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "NICKS", StartedAt: t0})
		mustJoin(t, s, "NICKS", alice, "Ann Lee", t0)
		for _, nick := range []string{"Ann Lee", "ann lee", " ANN   LEE "} {
			for _, svc := range []*workshop.Service{s, replica} {
				if err := svc.Join(ctx, "NICKS", bob, nick, t0); !errors.Is(err, workshop.ErrNicknameTaken) {
					t.Errorf("bob joins as %q = %v; want workshop.ErrNicknameTaken", nick, err)
				}
			}
		}
		if st := mustStats(t, s, "NICKS", t0); st.Joined != 1 {
			t.Errorf("Joined = %d after refused joins; want 1 (nothing written)", st.Joined)
		}
		mustJoin(t, replica, "NICKS", alice, "ANN LEE", t0.Add(time.Minute)) // her own, recased
		mustJoin(t, s, "NICKS", bob, "", t0)                                 // no nickname: fine
		mustJoin(t, s, "NICKS", alice, "Annie", t0.Add(2*time.Minute))       // frees "Ann Lee"
		mustJoin(t, replica, "NICKS", bob, "ann lee", t0.Add(3*time.Minute))
		if err := s.Join(ctx, "NICKS", carol, "ANNIE", t0); !errors.Is(err, workshop.ErrNicknameTaken) {
			t.Errorf("carol joins as alice's new nickname = %v; want workshop.ErrNicknameTaken", err)
		}
		got := map[string]string{}
		for _, p := range mustParticipants(t, s, "NICKS") {
			got[p.Learner] = p.Nickname
		}
		if want := map[string]string{alice: "Annie", bob: "ann lee"}; !reflect.DeepEqual(got, want) {
			t.Errorf("nicknames = %v; want %v", got, want)
		}
	})
}

// TestWorkshopCloseJoining: a closed workshop takes no newcomers, but
// those who joined may rejoin; reopened, it takes them again.
func TestWorkshopCloseJoining(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "DOOR", StartedAt: t0})
		mustJoin(t, s, "DOOR", alice, "Ann", t0)
		if err := s.SetJoining(ctx, "DOOR", false); err != nil {
			t.Fatal(err)
		}
		if w, err := replica.Get(ctx, "DOOR"); err != nil || !w.JoinClosed || w.Joinable() {
			t.Errorf("Get after closing = %+v, %v; want JoinClosed", w, err)
		}
		if err := replica.Join(ctx, "DOOR", bob, "Bob", t0); !errors.Is(err, workshop.ErrJoinClosed) {
			t.Errorf("a newcomer joins a closed workshop = %v; want workshop.ErrJoinClosed", err)
		}
		mustJoin(t, replica, "DOOR", alice, "Annie", t0.Add(time.Minute)) // rejoining is fine
		if err := replica.SetJoining(ctx, "DOOR", true); err != nil {
			t.Fatal(err)
		}
		mustJoin(t, s, "DOOR", bob, "Bob", t0.Add(2*time.Minute))
		if st := mustStats(t, s, "DOOR", t0); st.Joined != 2 || st.Workshop.JoinClosed {
			t.Errorf("after reopening: %+v; want 2 joined, open", st)
		}
		if err := s.SetJoining(ctx, "NOPE1", false); !errors.Is(err, workshop.ErrNotFound) {
			t.Errorf("closing an unknown workshop = %v; want workshop.ErrNotFound", err)
		}
		if err := s.End(ctx, "DOOR", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.SetJoining(ctx, "DOOR", false); !errors.Is(err, workshop.ErrEnded) {
			t.Errorf("closing an ended workshop = %v; want workshop.ErrEnded", err)
		}
	})
}

// TestWorkshopRemoveParticipant: a removed participant is no member: not
// counted as joined, not listed, their predictions out of the polls and
// their nickname free; what they do later counts nowhere, and they cannot
// join again with the same learner id.
func TestWorkshopRemoveParticipant(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		mustCreate(t, s, workshop.Workshop{Code: "KICK", StartedAt: t0})
		mustJoin(t, s, "KICK", alice, "Ann", t0)
		mustJoin(t, s, "KICK", bob, "Squatter", t0)
		p, err := s.OpenPoll(ctx, "KICK", pollSpec(), t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{alice, bob} {
			if err := s.Predict(ctx, "KICK", p.ID, l, []string{"two-holders"}, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		mustRecord(t, replica, "KICK", bob, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(time.Minute)})
		mustFlush(t, replica)
		// The replica has seen bob as a member; it keeps counting him
		// until its cache learns otherwise, and its batch must not count.
		mustRecord(t, replica, "KICK", bob, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(2 * time.Minute)})

		if err := s.Remove(ctx, "KICK", workshop.ParticipantKey("KICK", bob)); err != nil {
			t.Fatalf("Remove(bob) = %v", err)
		}
		mustRecord(t, s, "KICK", bob, workshop.Event{Kind: workshop.EventCommand, At: t0.Add(3 * time.Minute)})
		mustFlush(t, s, replica)
		st := mustStats(t, replica, "KICK", t0)
		if st.Joined != 1 || st.Commands != 1 {
			t.Errorf("after removing bob: %d joined, %d commands; want 1 and the 1 command from before", st.Joined, st.Commands)
		}
		if ps := mustParticipants(t, s, "KICK"); len(ps) != 1 || ps[0].Learner != alice {
			t.Errorf("participants = %+v; want alice only", ps)
		}
		r, err := replica.Poll(ctx, "KICK", p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Joined != 1 || r.Answered != 1 || r.Counts["two-holders"] != 1 {
			t.Errorf("poll after the removal = %d joined, %d answered, %v; want 1, 1, two-holders 1", r.Joined, r.Answered, r.Counts)
		}
		if _, err := replica.Learner(ctx, "KICK", bob); !errors.Is(err, workshop.ErrNotJoined) {
			t.Errorf("Learner(bob) = %v; want workshop.ErrNotJoined", err)
		}
		for _, svc := range []*workshop.Service{s, replica} {
			if err := svc.Join(ctx, "KICK", bob, "Back", t0.Add(time.Hour)); !errors.Is(err, workshop.ErrRemoved) {
				t.Errorf("bob joins again = %v; want workshop.ErrRemoved", err)
			}
		}
		mustJoin(t, replica, "KICK", carol, "squatter", t0) // the nickname is free
		if err := s.Remove(ctx, "KICK", workshop.ParticipantKey("KICK", bob)); !errors.Is(err, workshop.ErrNoParticipant) {
			t.Errorf("removing bob again = %v; want workshop.ErrNoParticipant", err)
		}
	})
}

// TestWorkshopBoltBytesPerCommand measures what a participant's command
// costs the bolt file: bytes of pages bbolt writes (the dirty pages it
// allocates, and a meta page per transaction). A command written on its
// own, as every command once was, rewrites the participant's record and
// the workshop's counters, several pages; in a batch the cost is shared.
// A non-member writes nothing.
func TestWorkshopBoltBytesPerCommand(t *testing.T) {
	const (
		learners = 30
		seconds  = 60 // of commands, two a second per participant
	)
	st, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := st.b.(*boltBackend).db
	counted := &flushCounter{Store: st}
	clk := fakeclock.New(t0)
	s := workshop.New(counted, workshop.Options{Now: clk.Now})
	mustCreate(t, s, workshop.Workshop{Code: "BYTES", StartedAt: t0})
	ids := make([]string, learners)
	for i := range ids {
		ids[i] = fmt.Sprintf("learner-%02d-0123456789a", i)
		mustJoin(t, s, "BYTES", ids[i], fmt.Sprintf("Learner %d", i), t0)
	}
	// written returns the bytes bbolt wrote while f ran.
	pageAlloc := func() int64 {
		st := db.Stats()
		return st.TxStats.GetPageAlloc()
	}
	written := func(f func()) int64 {
		before, flushes := pageAlloc(), counted.flushes
		f()
		return pageAlloc() - before + int64(counted.flushes-flushes)*int64(db.Info().PageSize)
	}
	command := func(learner string) {
		mustRecord(t, s, "BYTES", learner, workshop.Event{Kind: workshop.EventCommand, At: clk.Now()})
	}

	const alone = 50
	eachAlone := written(func() {
		for i := range alone {
			command(ids[i%learners])
			mustFlush(t, s) // a write per command
		}
	}) / alone
	batched := learners * seconds * 2
	eachBatched := written(func() {
		for range seconds * 2 {
			for _, id := range ids {
				command(id)
			}
			clk.Add(500 * time.Millisecond)
		}
		mustFlush(t, s)
	}) / int64(batched)
	outsider := written(func() {
		for range 100 {
			command(carol)
			clk.Add(time.Second)
		}
		mustFlush(t, s)
	})
	t.Logf("bytes written to the bolt file per command: %d written one by one; %d in batches (%d participants, 2 commands a second each, %d writes); a non-member's 100 commands: %d in all",
		eachAlone, eachBatched, learners, counted.flushes, outsider)
	if eachBatched >= 4096 {
		t.Errorf("%d bytes written per command in batches; want under 4 KiB", eachBatched)
	}
	if outsider != 0 {
		t.Errorf("a non-member's commands wrote %d bytes; want none", outsider)
	}
	if sts := mustStats(t, s, "BYTES", t0); sts.Commands != alone+batched {
		t.Errorf("commands = %d; want %d", sts.Commands, alone+batched)
	}
}

// flushCounter counts the batches written through it.
type flushCounter struct {
	*Store
	flushes int
}

func (f *flushCounter) FlushWorkshop(ctx context.Context, code string, b workshop.Batch) error {
	f.flushes++
	return f.Store.FlushWorkshop(ctx, code, b)
}
