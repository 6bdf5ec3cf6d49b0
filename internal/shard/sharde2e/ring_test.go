package sharde2e_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

func TestRingHoldsEveryBucketOnce(t *testing.T) {
	const b = 8
	r := newRing(t)
	r.watchOverlaps(b)
	m1, m2, m3 := r.start("p1", b), r.start("p2", b), r.start("p3", b)
	// Start-up: each takes its member Lease, then its share; 30 s only catches a hang.
	testkit.Eventually(t, "every bucket held once", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, m1, m2, m3)
	})
	// ork trace finds the replica of a CR through its bucket Lease.
	for range 5 {
		uid := uuid.NewUUID()
		who, lease, err := shard.HolderOf(t.Context(), env.Clientset.CoordinationV1(), r.ns, r.name, uid)
		if err != nil {
			t.Fatal(err)
		}
		if lease != naming.BucketLeaseName(r.name, shard.BucketOf(uid, b), b) {
			t.Errorf("HolderOf(%s) found Lease %s, want bucket %d's", uid, lease, shard.BucketOf(uid, b))
		}
		for _, mem := range []*member{m1, m2, m3} {
			if mem.m.HoldsUID(uid) != (who == mem.m.Identity()) {
				t.Errorf("HolderOf(%s) = %q, but %s's guard says %v", uid, who, mem.pod, mem.m.HoldsUID(uid))
			}
		}
	}
	for _, mem := range []*member{m1, m2, m3} {
		if n := len(mem.m.Held()); n < b/3 {
			t.Errorf("member %s holds %d buckets, want at least %d", mem.pod, n, b/3)
		}
	}
	leases, err := env.Clientset.CoordinationV1().Leases(r.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range leases.Items {
		names = append(names, l.Name)
		if got := l.Annotations[naming.BucketsAnnotation]; got != strconv.Itoa(b) {
			t.Errorf("Lease %s: %s = %q, want %q", l.Name, naming.BucketsAnnotation, got, strconv.Itoa(b))
		}
	}
	want := []string{"ork-member-p1", "ork-member-p2", "ork-member-p3"}
	for i := range b {
		want = append(want, naming.BucketLeaseName("ork", i, b))
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("Leases %v, want %v", names, want)
	}

	// A stop drains and releases: the Lease is free at once, not left to expire.
	m3.stop(t)
	for _, e := range r.eventsOf("p3") {
		if e.what == "drain" && !e.holds {
			t.Errorf("p3's guard was false while bucket %d drained: in-flight work could not finish", e.bucket)
		}
	}
	leases, err = env.Clientset.CoordinationV1().Leases(r.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if h := l.Spec.HolderIdentity; h != nil && *h == m3.m.Identity() {
			t.Errorf("Lease %s still held by the stopped p3", l.Name)
		}
	}
	// The survivors take the released buckets within a few rounds (no expiry to wait for).
	testkit.Eventually(t, "p3's buckets taken by p1 and p2", 50*time.Millisecond, 4*jitteredRetry+slack, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, m1, m2)
	})
}

func TestSilentMemberLosesItsBuckets(t *testing.T) {
	const b = 8
	r := newRing(t)
	r.watchOverlaps(b)
	m1, m2, m3 := r.start("p1", b), r.start("p2", b), r.start("p3", b)
	testkit.Eventually(t, "every bucket held once", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, m1, m2, m3)
	})
	lostBuckets := m3.m.Held()

	// p3 keeps running but reaches the apiserver no more.
	cut := time.Now()
	m3.partitioned.Store(true)
	// It notices within the renew deadline plus a round, and its Run ends with the member
	// Lease lost; its guard is false from the renew deadline on, whatever it noticed.
	select {
	case err := <-m3.done:
		if !errors.Is(err, shard.ErrMemberLost) {
			t.Fatalf("p3's Run returned %v, want ErrMemberLost", err)
		}
		m3.done <- err
		if took := time.Since(cut); took > renewDeadline+jitteredRetry+slack {
			t.Errorf("p3 noticed its loss after %s, want within %s", took, renewDeadline+jitteredRetry+slack)
		}
	case <-time.After(renewDeadline + jitteredRetry + slack):
		t.Fatalf("p3 still runs %s after it was cut off", renewDeadline+jitteredRetry+slack)
	}
	if m3.m.HoldsAny() {
		t.Errorf("p3's guard still holds %v", m3.m.Held())
	}
	lost := 0
	for _, e := range r.eventsOf("p3") {
		if e.what == "lost" {
			lost++
		}
	}
	if lost != len(lostBuckets) {
		t.Errorf("p3 reported %d buckets lost, want %d (%v)", lost, len(lostBuckets), lostBuckets)
	}

	// The others see p3's Leases stop changing; once they have run out (LeaseDuration after
	// the last renewal, which was before the cut), p3 no longer counts as a member, the
	// share grows, and the next round or two take its buckets.
	bound := leaseDuration + 2*jitteredRetry + slack
	testkit.Eventually(t, "p3's buckets taken by p1 and p2", 50*time.Millisecond, 2*bound, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, m1, m2)
	})
	took := time.Since(cut)
	t.Logf("p3's buckets were taken %s after the cut", took)
	if took > bound {
		t.Errorf("p3's buckets were taken %s after the cut, want within LeaseDuration + 2 × RetryPeriod × 1.2 + %s slack = %s", took, slack, bound)
	}
}

func TestJoiningMemberGetsItsShareByHandBack(t *testing.T) {
	const b = 8
	r := newRing(t)
	r.watchOverlaps(b)
	m1, m2 := r.start("p1", b), r.start("p2", b)
	testkit.Eventually(t, "every bucket held once", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, m1, m2)
	})
	joined := time.Now()
	m3 := r.start("p3", b)
	// p3's first round takes its member Lease; the others' next round sees it and hands
	// back what is above ⌈8/3⌉ = 3; p3 takes the released Leases at once. Two Lease
	// periods bound it (the budget for a joiner).
	testkit.Eventually(t, "p3 holds a share", 50*time.Millisecond, 2*leaseDuration, func(ctx context.Context) (bool, error) {
		ok, err := r.covered(ctx, b, m1, m2, m3)
		return ok && len(m3.m.Held()) >= b/3, err
	})
	t.Logf("p3 held its share %s after it joined", time.Since(joined))
	for _, mem := range []*member{m1, m2} {
		select {
		case err := <-mem.done:
			t.Fatalf("member %s stopped when p3 joined: %v", mem.pod, err)
		default:
		}
	}
	// Every bucket p3 took was drained and released by its holder first (or never held).
	released := map[int]bool{}
	everTaken := map[int]bool{}
	for _, e := range r.eventsOf("") {
		switch {
		case e.what == "drain" && !e.holds:
			t.Errorf("%s drained bucket %d without holding it", e.member, e.bucket)
		case e.what == "lost":
			t.Errorf("%s lost bucket %d: a join must hand buckets back, not lose them", e.member, e.bucket)
		case e.what == "release":
			released[e.bucket] = true
		case e.what == "take" && e.member == "p3":
			if everTaken[e.bucket] && !released[e.bucket] {
				t.Errorf("p3 took bucket %d before its holder released it", e.bucket)
			}
		}
		if e.what == "take" {
			everTaken[e.bucket] = true
		}
	}
	if len(released) == 0 {
		t.Error("no bucket was handed back")
	}
}

func TestHandBackDrainsWithinTheTimeoutHoldingTheBucket(t *testing.T) {
	const b = 4
	r := newRing(t)
	r.watchOverlaps(b)
	type drained struct {
		bucket    int
		bound     time.Duration // the drain context's deadline, from its start
		heldAtEnd bool
	}
	drains := make(chan drained, b)
	// A drain whose in-flight work never finishes: it is cut off by HandBackTimeout (2 s).
	p1 := r.startDraining("p1", b, func(ctx context.Context, m *shard.Manager, bucket int) {
		start := time.Now()
		deadline, _ := ctx.Deadline()
		<-ctx.Done()
		drains <- drained{bucket: bucket, bound: deadline.Sub(start), heldAtEnd: m.Holds(bucket)}
	})
	testkit.Eventually(t, "p1 holds every bucket", 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, p1)
	})
	p2 := r.start("p2", b)
	for range b / 2 {
		select {
		case d := <-drains:
			if d.bound > 2*time.Second || d.bound < 2*time.Second-100*time.Millisecond {
				t.Errorf("bucket %d drained with a deadline %s after its start, want HandBackTimeout 2s", d.bucket, d.bound)
			}
			if !d.heldAtEnd {
				t.Errorf("p1's guard for bucket %d went false while it drained", d.bucket)
			}
		case <-time.After(2*time.Second + 4*jitteredRetry + slack):
			t.Fatal("p1 handed nothing back to p2")
		}
	}
	testkit.Eventually(t, "p1 and p2 hold two buckets each", 50*time.Millisecond, 4*jitteredRetry+slack, func(ctx context.Context) (bool, error) {
		return r.covered(ctx, b, p1, p2)
	})
}
