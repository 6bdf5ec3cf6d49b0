package shard

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// steppedLeases passes Lease requests on to a shared fake clientset, calling at before each
// create, update and list: a test puts two replicas' requests in the order it wants from
// there (outside the fake's lock, so a hook may make requests of its own), and once more
// after a list has read ("listed"). Each write gets
// a new resourceVersion, which the fake does not assign, so that expiry is judged as
// against an apiserver.
type steppedLeases struct {
	coordinationv1client.LeasesGetter
	at func(verb, name string)
	rv *atomic.Int64
}

func (s steppedLeases) Leases(ns string) coordinationv1client.LeaseInterface {
	return steppedLeaseInterface{LeaseInterface: s.LeasesGetter.Leases(ns), s: s}
}

type steppedLeaseInterface struct {
	coordinationv1client.LeaseInterface
	s steppedLeases
}

func (l steppedLeaseInterface) stamp(in *coordinationv1.Lease) *coordinationv1.Lease {
	out := in.DeepCopy()
	out.ResourceVersion = strconv.FormatInt(l.s.rv.Add(1), 10)
	return out
}

func (l steppedLeaseInterface) Create(ctx context.Context, in *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error) {
	l.s.at("create", in.Name)
	return l.LeaseInterface.Create(ctx, l.stamp(in), o)
}

func (l steppedLeaseInterface) Update(ctx context.Context, in *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	l.s.at("update", in.Name)
	return l.LeaseInterface.Update(ctx, l.stamp(in), o)
}

func (l steppedLeaseInterface) List(ctx context.Context, o metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	l.s.at("list", "")
	defer l.s.at("listed", "")
	return l.LeaseInterface.List(ctx, o)
}

// collision is a sharded replica (Manager p, B = 2) and a single-leader replica (the
// fenced lock of "single") over one fake clientset, each with a hook before its requests.
type collision struct {
	t      *testing.T
	raw    coordinationv1client.LeasesGetter
	clk    *clocktesting.FakeClock
	m      *Manager
	r      *runState
	lock   resourcelock.Interface
	taken  atomic.Int32 // OnTake calls: a bucket's work started
	sAt    func(verb, name string)
	lAt    func(verb, name string)
	lWrote atomic.Int32 // the leader's creates and updates of its Lease
}

const collisionB = 2

func newCollision(t *testing.T) *collision {
	t.Helper()
	raw := fake.NewClientset().CoordinationV1()
	c := &collision{t: t, raw: raw, clk: clocktesting.NewFakeClock(time.Unix(1e9, 0))}
	c.sAt, c.lAt = func(string, string) {}, func(string, string) {}
	rv := &atomic.Int64{}
	m, err := New(Options{
		Client: steppedLeases{raw, func(v, n string) { c.sAt(v, n) }, rv}, Namespace: "ns", Name: "ork", Member: "p",
		Identity: "p_1", Buckets: collisionB, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second, Clock: c.clk, OnTake: func(int) { c.taken.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	c.m = m
	c.r = &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: t.Context()}
	// The replica has joined: its member Lease taken one RetryPeriod ago, so its next
	// round may take buckets.
	c.round()
	if c.r.member == nil || c.m.HoldsAny() {
		t.Fatalf("joining round: member Lease %v, buckets %v: want the member Lease and no bucket", c.r.member != nil, c.m.Held())
	}
	c.clk.Step(2 * time.Second)
	leader := steppedLeases{raw, func(v, n string) {
		if n == "ork" && (v == "create" || v == "update") {
			c.lWrote.Add(1)
		}
		c.lAt(v, n)
	}, rv}
	c.lock = FenceLeaderLock(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: "ork", Namespace: "ns"},
		Client:     leader,
		LockConfig: resourcelock.ResourceLockConfig{Identity: "single"},
	}, leader, "ns", "ork", c.clk, 15*time.Second)
	return c
}

// round is one round of the Manager, its informer's store up to date with the fake.
func (c *collision) round() { c.roundOn(c.store()) }

// store is the Manager's informer's store, as of now: the Manager's first check.
func (c *collision) store() cache.Store { return leaseStore(c.t, c.raw) }

// roundOn is one round of the Manager on the store st.
func (c *collision) roundOn(st cache.Store) {
	if err := c.m.round(context.Background(), c.r, st, false); err != nil {
		c.t.Error(err)
	}
}

// acquire is the elector's acquisition: create the leader Lease, or update it when it
// exists (after a Get, as the elector does).
func (c *collision) acquire() error {
	now := metav1.NewTime(c.clk.Now())
	rec := resourcelock.LeaderElectionRecord{HolderIdentity: "single", LeaseDurationSeconds: 15, AcquireTime: now, RenewTime: now}
	if _, _, err := c.lock.Get(context.Background()); err == nil {
		return c.lock.Update(context.Background(), rec)
	}
	return c.lock.Create(context.Background(), rec)
}

// holders are the holders of the Leases by name ("" for none).
func (c *collision) holders() map[string]string {
	list, err := c.raw.Leases("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for i := range list.Items {
		out[list.Items[i].Name] = holder(&list.Items[i])
	}
	return out
}

// notBoth fails the test when both modes run: the leader acquired (leaderErr nil) while
// the sharded replica holds a bucket or started a bucket's work.
func (c *collision) notBoth(leaderErr error) {
	c.t.Helper()
	if leaderErr == nil && (c.m.HoldsAny() || c.taken.Load() > 0) {
		c.t.Fatalf("both modes run: the single leader acquired its Lease and the sharded replica holds %v (%d takes started)",
			c.m.Held(), c.taken.Load())
	}
}

// Both sides check for the other's live Leases before either writes; then the sharded
// replica takes its buckets (and checks again), and only then does the single leader's
// write land: its check after the write sees the buckets.
func TestModeFenceLeaderWritingLastYields(t *testing.T) {
	c := newCollision(t)
	ran := false
	c.lAt = func(verb, name string) {
		if verb == "create" && name == "ork" && !ran {
			ran = true // the leader's first check is done and found nothing
			c.round()
		}
	}
	err := c.acquire()
	c.notBoth(err)
	if err == nil || !c.m.HoldsAny() || c.taken.Load() != collisionB {
		t.Fatalf("leader: %v; sharded replica holds %v with %d takes: want the replica that wrote and checked first to hold every bucket, the leader refused",
			err, c.m.Held(), c.taken.Load())
	}
	if h := c.holders()["ork"]; h != "" {
		t.Errorf("the leader Lease is still held by %q after the refused acquisition: want it released", h)
	}
}

// The mirror: the sharded replica checked (its cache shows no leader), then the single
// leader checks, writes and checks before the replica's bucket writes land.
func TestModeFenceShardedWritingLastYields(t *testing.T) {
	c := newCollision(t)
	var leaderErr error
	// The takes go out together: each waits until the leader's acquisition is done.
	var once sync.Once
	c.sAt = func(verb, name string) {
		if verb == "create" && strings.Contains(name, "-bucket-") {
			once.Do(func() { leaderErr = c.acquire() })
		}
	}
	c.round()
	c.notBoth(leaderErr)
	if leaderErr != nil || c.m.HoldsAny() || c.taken.Load() != 0 {
		t.Fatalf("leader: %v; sharded replica holds %v with %d takes: want the leader, which wrote and checked first, leading alone",
			leaderErr, c.m.Held(), c.taken.Load())
	}
	for name, h := range c.holders() {
		if strings.Contains(name, "-bucket-") && h != "" {
			t.Errorf("bucket Lease %s still held by %q: want the buckets just taken released", name, h)
		}
	}
	if !c.m.Fenced() {
		t.Error("the sharded replica does not report itself fenced")
	}
}

// Both write before either checks, and both read before either acts: both see the other
// and yield. The single leader, the
// lower mode, then holds off; the sharded replica's next round takes every bucket, and the
// leader, once its hold-off is over, finds them live and writes nothing.
func TestModeFenceCollisionYieldsThenTheRingTakes(t *testing.T) {
	c := newCollision(t)
	lPre, lWrote, sWrote := make(chan struct{}), make(chan struct{}), make(chan struct{})
	lRead, sRead := make(chan struct{}), make(chan struct{})
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-time.After(30 * time.Second): // only a broken interleaving waits this long
			t.Error("interleaving stuck")
		}
	}
	var lLists, lListed atomic.Int32
	c.lAt = func(verb, name string) {
		switch {
		case verb == "create" && name == "ork":
			close(lPre) // its first check is done
		case verb == "list" && lLists.Add(1) == 2: // its check after the write
			close(lWrote)
			wait(sWrote)
		case verb == "listed" && lListed.Add(1) == 2:
			close(lRead)
			wait(sRead)
		}
	}
	var sList, sListed sync.Once
	c.sAt = func(verb, name string) {
		switch {
		// Every take waits, not only the first: the takes go out concurrently, and one let
		// through before the leader's first check would be seen by it, so that the leader
		// refuses without writing and lPre is never closed.
		case verb == "create" && strings.Contains(name, "-bucket-"):
			wait(lPre)
		case verb == "list":
			sList.Do(func() { close(sWrote); wait(lWrote) })
		case verb == "listed":
			sListed.Do(func() { close(sRead); wait(lRead) })
		}
	}
	seen := c.store() // the sharded replica's first check, before the leader writes
	leaderErr := make(chan error, 1)
	go func() { leaderErr <- c.acquire() }()
	c.roundOn(seen)
	err := <-leaderErr
	c.notBoth(err)
	if err == nil || c.m.HoldsAny() {
		t.Fatalf("leader: %v; sharded replica holds %v: want both to yield when each sees the other", err, c.m.Held())
	}

	c.lAt, c.sAt = func(string, string) {}, func(string, string) {}
	wrote := c.lWrote.Load()
	if err := c.acquire(); err == nil || c.lWrote.Load() != wrote {
		t.Fatalf("leader retried at once (err %v, %d writes): want it holding off without a write", err, c.lWrote.Load()-wrote)
	}
	c.round()
	if len(c.m.Held()) != collisionB || c.m.Fenced() {
		t.Fatalf("after the collision the ring's next round holds %v (fenced %v): want every bucket", c.m.Held(), c.m.Fenced())
	}
	c.clk.Step(collisionHoldOff(15*time.Second) + time.Second)
	c.round() // renews the buckets: they are live to the leader
	if err := c.acquire(); err == nil || c.lWrote.Load() != wrote {
		t.Fatalf("leader after its hold-off: err %v, %d writes: want refused, no write, next to the live ring", err, c.lWrote.Load()-wrote)
	}
}

// flakyLeases fails Gets while failGet is set, and each List after the first okLists.
type flakyLeases struct {
	coordinationv1client.LeasesGetter
	failGet atomic.Bool
	lists   atomic.Int32
	okLists atomic.Int32 // negative: every List passes
}

func (f *flakyLeases) Leases(ns string) coordinationv1client.LeaseInterface {
	return flakyLeaseInterface{LeaseInterface: f.LeasesGetter.Leases(ns), f: f}
}

type flakyLeaseInterface struct {
	coordinationv1client.LeaseInterface
	f *flakyLeases
}

func (l flakyLeaseInterface) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	if l.f.failGet.Load() {
		return nil, errors.New("the apiserver is slow")
	}
	return l.LeaseInterface.Get(ctx, name, o)
}

func (l flakyLeaseInterface) List(ctx context.Context, o metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if ok := l.f.okLists.Load(); ok >= 0 && l.f.lists.Add(1) > ok {
		return nil, errors.New("the apiserver is slow")
	}
	return l.LeaseInterface.List(ctx, o)
}

// A failed read never releases the leader Lease: a leader whose Get failed renews without
// a check (it stays the holder), and a candidate whose check after its write could not list
// the Leases refuses to lead but leaves its Lease to expire, so that no other candidate
// takes it at once. Releasing it there let a standby lead beside the old leader.
func TestAFailedCheckNeverReleasesTheLeaderLease(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	leases := &flakyLeases{LeasesGetter: fake.NewClientset().CoordinationV1()}
	leases.okLists.Store(-1)
	lock := FenceLeaderLock(&resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Name: "ork", Namespace: "ns"}, Client: leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: "single"},
	}, leases, "ns", "ork", clk, 15*time.Second)
	now := metav1.NewTime(clk.Now())
	rec := resourcelock.LeaderElectionRecord{HolderIdentity: "single", LeaseDurationSeconds: 15, AcquireTime: now, RenewTime: now}
	holder := func() string {
		l, err := leases.LeasesGetter.Leases("ns").Get(context.Background(), "ork", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return holder(l)
	}
	if err := lock.Create(context.Background(), rec); err != nil {
		t.Fatalf("acquire: %v", err)
	}

	// The leader's renewal fails, then so does the elector's Get; the next renewal's
	// second List would fail too.
	leases.failGet.Store(true)
	if _, _, err := lock.Get(context.Background()); err == nil {
		t.Fatal("the Get did not fail")
	}
	leases.failGet.Store(false)
	leases.lists.Store(0)
	leases.okLists.Store(1)
	if err := lock.Update(context.Background(), rec); err != nil {
		t.Errorf("the renewal after a failed Get: %v", err)
	}
	if h := holder(); h != "single" {
		t.Errorf("after a renewal with a failed read the Lease's holder is %q, want single", h)
	}

	// A candidate (another process of the same identity's lock, holding nothing) whose
	// check after the write fails refuses, and the Lease stays written.
	fresh := FenceLeaderLock(&resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Name: "ork", Namespace: "ns"}, Client: leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: "single"},
	}, leases, "ns", "ork", clk, 15*time.Second)
	leases.lists.Store(0)
	leases.okLists.Store(1)
	if err := fresh.Update(context.Background(), rec); err == nil {
		t.Error("an acquisition whose check after the write failed was taken")
	}
	if h := holder(); h != "single" {
		t.Errorf("after a failed check the Lease's holder is %q, want it left to expire as single's", h)
	}
}
