// Package leadership holds ork's leader election and its write guard: which replica may
// write now, asked per custom resource key before every write and call, and again per
// request under client-go.
package leadership

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

var (
	// ErrNotLeader refuses a write of a replica whose Lease may have passed to another.
	ErrNotLeader = errors.New("not the leader: the Lease was not renewed within the renew deadline")
	// ErrLost ends a leader's run at once, without draining.
	ErrLost = errors.New("lost the leader Lease")
)

// Options configure a Leadership.
type Options struct {
	// Enabled turns leader election and the guard on; default false: one replica, every
	// write allowed.
	Enabled bool
	// Config is the cluster's; Run builds its own client for the Lease from it.
	Config *rest.Config
	// Namespace and Name name the Lease; Identity names this replica in it.
	Namespace, Name, Identity string
	// OperatorName is the prefix of the sharded ring's bucket Leases, whose live ones keep
	// this replica from leading (shard.FenceLeaderLock). Default Name.
	OperatorName string
	// LeaseDuration, RenewDeadline and RetryPeriod tune the election; RenewDeadline also
	// bounds the guard (see Leadership).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Log gets the acquire and release lines; default: discarded.
	Log *slog.Logger
}

// Leadership is this replica's hold on the Lease, as the write guard sees it. Leases have no
// fencing: a replica frozen past its Lease (a long pause, a throttled container) may run
// again while another leads, and nothing on the apiserver stops its writes. The guard
// narrows that window: a write goes out only while the last successful renewal is within
// the renew deadline, which is shorter than the Lease a standby waits out.
//
// A write the guard refuses counts as the loss of the Lease: the run stops at once, as when
// the elector itself gives up (a little later), and ork exits to stand by again. Carrying on
// would drop the refused pass's work while this replica may well still lead.
type Leadership struct {
	opts Options
	// armed is set when this replica starts leading: before that (the preflight, CRD
	// install) nothing the guard protects is written.
	armed atomic.Bool
	// lastRenew is when the last successful renewal was sent (with the monotonic clock:
	// a wall-clock step must not move the deadline).
	lastRenew atomic.Pointer[time.Time]
	lost      atomic.Bool
	leading   atomic.Bool
	// onLoss ends the leader's run; set while it leads.
	onLoss atomic.Pointer[func()]
}

// New is a Leadership that does not lead yet (every write allowed until Run leads).
func New(opts Options) *Leadership {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.OperatorName == "" {
		opts.OperatorName = opts.Name
	}
	return &Leadership{opts: opts}
}

// MayWrite is checked before every write for the custom resource of key, and before its
// call to the reconciler (whose side effects are writes too), and again, per request, by
// Transport. It is a function of the key: today one Lease covers every key, the scale-out
// work narrows it to the key's bucket. It returns ErrNotLeader when the write must not go.
func (l *Leadership) MayWrite(key string) error {
	_ = key // one Lease for all keys, for now
	return l.mayWrite(time.Now())
}

// guard is MayWrite as a predicate: whether a write for key may go now.
func (l *Leadership) guard(key string) bool { return l.MayWrite(key) == nil }

// IsLeader reports whether this replica holds the Lease now (always false without
// election).
func (l *Leadership) IsLeader() bool { return l.leading.Load() }

func (l *Leadership) mayWrite(now time.Time) error {
	if !l.opts.Enabled || !l.armed.Load() {
		return nil
	}
	if l.lost.Load() {
		return ErrNotLeader
	}
	if last := l.lastRenew.Load(); last == nil || now.Sub(*last) > l.opts.RenewDeadline {
		l.lose()
		return ErrNotLeader
	}
	return nil
}

func (l *Leadership) renewed(at time.Time) { l.lastRenew.Store(&at) }

// LeadingSince arms the guard as leading does, with the last renewal sent at renewed. It is
// for tests of the guard's users, in other packages, that need a leader whose renewal is
// stale (the renew-deadline path) without an election.
func (l *Leadership) LeadingSince(renewed time.Time) {
	l.renewed(renewed)
	l.armed.Store(true)
}

// Lose takes the Lease as lost, as a refused write does: the leader's run ends, and every
// guarded write from now on is refused. ork itself loses the Lease only by a stale renewal
// (MayWrite) or the elector giving up; Lose is for tests of the guard's users, in other
// packages, that need a lost Lease without an election.
func (l *Leadership) Lose() {
	l.armed.Store(true)
	l.lose()
}

// lose marks the Lease lost and ends the leader's run, once. Before this replica led (the
// elector stopping a standby) the guard stays open: nothing it protects was written.
func (l *Leadership) lose() {
	if l.lost.CompareAndSwap(false, true) {
		if f := l.onLoss.Load(); f != nil {
			(*f)()
		}
	}
}

// Transport refuses every request but a read while this replica may no longer lead. It
// sits under client-go, so it also holds back what happens after ork's own check: a write
// waiting in client-go's retries (429/5xx with Retry-After), an Event sent later by the
// broadcaster.
func (l *Leadership) Transport(next http.RoundTripper) http.RoundTripper {
	return guardTransport{next: next, lead: l}
}

type guardTransport struct {
	next http.RoundTripper
	lead *Leadership
}

func (g guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := g.lead.mayWrite(time.Now()); err != nil {
			return nil, err
		}
	}
	return g.next.RoundTrip(req)
}

// renewTracker is the Lease lock, noting each successful acquire or renewal by this replica.
type renewTracker struct {
	resourcelock.Interface
	lead *Leadership
}

func (t renewTracker) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return t.track(rec, func() error { return t.Interface.Create(ctx, rec) })
}

func (t renewTracker) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return t.track(rec, func() error { return t.Interface.Update(ctx, rec) })
}

func (t renewTracker) track(rec resourcelock.LeaderElectionRecord, write func() error) error {
	sent := time.Now() // the Lease runs from when the request left, not when it came back
	err := write()
	if err == nil && rec.HolderIdentity == t.Identity() {
		t.lead.renewed(sent)
	}
	return err
}
