package shard

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
)

// Two replicas started together, the second's member Lease written just after the first
// one's round: the first takes nothing in the round it joined, so at the next round each
// takes its fair share and no bucket is taken to be handed back.
func TestAJoiningReplicaCountsThePeersStartedWithIt(t *testing.T) {
	const b = 4
	raw := fake.NewClientset().CoordinationV1()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	rv := &atomic.Int64{}
	var takes [2]atomic.Int32
	ms := make([]*Manager, 2)
	rs := make([]*runState, 2)
	for i, member := range []string{"p0", "p1"} {
		m, err := New(Options{
			Client: steppedLeases{raw, func(string, string) {}, rv}, Namespace: "ns", Name: "ork", Member: member,
			Buckets: b, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Clock: clk, OnTake: func(int) { takes[i].Add(1) },
		})
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
		rs[i] = &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: t.Context()}
	}
	round := func(i int) {
		t.Helper()
		if err := ms[i].round(context.Background(), rs[i], leaseStore(t, raw), false); err != nil {
			t.Fatal(err)
		}
	}
	round(0) // p0 joins alone: every bucket is free
	round(1) // p1 joins
	clk.Step(2 * time.Second)
	round(0) // p0 sees 2 live members, after 1: not settled yet
	if ms[0].HoldsAny() {
		t.Fatalf("p0 took %v while the count of members was still moving", ms[0].Held())
	}
	round(1) // p1 saw 2 twice: it takes its share
	clk.Step(2 * time.Second)
	round(0) // p1 holds live buckets: the ring runs, p0 takes the free ones
	for i := range ms {
		if got := len(ms[i].Held()); got != b/2 || takes[i].Load() != b/2 {
			t.Errorf("p%d holds %v after %d takes: want its fair share, %d, taken once each", i, ms[i].Held(), takes[i].Load(), b/2)
		}
	}
}

// leaseStore is a Manager's informer's store as of now. It reports a failed list with
// t.Error, not Fatal: the collision tests call it from other goroutines.
func leaseStore(t *testing.T, raw coordinationv1client.LeasesGetter) cache.Store {
	t.Helper()
	st := cache.NewStore(cache.MetaNamespaceKeyFunc)
	list, err := raw.Leases("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return st
	}
	for i := range list.Items {
		_ = st.Add(&list.Items[i])
	}
	return st
}

// A replica joining a running ring (a live bucket Lease held by another replica) takes the
// free buckets in the round it joined: there is no start-up churn to avoid there, and
// waiting would only delay it.
func TestAReplicaJoiningARunningRingTakesAtOnce(t *testing.T) {
	const b = 4
	raw := fake.NewClientset().CoordinationV1()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	held := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: naming.BucketLeaseName("ork", 0, b), Namespace: "ns", ResourceVersion: "1",
			Annotations: map[string]string{naming.BucketsAnnotation: "4"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other_1"), LeaseDurationSeconds: ptr.To(int32(15))},
	}
	if _, err := raw.Leases("ns").Create(context.Background(), held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{
		Client: steppedLeases{raw, func(string, string) {}, &atomic.Int64{}}, Namespace: "ns", Name: "ork", Member: "p0",
		Buckets: b, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: t.Context()}
	if err := m.round(context.Background(), r, leaseStore(t, raw), false); err != nil {
		t.Fatal(err)
	}
	if got := m.Held(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("p0 holds %v after the round it joined a running ring: want the free buckets [1 2 3]", got)
	}
}
