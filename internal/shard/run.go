package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// runState is what Run's goroutine keeps between rounds.
type runState struct {
	member  *coordinationv1.Lease // nil until the member Lease is held
	buckets map[int]*bucketLease
	drained chan *bucketLease
	done    chan struct{} // closed when Run returns: pending drain reports are dropped
	// ctx outlives Run's ctx and the round's: drains and releases run on it.
	ctx context.Context
	// reported is the last held set given to OnHeldChange.
	reported []int
}

// reportHeld calls OnHeldChange when the held set moved since the last call.
func (m *Manager) reportHeld(r *runState) {
	held := m.Held()
	if slices.Equal(held, r.reported) {
		return
	}
	r.reported = held
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
			"lease", MemberLeaseName(m.opts.Name, m.opts.Member))
	}
	inf := m.informer()
	go inf.RunWithContext(apiCtx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // stopped before anything was taken
	}
	r := &runState{buckets: map[int]*bucketLease{}, drained: make(chan *bucketLease), done: make(chan struct{}), ctx: apiCtx}
	defer close(r.done)
	ctxDone := ctx.Done()
	timer := m.clock.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctxDone:
			ctxDone = nil // stopping: hand everything back, keep renewing meanwhile
			for _, b := range slices.Sorted(maps.Keys(r.buckets)) {
				m.handBack(r, b, "stopping")
			}
		case e := <-r.drained:
			m.finishHandBack(r, e)
		case <-timer.C():
			if err := m.round(apiCtx, r, inf.GetStore(), ctxDone == nil); err != nil {
				m.loseAll(r)
				m.reportHeld(r)
				return err
			}
			timer.Reset(wait.Jitter(m.opts.RetryPeriod, 0.2))
		}
		m.reportHeld(r)
		if ctxDone == nil && len(r.buckets) == 0 {
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
	if err := m.holdMember(ctx, r, store); err != nil || r.member == nil {
		return err
	}
	m.renewBuckets(ctx, r)
	if stopping {
		return nil
	}
	v := m.view(store, r)
	// After a collision with a ring of more buckets, this one holds off (modefence.go).
	fenced := v.fenced || m.clock.Now().Before(m.holdOff)
	if fenced != m.fenced.Swap(fenced) {
		m.opts.Log.Info("mode fencing changed: no bucket is taken while a live Lease of the single-leader mode or of another B exists", "fenced", fenced)
	}
	take, back := plan(v.mine, v.takeable, FairShare(m.opts.Buckets, v.live), fenced, m.offset)
	for _, b := range back {
		m.handBack(r, b, fmt.Sprintf("above the fair share %d of %d live members", FairShare(m.opts.Buckets, v.live), v.live))
	}
	m.takeBuckets(ctx, r, take, v.leases)
	return nil
}

// holdMember takes the member Lease (waiting out a predecessor's) or renews it.
func (m *Manager) holdMember(ctx context.Context, r *runState, store cache.Store) error {
	name := MemberLeaseName(m.opts.Name, m.opts.Member)
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
		m.member.Store(&sent)
		m.opts.Log.Info("member Lease taken", "lease", name, "identity", m.opts.Identity)
		return nil
	}
	l, lost, err := m.w.renew(ctx, r.member)
	if lost {
		return fmt.Errorf("%w %s/%s: another process holds it", ErrMemberLost, m.opts.Namespace, name)
	}
	if err != nil {
		if last := m.member.Load(); last != nil && m.clock.Since(*last) > m.opts.RenewDeadline {
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
