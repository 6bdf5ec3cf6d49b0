package shard

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestGuardHoldsOnlyInsideTheRenewDeadline(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	m, err := New(Options{
		Client: fake.NewClientset().CoordinationV1(), Namespace: "ns", Name: "ork", Member: "p", Buckets: 16,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	var uid types.UID
	for uid = uuid.NewUUID(); BucketOf(uid, 16) != 3; uid = uuid.NewUUID() {
	}
	if m.Holds(3) || m.HoldsUID(uid) || m.HoldsAny() {
		t.Fatal("a new Manager holds a bucket")
	}
	m.setHeld(3, clk.Now())
	clk.Step(10 * time.Second)
	if !m.Holds(3) || !m.HoldsUID(uid) || !m.HoldsAny() || m.Holds(4) || m.Holds(-1) || m.Holds(16) {
		t.Fatal("at the renew deadline: want bucket 3 held, and only it")
	}
	clk.Step(time.Nanosecond)
	if m.Holds(3) || m.HoldsUID(uid) || m.HoldsAny() {
		t.Error("past the renew deadline the guard still holds bucket 3")
	}
	if got := m.Held(); len(got) != 1 || got[0] != 3 {
		t.Errorf("Held = %v, want [3] until Run drops it", got)
	}
}

func TestOptionsRefuse(t *testing.T) {
	ok := Options{Client: fake.NewClientset().CoordinationV1(), Namespace: "ns", Name: "ork", Member: "p", Buckets: 4}
	for name, mutate := range map[string]func(*Options){
		"B not a power of two":          func(o *Options) { o.Buckets = 12 },
		"no namespace":                  func(o *Options) { o.Namespace = "" },
		"renew deadline past the Lease": func(o *Options) { o.RenewDeadline = 20 * time.Second },
		"a Lease under a second": func(o *Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 900*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
		},
	} {
		o := ok
		mutate(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	m, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if m.opts.LeaderLease != "ork" || m.opts.LeaseDuration != 15*time.Second || len(m.Identity()) <= len("p_") {
		t.Errorf("defaults: %+v", m.opts)
	}
}
