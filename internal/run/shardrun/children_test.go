package shardrun_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// childrenConverged waits until each widget's ConfigMap exists with data.v = want and the
// slot label of its owner, at most within.
func (f *fixture) childrenConverged(what string, within time.Duration, want map[string]string, uids map[string]types.UID) {
	f.t.Helper()
	testkit.Eventually(f.t, what, 100*time.Millisecond, within, func(ctx context.Context) (bool, error) {
		for name, v := range want {
			cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("ConfigMap %s missing", name)
			}
			if err != nil {
				return false, err
			}
			if cm.Data["v"] != v {
				return false, fmt.Errorf("ConfigMap %s: data.v %q, want %q", name, cm.Data["v"], v)
			}
			if got, slot := cm.Labels[naming.SlotLabel], naming.SlotOf(uids[name]); got != slot {
				return false, fmt.Errorf("ConfigMap %s: %s %q, want %q (its owner's slot)", name, naming.SlotLabel, got, slot)
			}
		}
		return true, nil
	})
}

// Children carry their owner's slot label, written with the apply, and each replica's child
// cache holds its own buckets' slots: a child deleted behind ork's back is noticed and
// written again by the replica that holds its owner's bucket, and only by it.
func TestChildrenCarryTheirOwnersSlotAndAreWatchedByItsHolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b, n = 4, 24
	want, uids := map[string]string{}, map[string]types.UID{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()], uids[cr.GetName()] = "1", cr.GetUID()
	}
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.waitConverged("every widget reconciled", leaseDuration+slack, want)
	f.childrenConverged("every child labelled with its owner's slot", slack, want, uids)
	holders := f.settled(leaseDuration+slack, b, "a", "c")

	before := len(f.ep.Calls())
	for name := range want {
		if err := env.Clientset.CoreV1().ConfigMaps(f.ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A child's change passes its owner no sooner than ChildMinInterval (1 s) after its
	// last pass; slack for the rest.
	f.childrenConverged("every deleted child written again", time.Second+slack, want, uids)
	if now := f.settled(time.Second, b, "a", "c"); fmt.Sprint(now) != fmt.Sprint(holders) {
		t.Fatalf("the buckets moved meanwhile: %v, then %v", holders, now)
	}
	called := map[string]int{}
	for _, c := range f.ep.Calls()[before:] {
		by, owner := c.Header.Get(replicaHeader), holders[shard.BucketOf(uidOf(c), b)]
		if by != owner {
			t.Errorf("%s called by %s for its child's delete, its bucket held by %s", c.Key, by, owner)
		}
		called[by]++
	}
	if called["a"] == 0 || called["c"] == 0 {
		t.Errorf("calls after the deletes by replica: %v: both replicas should have had children to write again", called)
	}
}
