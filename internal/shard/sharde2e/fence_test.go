package sharde2e_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1api "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// leader is a single-leader-mode replica: client-go's elector on the Lease <name>, its
// lock wrapped by shard.FenceLeaderLock as ork's single-leader mode would wrap it.
type leader struct {
	le     *leaderelection.LeaderElector
	cancel context.CancelFunc
	done   chan struct{}
	// fences counts the fence's Lease lists: each is one refused or allowed acquisition.
	fences atomic.Int32
}

func (r *ring) startLeader(t *testing.T, identity string) *leader {
	l := &leader{done: make(chan struct{})}
	cs := clientset(t, &atomic.Bool{})
	lock := shard.FenceLeaderLock(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: r.name, Namespace: r.ns},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}, countingLeases{cs.CoordinationV1(), &l.fences}, r.ns, r.name, nil, leaseDuration)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: r.name,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l.le = le
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() { defer close(l.done); le.Run(ctx) }()
	t.Cleanup(l.stop)
	return l
}

// stop ends the elector; with ReleaseOnCancel it releases the Lease before Run returns.
func (l *leader) stop() { l.cancel(); <-l.done }

type countingLeases struct {
	coordinationv1.LeasesGetter
	n *atomic.Int32
}

func (c countingLeases) Leases(ns string) coordinationv1.LeaseInterface {
	return countingLeaseInterface{c.LeasesGetter.Leases(ns), c.n}
}

type countingLeaseInterface struct {
	coordinationv1.LeaseInterface
	n *atomic.Int32
}

func (c countingLeaseInterface) List(ctx context.Context, o metav1.ListOptions) (*coordinationv1api.LeaseList, error) {
	c.n.Add(1)
	return c.LeaseInterface.List(ctx, o)
}

func TestShardedReplicaWaitsForTheLeader(t *testing.T) {
	const b = 4
	r := newRing(t)
	ldr := r.startLeader(t, "single")
	testkit.Eventually(t, "the single leader leads", 50*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) {
		return ldr.le.IsLeader(), nil
	})
	p1 := r.start("p1", b)
	// Its first round with the member Lease finds the leader's Lease live.
	testkit.Eventually(t, "p1 fenced", 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		return p1.m.Fenced(), nil
	})
	// Several more rounds pass while fenced; none may take a bucket.
	rounds := 4 * jitteredRetry
	deadline := time.Now().Add(rounds)
	testkit.Eventually(t, "four rounds fenced", 50*time.Millisecond, rounds+slack, func(context.Context) (bool, error) {
		if p1.m.HoldsAny() || len(r.eventsOf("p1")) > 0 {
			return false, testkit.Permanent(errTookWhileFenced)
		}
		return time.Now().After(deadline), nil
	})
	if !ldr.le.IsLeader() {
		t.Fatal("the single leader lost its Lease")
	}

	ldr.stop() // releases the leader Lease
	testkit.Eventually(t, "p1 takes every bucket once the leader released", 50*time.Millisecond, 4*jitteredRetry+slack, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, p1)
	})
	if p1.m.Fenced() {
		t.Error("p1 still reports itself fenced")
	}
}

func TestLeaderWaitsForShardedReplicas(t *testing.T) {
	const b = 4
	r := newRing(t)
	p1 := r.start("p1", b)
	testkit.Eventually(t, "p1 holds every bucket", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, p1)
	})
	ldr := r.startLeader(t, "single")
	// Each acquisition attempt lists the Leases once; three refused attempts are three
	// retry periods of standing by.
	testkit.Eventually(t, "three fenced acquisitions", 50*time.Millisecond, 3*jitteredRetry+slack, func(context.Context) (bool, error) {
		if ldr.le.IsLeader() {
			return false, testkit.Permanent(errLedWhileSharded)
		}
		return ldr.fences.Load() >= 3, nil
	})
	if _, err := env.Clientset.CoordinationV1().Leases(r.ns).Get(t.Context(), r.name, metav1.GetOptions{}); err == nil {
		t.Errorf("the leader Lease %s was written while bucket Leases were live", r.name)
	}

	p1.stop(t) // releases every bucket Lease
	testkit.Eventually(t, "the single leader leads once p1 released", 50*time.Millisecond, 2*jitteredRetry+slack, func(context.Context) (bool, error) {
		return ldr.le.IsLeader(), nil
	})
}

func TestRingOfAnotherBWaits(t *testing.T) {
	r := newRing(t)
	p1 := r.start("p1", 4)
	testkit.Eventually(t, "p1 holds every bucket of 4", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, 4, p1)
	})
	q1 := r.start("q1", 8)
	testkit.Eventually(t, "q1 fenced by the ring of 4", 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		return q1.m.Fenced(), nil
	})
	rounds := 4 * jitteredRetry
	deadline := time.Now().Add(rounds)
	testkit.Eventually(t, "four rounds fenced", 50*time.Millisecond, rounds+slack, func(context.Context) (bool, error) {
		if q1.m.HoldsAny() {
			return false, testkit.Permanent(errTookWhileFenced)
		}
		// q1's member Lease records 8 buckets: p1 does not count it, keeps its share of 4.
		if n := len(p1.m.Held()); n != 4 {
			return false, testkit.Permanent(errShareChanged)
		}
		return time.Now().After(deadline), nil
	})

	p1.stop(t)
	testkit.Eventually(t, "q1 takes every bucket of 8 once p1 released", 50*time.Millisecond, 4*jitteredRetry+slack, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, 8, q1)
	})
}
