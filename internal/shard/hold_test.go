package shard

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
)

// ring is one replica over a fake clientset, its Lease writes counted, driven round by
// round on a fake clock.
type ring struct {
	t      *testing.T
	raw    coordinationv1client.LeasesGetter
	clk    *clocktesting.FakeClock
	m      *Manager
	r      *runState
	writes atomic.Int32 // creates and updates of bucket Leases
	lost   []int        // OnRelease(b, true)
	taken  []int        // OnTake
	held   [][]int      // OnHeldChange
	// before, if set, runs before each request (steppedLeases.at).
	before func(verb, name string)
	// block, if set, runs before each update with the request's context, after before:
	// its error, if any, is the update's answer and nothing is written (a hung apiserver).
	block func(ctx context.Context, name string) error
}

// blockingLeases passes Lease requests on, letting block answer an update first.
type blockingLeases struct {
	coordinationv1client.LeasesGetter
	block func(ctx context.Context, name string) error
}

func (b blockingLeases) Leases(ns string) coordinationv1client.LeaseInterface {
	return blockingLeaseInterface{LeaseInterface: b.LeasesGetter.Leases(ns), block: b.block}
}

type blockingLeaseInterface struct {
	coordinationv1client.LeaseInterface
	block func(ctx context.Context, name string) error
}

func (l blockingLeaseInterface) Update(ctx context.Context, in *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if err := l.block(ctx, in.Name); err != nil {
		return nil, err
	}
	return l.LeaseInterface.Update(ctx, in, o)
}

func newRing(t *testing.T, b int) *ring {
	t.Helper()
	g := &ring{t: t, raw: fake.NewClientset().CoordinationV1(), clk: clocktesting.NewFakeClock(time.Unix(1e9, 0))}
	m, err := New(Options{
		Client: steppedLeases{blockingLeases{g.raw, func(ctx context.Context, name string) error {
			if g.block != nil {
				return g.block(ctx, name)
			}
			return nil
		}}, func(verb, name string) {
			if (verb == "create" || verb == "update") && strings.Contains(name, "-bucket-") {
				g.writes.Add(1)
			}
			if g.before != nil {
				g.before(verb, name)
			}
		}, &atomic.Int64{}},
		Namespace: "ns", Name: "ork", Member: "p", Identity: "p_1", Buckets: b,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, Clock: g.clk,
		OnTake:       func(b int) { g.taken = append(g.taken, b) },
		OnHeldChange: func(held []int) { g.held = append(g.held, held) },
		OnRelease: func(b int, lost bool) {
			if lost {
				g.lost = append(g.lost, b)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	g.m = m
	g.r = &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: t.Context()}
	return g
}

func (g *ring) round(stopping bool) {
	g.t.Helper()
	if err := g.m.round(context.Background(), g.r, leaseStore(g.t, g.raw), stopping); err != nil {
		g.t.Fatal(err)
	}
}

// join runs the rounds a lone replica needs to take every bucket.
func (g *ring) join() {
	g.t.Helper()
	g.round(false)
	g.clk.Step(2 * time.Second)
	g.round(false)
	if len(g.m.Held()) != g.m.opts.Buckets {
		g.t.Fatalf("a lone replica holds %v after joining", g.m.Held())
	}
}

// A bucket whose renewals have not landed within the renew deadline is lost at the
// deadline (the expiry timer's loseExpired), not at the end of a later round; and a round
// after the deadline sends no renewal for it: it would not make the bucket held again.
func TestABucketPastItsRenewDeadlineIsLostAtTheDeadline(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	g.clk.Step(9 * time.Second)
	if got := g.m.untilExpiry(g.r); got != time.Second+time.Millisecond {
		t.Errorf("untilExpiry 9 s after the last renewal = %s, want 1.001s", got)
	}
	g.m.loseExpired(g.r)
	if len(g.lost) != 0 {
		t.Fatalf("lost %v inside the renew deadline", g.lost)
	}
	g.clk.Step(1500 * time.Millisecond)
	g.m.loseExpired(g.r)
	if !slices.Equal(g.lost, []int{0, 1}) || g.m.HoldsAny() {
		t.Fatalf("past the renew deadline: lost %v, holds %v; want both lost", g.lost, g.m.Held())
	}

	// The same through a round: no renewal is sent past the deadline.
	g = newRing(t, 2)
	g.join()
	g.clk.Step(11 * time.Second)
	before := g.writes.Load()
	g.m.renewBuckets(context.Background(), g.r)
	if sent := g.writes.Load() - before; sent != 0 || !slices.Equal(g.lost, []int{0, 1}) {
		t.Errorf("a round past the renew deadline sent %d renewals and lost %v: want none sent, both lost", sent, g.lost)
	}
}

// A replica that starts stopping releases its member Lease first, so that the others
// stop counting it at once, and keeps renewing the buckets it drains without taking the
// member Lease back.
func TestAStoppingReplicaLeavesBeforeItsBucketsAreHandedBack(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	g.m.leave(context.Background(), g.r)
	member, err := g.raw.Leases("ns").Get(context.Background(), naming.MemberLeaseName("ork", "p"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder(member) != "" {
		t.Fatalf("member Lease held by %q after leave: want released", holder(member))
	}
	g.clk.Step(2 * time.Second)
	before := g.writes.Load()
	g.round(true)
	if g.r.member != nil || g.writes.Load()-before != 2 || len(g.m.Held()) != 2 {
		t.Errorf("stopping round: member taken back %v, %d bucket writes, holds %v: want no member, both buckets renewed",
			g.r.member != nil, g.writes.Load()-before, g.m.Held())
	}
	if member, _ = g.raw.Leases("ns").Get(context.Background(), naming.MemberLeaseName("ork", "p"), metav1.GetOptions{}); holder(member) != "" {
		t.Errorf("member Lease held by %q after a stopping round: want it left released", holder(member))
	}
}

// A bucket Lease held in this replica's name that is not among its buckets (a take whose
// answer was lost, a release that failed) is taken back at the next round, not left to
// nobody until it expires.
func TestALeaseInThisReplicasNameIsTakenBack(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	// Forget bucket 1 as a lost answer would: its Lease still names p_1.
	delete(g.r.buckets, 1)
	g.m.held[1].Store(nil)
	g.clk.Step(2 * time.Second)
	g.round(false)
	if got := g.m.Held(); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("holds %v after the round: want bucket 1 taken back", got)
	}
}

// A take whose mode check ended late (a slow apiserver: here 9 s of the 10 s renew
// deadline gone by the check) is renewed before its work starts, so that the next round
// does not lose it.
func TestATakeEndingLateIsRenewedBeforeItsWork(t *testing.T) {
	g := newRing(t, 2)
	g.round(false) // the member Lease
	g.clk.Step(2 * time.Second)
	g.before = func(verb, name string) {
		if verb == "list" {
			g.clk.Step(9 * time.Second) // the check after the takes is slow
		}
	}
	g.round(false)
	g.before = nil
	if !slices.Equal(g.taken, []int{0, 1}) {
		t.Fatalf("work started for %v: want both buckets", g.taken)
	}
	if got := g.m.untilExpiry(g.r); got < 9*time.Second {
		t.Errorf("%s left before the renew deadline once the work started: want the take renewed (nearly 10 s)", got)
	}
}

// A bucket handed back and taken again before the held set was reported is reported all
// the same: reported as no change, it would start no new holding, and its custom
// resources would get no take pass.
func TestABucketTakenBackBeforeAReportIsReported(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	g.m.reportHeld(g.r)
	g.m.handBack(g.r, 1, "test")
	g.m.finishHandBack(g.r, <-g.r.drained) // released; no report in between
	g.clk.Step(2 * time.Second)
	g.round(false) // below the share: takes bucket 1 back
	g.m.reportHeld(g.r)
	if len(g.held) != 2 || !slices.Equal(g.held[1], []int{0, 1}) {
		t.Errorf("held sets reported %v: want [0 1] twice, the take back reported", g.held)
	}
}

// A bucket handed back and not taken again is reported gone.
func TestAHandBackIsReported(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	g.m.reportHeld(g.r)
	g.m.handBack(g.r, 1, "test")
	g.m.finishHandBack(g.r, <-g.r.drained)
	g.m.reportHeld(g.r)
	if len(g.held) != 2 || !slices.Equal(g.held[1], []int{0}) {
		t.Errorf("held sets reported %v: want [0 1], then [0]", g.held)
	}
}

// A bucket lost and taken back within one round (its renewal hung until its deadline, then
// its Lease, still in this replica's name, taken again) is reported: the held set is the
// same before and after the round, but the loss stopped the bucket's work, and without a
// report the engine's caches never list again and its custom resources get no take pass.
func TestABucketLostAndTakenBackInOneRoundIsReported(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	g.m.reportHeld(g.r)
	// One millisecond of the renew deadline left: bucket 1's renewal hangs for it.
	g.clk.Step(g.m.opts.RenewDeadline - time.Millisecond)
	renewing0 := make(chan struct{})
	var once sync.Once
	g.before = func(verb, name string) {
		if verb == "update" && name == naming.BucketLeaseName("ork", 0, 2) {
			once.Do(func() { close(renewing0) })
		}
	}
	var hung atomic.Bool
	g.block = func(ctx context.Context, name string) error {
		if name != naming.BucketLeaseName("ork", 1, 2) || !hung.CompareAndSwap(false, true) {
			return nil // only the renewal hangs, not the take that follows
		}
		<-ctx.Done()
		// The fake clock reaches the deadline too, once bucket 0's renewal has read it.
		<-renewing0
		g.clk.Step(2 * time.Millisecond)
		return ctx.Err()
	}
	g.round(false)
	g.before, g.block = nil, nil
	if !slices.Equal(g.lost, []int{1}) || !slices.Equal(g.taken, []int{0, 1, 1}) {
		t.Fatalf("lost %v, taken %v: want bucket 1 lost and taken back in the round", g.lost, g.taken)
	}
	g.m.reportHeld(g.r)
	if len(g.held) != 2 || !slices.Equal(g.held[1], []int{0, 1}) {
		t.Errorf("held sets reported %v: want [0 1] twice, the take back reported", g.held)
	}
}

// A stop's hand-backs drain until the stop's moment plus HandBackTimeout, not from whenever
// the loop got to them (a round in flight delays it): the engine's own drain counts its
// shutdown timeout from the same moment, so the two end together.
func TestAStopsHandBacksShareTheStopsDeadline(t *testing.T) {
	g := newRing(t, 2)
	g.join()
	deadlines := make(chan time.Time, 1)
	g.m.opts.Drain = func(ctx context.Context, _ int) {
		d, _ := ctx.Deadline()
		deadlines <- d
	}
	// The loop saw the stop 3 s after it came (a round was in flight).
	g.r.stopAt = time.Now().Add(-3 * time.Second)
	g.m.handBack(g.r, 0, "stopping")
	got := <-deadlines
	// Slack: 1 s of the 3 s for this goroutine's scheduling on a busy machine.
	if limit := time.Now().Add(g.m.opts.HandBackTimeout - 2*time.Second); got.After(limit) {
		t.Errorf("the stop's drain runs until %s from now, want at most %s: HandBackTimeout counted from the stop",
			time.Until(got).Round(time.Second), g.m.opts.HandBackTimeout-3*time.Second)
	}
}

// A replica paused (SIGSTOP, a frozen or throttled container) while its member Lease's
// renewal was in flight finds the round's deadline passed when it runs again, the renewal
// failed with it and the last one older than the renew deadline. A pause between two
// renewals ends in a renewal that succeeds; one during a renewal must end the same way when
// the member Lease is still this process's, and in a member loss when it is not or the
// apiserver still does not answer. An apiserver that hangs (no pause: the call ends at its
// deadline) loses the member as before, without a retry.
func TestAPauseDuringTheMemberRenewalIsNotAMemberLoss(t *testing.T) {
	member := naming.MemberLeaseName("ork", "p")
	timeout := func() error {
		return &url.Error{Op: "Put", URL: "https://apiserver/leases/" + member, Err: context.DeadlineExceeded}
	}
	conflict := func() error {
		return apierrors.NewConflict(coordinationv1.Resource("leases"), member, errors.New("the object has been modified"))
	}
	for _, tc := range []struct {
		name string
		// answer answers the n-th update of the member Lease in the round (from 1); nil
		// passes it on. The first one's pause has stepped the clock by then.
		answer   func(g *ring, n int) error
		pause    time.Duration
		wantLost string // "" for a member renewed
		updates  int    // of the member Lease, the answered ones included
	}{{
		name: "the cut renewal was not applied",
		answer: func(_ *ring, n int) error {
			if n == 1 {
				return timeout()
			}
			return nil
		},
		pause:   20 * time.Second,
		updates: 2,
	}, {
		name:    "the renewal was answered, the answer as old as the pause",
		answer:  func(*ring, int) error { return nil },
		pause:   20 * time.Second,
		updates: 2,
	}, {
		name: "the cut renewal was applied, its answer lost",
		answer: func(g *ring, n int) error {
			switch n {
			case 1:
				l, err := g.raw.Leases("ns").Get(context.Background(), member, metav1.GetOptions{})
				if err != nil {
					return err
				}
				l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(g.clk.Now()))
				if _, err := g.raw.Leases("ns").Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
					return err
				}
				return timeout()
			case 2: // the fake checks no resourceVersion: the apiserver's answer to the old one
				return conflict()
			}
			return nil
		},
		pause:   20 * time.Second,
		updates: 3,
	}, {
		name: "another process took the member Lease meanwhile",
		answer: func(g *ring, n int) error {
			if n > 1 {
				return conflict()
			}
			l, err := g.raw.Leases("ns").Get(context.Background(), member, metav1.GetOptions{})
			if err != nil {
				return err
			}
			l.Spec.HolderIdentity = ptr.To("p_2")
			if _, err := g.raw.Leases("ns").Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
				return err
			}
			return timeout()
		},
		pause:    20 * time.Second,
		wantLost: "another process holds it",
		updates:  2,
	}, {
		name:     "the apiserver does not answer the retry either",
		answer:   func(*ring, int) error { return timeout() },
		pause:    20 * time.Second,
		wantLost: "not renewed within",
		updates:  2,
	}, {
		name:     "no pause: the apiserver hangs until the round's deadline",
		answer:   func(*ring, int) error { return timeout() },
		pause:    5 * time.Second, // RenewDeadline/2, the round's deadline; the last renewal 11 s old then
		wantLost: "not renewed within",
		updates:  1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRing(t, 2)
			g.join()
			updates := 0
			var lostBeforeRetry []int
			var deadlines []time.Time // of each update's context (real time)
			g.block = func(ctx context.Context, name string) error {
				if name != member {
					return nil
				}
				updates++
				d, _ := ctx.Deadline()
				deadlines = append(deadlines, d)
				switch updates {
				case 1:
					g.clk.Step(tc.pause)
				case 2:
					lostBeforeRetry = slices.Clone(g.lost)
				}
				return tc.answer(g, updates)
			}
			g.clk.Step(6 * time.Second)
			err := g.m.round(context.Background(), g.r, leaseStore(g.t, g.raw), false)
			if updates != tc.updates {
				t.Errorf("%d updates of the member Lease, want %d", updates, tc.updates)
			}
			if len(deadlines) > 1 && !deadlines[1].After(deadlines[0]) {
				t.Errorf("the retry's deadline %v is not after the round's %v: it must have one of its own", deadlines[1], deadlines[0])
			}
			if tc.wantLost != "" {
				if !errors.Is(err, ErrMemberLost) || !strings.Contains(err.Error(), tc.wantLost) {
					t.Fatalf("the round: %v, want ErrMemberLost (%s)", err, tc.wantLost)
				}
				return
			}
			if err != nil {
				t.Fatalf("the round: %v, want the member Lease renewed", err)
			}
			l, err := g.raw.Leases("ns").Get(context.Background(), member, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := l.Spec.RenewTime.Time, g.clk.Now(); !got.Equal(want) || holder(l) != "p_1" {
				t.Errorf("member Lease held by %q, renewed at %v; want p_1, renewed at %v (after the pause)", holder(l), got, want)
			}
			if !slices.Equal(lostBeforeRetry, []int{0, 1}) {
				t.Errorf("buckets lost before the retry %v, want both: their work stops before the retry's wait", lostBeforeRetry)
			}
			if g.m.memberPastDeadline() {
				t.Error("the member Lease counts as past its renew deadline right after its renewal")
			}
			if !slices.Equal(g.lost, []int{0, 1}) {
				t.Errorf("buckets lost %v, want both: their renewals are past the deadline after the pause", g.lost)
			}
		})
	}
}
