package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/orkspace/ork/internal/naming"
)

// ErrMemberLost ends Run when this replica loses its member Lease: it can no longer tell
// the others it is alive, so they will take its buckets; the process must exit non-zero.
var ErrMemberLost = errors.New("lost the member Lease")

// Options configure a Manager.
type Options struct {
	// Client writes and reads the Leases; give it a rate limiter of its own (renewals must
	// not queue behind reconcile traffic) allowing (held buckets + 1) writes per
	// RetryPeriod. Required.
	Client coordinationv1client.LeasesGetter
	// Namespace holds the Leases (ork's namespace). Required.
	Namespace string
	// Name is the operator's name, the prefix of every Lease. Required.
	Name string
	// LeaderLease is the single-leader mode's Lease, which fences this mode. Default Name
	// (ork run --lease-name overrides it there).
	LeaderLease string
	// Member names this replica's member Lease: the pod name. Default the hostname.
	Member string
	// MemberUID is the uid of the pod Member names ($POD_UID from the downward API): the
	// member Lease then names that pod as its owner, and the garbage collector deletes it
	// once the pod is gone. The pod must be in Namespace (an owner is looked up in its
	// dependent's namespace: one elsewhere would look gone, and the live Lease be
	// deleted). Default none: the Lease stays after the pod (logged once).
	MemberUID types.UID
	// Identity is the holder identity written into the Leases. Default <Member>_<random>,
	// so that a restarted pod of the same name never mistakes its predecessor's Leases for
	// its own.
	Identity string
	// Buckets is B, a power of two from 2 to 256. Required.
	Buckets int
	// LeaseDuration, RenewDeadline and RetryPeriod mean what they mean for client-go's
	// leader election. Default 15s, 10s, 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HandBackTimeout bounds Drain when a bucket is handed back or on stop: the engine
	// passes its longest call timeout, at most its shutdown timeout. Default 10s.
	HandBackTimeout time.Duration
	// Clock is injected by tests. Default the real clock.
	Clock clock.WithTicker
	// Log gets a line at every take, hand-back and loss. Default discards.
	Log *slog.Logger

	// OnTake is called once this replica holds bucket (its guard is already true). It runs
	// on the Manager's goroutine: it must not block (start the bucket's informer and queue
	// its CRs elsewhere).
	OnTake func(bucket int)
	// Drain is called when bucket is handed back (above the fair share) or on stop: stop
	// taking new work for it and return once its in-flight work is done or ctx ends
	// (HandBackTimeout), cancelling what is left. The guard stays true meanwhile; the Lease
	// is released after Drain returns. Nil drains nothing.
	Drain func(ctx context.Context, bucket int)
	// OnHeldChange is called with the held buckets (sorted; nil for none) whenever they
	// changed, once per round however many buckets moved in it: the moment to restart the
	// informers with the new Selector and SlotValues. Same goroutine rule as OnTake.
	OnHeldChange func(held []int)
	// OnRelease is called when bucket is no longer held: after its Drain and release
	// (lost false), or at once when its Lease was lost (lost true: the guard is already
	// false, stop its work without draining). Same goroutine rule as OnTake.
	OnRelease func(bucket int, lost bool)
}

func (o *Options) complete() error {
	if o.Client == nil || o.Namespace == "" || o.Name == "" {
		return errors.New("shard: Client, Namespace and Name are required")
	}
	if err := naming.ValidBuckets(o.Buckets); err != nil {
		return err
	}
	if o.LeaderLease == "" {
		o.LeaderLease = o.Name
	}
	if o.Member == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return fmt.Errorf("shard: no Member given and no hostname: %w", err)
		}
		o.Member = h
	}
	if o.Identity == "" {
		b := make([]byte, 5)
		_, _ = rand.Read(b)
		o.Identity = o.Member + "_" + hex.EncodeToString(b)
	}
	o.LeaseDuration = orDefault(o.LeaseDuration, 15*time.Second)
	o.RenewDeadline = orDefault(o.RenewDeadline, 10*time.Second)
	o.RetryPeriod = orDefault(o.RetryPeriod, 2*time.Second)
	o.HandBackTimeout = orDefault(o.HandBackTimeout, 10*time.Second)
	// Leases count whole seconds.
	if o.LeaseDuration < time.Second || o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod {
		return fmt.Errorf("shard: want LeaseDuration %s (at least 1s) > RenewDeadline %s > RetryPeriod %s",
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Manager holds this replica's member Lease and its fair share of the bucket Leases.
// Run drives it; Holds, HoldsUID and HoldsAny are its guard, safe from any goroutine.
type Manager struct {
	opts  Options
	clock clock.WithTicker
	obs   *observer
	w     leaseWriter
	// held[i] is set while this replica holds bucket i: when it last sent a successful
	// renewal. Only Run's goroutine writes it; the guard reads it.
	held []atomic.Pointer[time.Time]
	// member is when the member Lease was last renewed (nil until held).
	member atomic.Pointer[time.Time]
	// fenced is the last round's finding of a live Lease of another mode or another B.
	fenced atomic.Bool
	// offset spreads the first bucket each replica tries.
	offset int
	// holdOff is when this replica may take buckets again after its take collided with a
	// ring of more buckets (modefence.go). Only Run's goroutine uses it.
	holdOff time.Time
}

// New checks opts and returns a Manager; nothing runs before Run.
func New(opts Options) (*Manager, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(opts.Identity))
	m := &Manager{
		opts:   opts,
		clock:  opts.Clock,
		obs:    newObserver(),
		held:   make([]atomic.Pointer[time.Time], opts.Buckets),
		offset: int(h.Sum32() % uint32(opts.Buckets)),
	}
	m.w = leaseWriter{m: m}
	return m, nil
}

// Identity is the holder identity this replica writes into its Leases.
func (m *Manager) Identity() string { return m.opts.Identity }

// Holds reports whether this replica holds bucket with its last renewal inside the renew
// deadline: the engine checks it before every endpoint call and every write for a CR of
// that bucket. A Lease has no fencing token; the deadline, shorter than the Lease a
// successor waits out, narrows the window in which two replicas act on one bucket.
func (m *Manager) Holds(bucket int) bool {
	if bucket < 0 || bucket >= len(m.held) {
		return false
	}
	last := m.held[bucket].Load()
	return last != nil && m.clock.Since(*last) <= m.opts.RenewDeadline
}

// HoldsUID is Holds for the bucket of a CR's uid.
func (m *Manager) HoldsUID(uid types.UID) bool { return m.Holds(BucketOf(uid, m.opts.Buckets)) }

// HoldsAny guards writes that belong to no CR (Events, shared reads): true while any
// bucket is held.
func (m *Manager) HoldsAny() bool {
	for i := range m.held {
		if m.Holds(i) {
			return true
		}
	}
	return false
}

// Fenced reports whether the last round found a live Lease of the single-leader mode or of
// another B: this replica then takes no bucket (ready and idle).
func (m *Manager) Fenced() bool { return m.fenced.Load() }

// Held lists the buckets this replica holds, sorted, whether or not within the deadline
// (for the informers' selector and the buckets-held metric).
func (m *Manager) Held() []int {
	var out []int
	for i := range m.held {
		if m.held[i].Load() != nil {
			out = append(out, i)
		}
	}
	return out
}

func (m *Manager) setHeld(bucket int, renewedAt time.Time) { m.held[bucket].Store(&renewedAt) }

// bucketLease is what Run keeps of a bucket it holds.
type bucketLease struct {
	lease    *coordinationv1.Lease
	draining context.CancelFunc // non-nil while handed back and draining
}
