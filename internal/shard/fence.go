package shard

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	"github.com/orkspace/ork/internal/naming"
)

// FenceLeaderLock wraps the single-leader mode's Lease lock so that it never leads while a
// bucket Lease of the operator name (any B) is live: a rolling update from sharded to
// single-leader mode waits until the last sharded replica is gone. An acquisition checks
// for live bucket Leases, writes the leader Lease, then checks again (modefence.go): a
// sharded replica that took a bucket between the first check and the write is seen by
// the second, and the Lease just written is released. Renewals of a Lease this process
// acquired pass unchecked. leaseDuration judges Leases that state none.
//
// A refused acquisition is an error from Create or Update: the elector logs it and retries
// after its RetryPeriod, as for any failed write. After a collision (the second check
// failed) acquisitions are refused without a write for collisionHoldOff, so that the
// sharded replica that collided takes its buckets at its next round.
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
	// holding is set once an acquisition of this process passed its check after the
	// write, and cleared when a Get or a write shows another holder: an Update while it is
	// set is a renewal, otherwise an acquisition. A Get showing this identity does not set
	// it: that may be a Lease whose release after a collision failed.
	holding atomic.Bool
	// holdOff is when acquisitions may be tried again after a collision (nil: none yet).
	holdOff atomic.Pointer[time.Time]
}

func (f *fencedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := f.Interface.Get(ctx)
	// Only an answer that shows another holder, or no Lease, ends the holding: a failed
	// read says nothing, and clearing on it would make the leader's next renewal an
	// acquisition, checked as one.
	if apierrors.IsNotFound(err) || (err == nil && (rec == nil || rec.HolderIdentity != f.Identity())) {
		f.holding.Store(false)
	}
	return rec, raw, err
}

func (f *fencedLock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return f.acquire(ctx, rec, func() error { return f.Interface.Create(ctx, rec) })
}

func (f *fencedLock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	if rec.HolderIdentity == f.Identity() && !f.holding.Load() {
		return f.acquire(ctx, rec, func() error { return f.Interface.Update(ctx, rec) })
	}
	// A renewal, or the elector's release.
	err := f.Interface.Update(ctx, rec)
	if err == nil && rec.HolderIdentity != f.Identity() {
		f.holding.Store(false)
	}
	return err
}

// acquire is check, write, check: the first check keeps the Lease unwritten next to a live
// ring; the second, after the write, is the one a racing sharded replica cannot slip past.
func (f *fencedLock) acquire(ctx context.Context, rec resourcelock.LeaderElectionRecord, write func() error) error {
	if until := f.holdOff.Load(); until != nil && f.clock.Now().Before(*until) {
		return fmt.Errorf("an acquisition of %s collided with sharded replicas taking buckets: not trying again before %s",
			f.name, until.Format(time.RFC3339))
	}
	if _, err := f.fence(ctx); err != nil {
		return err
	}
	if err := write(); err != nil {
		return err
	}
	collided, err := f.fence(ctx)
	if err == nil {
		f.holding.Store(true)
		return nil
	}
	if !collided {
		// The check could not read the Leases: refuse to lead, but keep the Lease written,
		// so that no other candidate takes it before it expires; the next try checks again.
		return fmt.Errorf("checked after writing the Lease: %w (not leading; the Lease expires unless the next check passes)", err)
	}
	until := f.clock.Now().Add(collisionHoldOff(f.d))
	f.holdOff.Store(&until)
	now := metav1.NewTime(f.clock.Now())
	// As the elector releases on a stop: no holder, a one-second Lease.
	released := resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
		LeaderTransitions: rec.LeaderTransitions}
	if rerr := f.Interface.Update(ctx, released); rerr != nil {
		return fmt.Errorf("checked after writing the Lease: %w (releasing it: %w; it expires instead)", err, rerr)
	}
	return fmt.Errorf("checked after writing the Lease, released it: %w", err)
}

// fence refuses (an error) while a bucket Lease is live, or when the Leases cannot be
// read; live is true for the former.
func (f *fencedLock) fence(ctx context.Context) (live bool, err error) {
	names, err := liveBucketLeases(ctx, f.leases, f.ns, f.name, f.obs, f.clock.Now(), f.d)
	if err != nil {
		return false, err
	}
	if len(names) > 0 {
		return true, fmt.Errorf("sharded replicas of %s still hold bucket Leases (%s): not leading until they expire or are released",
			f.name, strings.Join(names, ", "))
	}
	return false, nil
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
		if _, _, ok := naming.ParseBucketLeaseName(name, l.Name); ok && obs.live(l, now, leaseDuration) {
			live = append(live, l.Name)
		}
	}
	return live, nil
}
