package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
)

// runState is what Run's goroutine keeps between rounds.
type runState struct {
	member  *coordinationv1.Lease // nil until the member Lease is held
	buckets map[int]*bucketLease
	drained chan *bucketLease
	done    chan struct{} // closed when Run returns: pending drain reports are dropped
	// ctx outlives Run's ctx and the round's: drains and releases run on it.
	ctx context.Context
	// reported is the last held set given to OnHeldChange; mustReport is set when a bucket
	// was released or lost since (finishHandBack, loseBucket): the next report is made even
	// if the set is the same again.
	reported   []int
	mustReport bool
	// left is set once the member Lease is released while stopping: it is not taken again.
	left bool
	// Before its first take, a replica waits for the count of live members to settle
	// (settling): joined is when its member Lease was taken, lastLive the count its last
	// round saw, settled set once it may take.
	joined   time.Time
	lastLive int
	settled  bool
	// stopAt is when Run's ctx ended (wall clock, as the drains' deadlines are): a stop's
	// hand-backs drain until stopAt + HandBackTimeout, however late a round in flight let
	// the loop see the stop, so that they end within the engine's own shutdown timeout,
	// counted from the same moment.
	stopAt time.Time
}

// reportHeld calls OnHeldChange when the held set moved since the last call.
func (m *Manager) reportHeld(r *runState) {
	held := m.Held()
	if slices.Equal(held, r.reported) && !r.mustReport {
		return
	}
	r.reported, r.mustReport = held, false
	if m.opts.OnHeldChange != nil {
		m.opts.OnHeldChange(held)
	}
}

// Run takes the member Lease, then, every RetryPeriod (jittered), renews what it holds and
// takes or hands back buckets toward the fair share. It returns nil after ctx ends and
// every held bucket has been drained and released (and the member Lease with them), or
// ErrMemberLost (wrapped) at once when the member Lease is lost: every bucket is then
// reported lost and left to expire.
func (m *Manager) Run(ctx context.Context) error {
	// API calls outlive ctx: stopping still renews while the buckets drain, then releases.
	apiCtx, stopAPI := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAPI()
	if m.opts.MemberUID == "" {
		m.opts.Log.Info("the member Lease names no pod as its owner ($POD_UID unset, or ork's namespace is not its pod's): it stays after the pod is gone",
			"lease", naming.MemberLeaseName(m.opts.Name, m.opts.Member))
	}
	inf := m.informer()
	go inf.RunWithContext(apiCtx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // stopped before anything was taken
	}
	r := &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: apiCtx}
	defer close(r.done)
	var stopAt atomic.Pointer[time.Time]
	defer context.AfterFunc(ctx, func() { now := time.Now(); stopAt.Store(&now) })()
	ctxDone := ctx.Done()
	timer := m.clock.NewTimer(0)
	defer timer.Stop()
	// expiry fires at the earliest renew deadline of the held buckets, so that a bucket
	// whose renewals fail is lost (its work cancelled) at its deadline, not at the end of
	// a round that may come seconds later, when its successor could already be calling.
	expiry := m.clock.NewTimer(m.opts.RenewDeadline)
	defer expiry.Stop()
	for {
		select {
		case <-ctxDone:
			ctxDone = nil // stopping: hand everything back, keep renewing meanwhile
			r.stopAt = time.Now()
			if at := stopAt.Load(); at != nil {
				r.stopAt = *at
			}
			m.leave(apiCtx, r)
			for _, b := range slices.Sorted(maps.Keys(r.buckets)) {
				m.handBack(r, b, "stopping")
			}
		case e := <-r.drained:
			// The held set is reported at the next round, not here: drains end one by one,
			// and each report restarts every informer (each restart a relist).
			m.finishHandBack(r, e)
		case <-expiry.C():
			m.loseExpired(r)
			m.reportHeld(r)
		case <-timer.C():
			if err := m.round(apiCtx, r, inf.GetStore(), ctxDone == nil); err != nil {
				m.loseAll(r)
				m.reportHeld(r)
				return err
			}
			m.reportHeld(r)
			timer.Reset(wait.Jitter(m.opts.RetryPeriod, 0.2))
		}
		expiry.Reset(m.untilExpiry(r))
		if ctxDone == nil && len(r.buckets) == 0 {
			m.reportHeld(r)
			if r.member != nil {
				rctx, cancel := context.WithTimeout(apiCtx, m.opts.RenewDeadline/2)
				defer cancel()
				if err := m.w.release(rctx, r.member); err != nil {
					return err
				}
			}
			m.member.Store(nil)
			return nil
		}
	}
}

// untilExpiry is the time to the earliest renew deadline of the held buckets (a
// RenewDeadline when none is held: the timer then finds nothing to do).
func (m *Manager) untilExpiry(r *runState) time.Duration {
	next := m.opts.RenewDeadline
	for b := range r.buckets {
		if last := m.held[b].Load(); last != nil {
			next = min(next, max(0, m.opts.RenewDeadline-m.clock.Since(*last)))
		}
	}
	return next + time.Millisecond // past the deadline, not on it: Holds is inclusive
}

// loseExpired loses the held buckets past their renew deadline.
func (m *Manager) loseExpired(r *runState) {
	for _, b := range slices.Sorted(maps.Keys(r.buckets)) {
		if !m.Holds(b) {
			m.loseBucket(r, b, fmt.Sprintf("not renewed within %s", m.opts.RenewDeadline))
		}
	}
}

// leave releases the member Lease as this replica starts stopping: the others stop
// counting it at once, so their fair share grows and each bucket it hands back is taken
// as soon as it is released (counted, they would leave those buckets free for a round or
// more). The bucket Leases, still renewed while they drain, fence the work meanwhile.
func (m *Manager) leave(ctx context.Context, r *runState) {
	if r.member == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, m.opts.RenewDeadline/2)
	defer cancel()
	if err := m.w.release(rctx, r.member); err != nil {
		m.opts.Log.Error("release the member Lease while stopping (it expires instead)", "err", err)
	}
	r.member, r.left = nil, true
}

// informer watches the Leases of ork's namespace; its events time the expiry of the
// others' Leases (observer).
func (m *Manager) informer() cache.SharedIndexInformer {
	leases := m.opts.Client.Leases(m.opts.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return leases.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &coordinationv1.Lease{}, 0, cache.Indexers{})
	see := func(obj any) {
		if l, ok := obj.(*coordinationv1.Lease); ok {
			m.obs.observe(l, m.clock.Now())
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
		DeleteFunc: func(obj any) {
			if l, ok := obj.(*coordinationv1.Lease); ok {
				m.obs.forget(l.Name)
			}
		},
	})
	return inf
}

// round is one RetryPeriod's work: the member Lease first (its loss is fatal), then the
// renewals of the held buckets, then the takes and hand-backs toward the fair share (none
// while stopping).
func (m *Manager) round(ctx context.Context, r *runState, store cache.Store, stopping bool) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.RenewDeadline/2)
	defer cancel()
	if !r.left {
		if err := m.holdMember(ctx, r, store); err != nil || r.member == nil {
			return err
		}
	}
	m.renewBuckets(ctx, r)
	if stopping {
		return nil
	}
	v := m.view(store, r)
	if m.settling(r, v) {
		return nil
	}
	// After a collision with a ring of more buckets, this one holds off (modefence.go).
	fenced := v.fenced || m.clock.Now().Before(m.holdOff)
	if fenced != m.fenced.Swap(fenced) {
		m.opts.Log.Info("mode fencing changed: no bucket is taken while a live Lease of the single-leader mode or of another B exists", "fenced", fenced)
	}
	take, back := plan(v.mine, v.takeable, FairShare(m.opts.Buckets, v.live), fenced, m.offset)
	for _, b := range back {
		m.handBack(r, b, fmt.Sprintf("above the fair share %d of %d live members", FairShare(m.opts.Buckets, v.live), v.live))
	}
	m.takeBuckets(r, take, v.leases)
	return nil
}

// settling reports whether this replica must still wait before its first take. Replicas
// started together (a new Deployment, a rollout) write their member Leases within moments
// of each other; one that took at once would count only itself, take every bucket, list
// all their CRs and hand most of them back a round later (the shard bench's ring of 4:
// the first ready took 15 of the 16 buckets and handed 11 back 3 s later). So in a cold
// ring (no live bucket Lease of this B held by another replica) it waits until two rounds
// in a row, at least one RetryPeriod apart, see the same count of live members, at most a
// LeaseDuration. A replica joining a running ring does not wait: it takes only free
// buckets, and the others hand back theirs over the next rounds. Nothing is written while
// it waits: only the start is later.
func (m *Manager) settling(r *runState, v view) bool {
	if r.settled {
		return false
	}
	since := m.clock.Since(r.joined)
	steady := since >= m.opts.RetryPeriod && v.live == r.lastLive
	r.lastLive = v.live
	if !v.warm && !steady && since < m.opts.LeaseDuration {
		return true
	}
	r.settled = true
	return false
}

// holdMember takes the member Lease (waiting out a predecessor's) or renews it.
func (m *Manager) holdMember(ctx context.Context, r *runState, store cache.Store) error {
	name := naming.MemberLeaseName(m.opts.Name, m.opts.Member)
	sent := m.clock.Now()
	if r.member == nil {
		cur := stored(store, m.opts.Namespace, name)
		if cur != nil && holder(cur) != m.opts.Identity && m.obs.live(cur, sent, m.opts.LeaseDuration) {
			m.opts.Log.Info("member Lease held by another process, waiting for it to expire", "lease", name, "holder", holder(cur))
			return nil
		}
		l, ok, err := m.w.take(ctx, name, cur, m.memberOwners())
		if err != nil || !ok {
			if err != nil {
				m.opts.Log.Error("take the member Lease", "lease", name, "err", err)
			}
			return nil
		}
		r.member = l
		r.joined = sent
		m.member.Store(&sent)
		m.opts.Log.Info("member Lease taken", "lease", name, "identity", m.opts.Identity)
		return nil
	}
	l, lost, err := m.w.renew(ctx, r.member)
	if !lost && m.clock.Since(sent) > m.opts.RenewDeadline {
		// The renewal took longer than the whole renew deadline on a deadline of half of
		// it: the process did not run meanwhile (SIGSTOP, a frozen or throttled container).
		// Whatever the renewal's outcome (failed on the deadline that passed meanwhile, or
		// answered, the answer as old as the pause), a pause between two rounds ends in a
		// renewal after it, and so does this one: the buckets, all renewed before the pause
		// and so past their deadlines, are lost first (nothing is held during the retry),
		// then the member Lease is renewed again on a deadline of its own. A shorter pause
		// that cut a renewal is not told from a slow apiserver: past the renew deadline, it
		// loses the member.
		m.loseExpired(r)
		sent = m.clock.Now()
		if l == nil {
			l = r.member
		}
		l, lost, err = m.renewMemberAgain(r, l)
	}
	if lost {
		return fmt.Errorf("%w %s/%s: another process holds it", ErrMemberLost, m.opts.Namespace, name)
	}
	if err != nil {
		if m.memberPastDeadline() {
			return fmt.Errorf("%w %s/%s: not renewed within %s: %w", ErrMemberLost, m.opts.Namespace, name, m.opts.RenewDeadline, err)
		}
		m.opts.Log.Error("renew the member Lease", "lease", name, "err", err)
		if l != nil {
			r.member = l
		}
		return nil
	}
	r.member = l
	m.member.Store(&sent)
	return nil
}

// renewMemberAgain renews the member Lease from after a pause: a Lease another process
// took is lost (the conflict, then another holder); one the cut renewal updated before the
// pause (its answer lost) is still this process's at a newer resourceVersion, and is
// renewed from that.
func (m *Manager) renewMemberAgain(r *runState, from *coordinationv1.Lease) (*coordinationv1.Lease, bool, error) {
	ctx, cancel := context.WithTimeout(r.ctx, m.opts.RenewDeadline/2)
	defer cancel()
	l, lost, err := m.w.renew(ctx, from)
	if err != nil && !lost && l != nil {
		l, lost, err = m.w.renew(ctx, l)
	}
	return l, lost, err
}

// memberPastDeadline reports whether the member Lease's last renewal is older than the
// renew deadline: a renewal failing now loses it.
func (m *Manager) memberPastDeadline() bool {
	last := m.member.Load()
	return last != nil && m.clock.Since(*last) > m.opts.RenewDeadline
}

// memberOwners are the member Lease's ownerReferences: its pod, so that the garbage
// collector deletes the Lease once the pod is gone. blockOwnerDeletion stays false: setting
// it would need the right to update the pod's finalizers. Without MemberUID, none: empty,
// not nil, so that a Lease taken over from a predecessor drops the predecessor's pod
// (whose deletion would otherwise delete this replica's live Lease).
func (m *Manager) memberOwners() []metav1.OwnerReference {
	if m.opts.MemberUID == "" {
		return []metav1.OwnerReference{}
	}
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: m.opts.Member, UID: m.opts.MemberUID,
		BlockOwnerDeletion: ptr.To(false)}}
}

func stored(store cache.Store, ns, name string) *coordinationv1.Lease {
	obj, ok, err := store.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	l, _ := obj.(*coordinationv1.Lease)
	return l
}
