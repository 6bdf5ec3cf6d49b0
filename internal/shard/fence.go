package shard

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// FenceLeaderLock wraps the single-leader mode's Lease lock so that it never acquires the
// leader Lease while a bucket Lease of the operator name (any B) is live: a rolling update
// from sharded to single-leader mode waits until the last sharded replica is gone. Renewals
// of a Lease already held pass unchecked. leaseDuration judges Leases that state none.
//
// A refused acquisition is an error from Create or Update: the elector logs it and retries
// after its RetryPeriod, as for any failed write.
func FenceLeaderLock(lock resourcelock.Interface, leases coordinationv1client.LeasesGetter, namespace, name string,
	clk clock.PassiveClock, leaseDuration time.Duration) resourcelock.Interface {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &fencedLock{Interface: lock, leases: leases, ns: namespace, name: name, clock: clk, d: leaseDuration, obs: newObserver()}
}

type fencedLock struct {
	resourcelock.Interface
	leases   coordinationv1client.LeasesGetter
	ns, name string
	clock    clock.PassiveClock
	d        time.Duration
	obs      *observer
	// holding is whether the last Get or write showed this replica as the holder: an
	// Update then is a renewal, otherwise an acquisition.
	holding atomic.Bool
}

func (f *fencedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := f.Interface.Get(ctx)
	f.holding.Store(err == nil && rec != nil && rec.HolderIdentity == f.Identity())
	return rec, raw, err
}

func (f *fencedLock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	if err := f.fence(ctx); err != nil {
		return err
	}
	return f.wrote(rec, f.Interface.Create(ctx, rec))
}

func (f *fencedLock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	if rec.HolderIdentity == f.Identity() && !f.holding.Load() {
		if err := f.fence(ctx); err != nil {
			return err
		}
	}
	return f.wrote(rec, f.Interface.Update(ctx, rec))
}

// wrote notes a successful acquisition: the elector's fast path renews with Update and no
// Get before it, which must not count as another acquisition.
func (f *fencedLock) wrote(rec resourcelock.LeaderElectionRecord, err error) error {
	if err == nil {
		f.holding.Store(rec.HolderIdentity == f.Identity())
	}
	return err
}

func (f *fencedLock) fence(ctx context.Context) error {
	live, err := liveBucketLeases(ctx, f.leases, f.ns, f.name, f.obs, f.clock.Now(), f.d)
	if err != nil {
		return err
	}
	if len(live) > 0 {
		return fmt.Errorf("sharded replicas of %s still hold bucket Leases (%s): not leading until they expire or are released",
			f.name, strings.Join(live, ", "))
	}
	return nil
}

// liveBucketLeases lists the names of the bucket Leases of the operator name, of any B,
// that have a holder and have changed within their duration as obs has seen them (obs
// carries the sightings from one call to the next; a Lease first seen now counts as live).
func liveBucketLeases(ctx context.Context, leases coordinationv1client.LeasesGetter, namespace, name string,
	obs *observer, now time.Time, leaseDuration time.Duration) ([]string, error) {
	list, err := leases.Leases(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Leases in %s: %w", namespace, err)
	}
	var live []string
	for i := range list.Items {
		l := &list.Items[i]
		if _, _, ok := ParseBucketLeaseName(name, l.Name); ok && obs.live(l, now, leaseDuration) {
			live = append(live, l.Name)
		}
	}
	return live, nil
}
