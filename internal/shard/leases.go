package shard

import (
	"context"
	"fmt"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
)

// leaseWriter makes the Lease writes of one replica. Every update carries the
// resourceVersion of the read it decided on, so two replicas deciding on one read cannot
// both win: that compare-and-swap is the whole of the consensus.
type leaseWriter struct {
	m *Manager
}

// take makes this replica the holder of the Lease named name: creating it when cur is nil,
// else updating cur (free or expired, as read). owners, unless nil, replace the Lease's
// ownerReferences (the member Lease's pod). ok is false when another replica won.
func (w leaseWriter) take(ctx context.Context, name string, cur *coordinationv1.Lease, owners []metav1.OwnerReference) (*coordinationv1.Lease, bool, error) {
	now := metav1.NewMicroTime(w.m.clock.Now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(w.m.opts.Identity),
		LeaseDurationSeconds: ptr.To(int32(w.m.opts.LeaseDuration / time.Second)),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
	leases := w.m.opts.Client.Leases(w.m.opts.Namespace)
	if cur == nil {
		spec.LeaseTransitions = ptr.To(int32(0))
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.m.opts.Namespace, Annotations: w.annotations(nil),
				OwnerReferences: owners},
			Spec: spec,
		}
		created, err := leases.Create(ctx, l, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("create Lease %s: %w", name, err)
		}
		return created, true, nil
	}
	l := cur.DeepCopy()
	spec.LeaseTransitions = l.Spec.LeaseTransitions
	if holder(l) != w.m.opts.Identity {
		spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	}
	l.Spec = spec
	l.Annotations = w.annotations(l.Annotations)
	if owners != nil {
		l.OwnerReferences = owners
	}
	updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("take Lease %s: %w", name, err)
	}
	return updated, true, nil
}

// renew moves the renewTime of a Lease this replica holds. lost is true when the Lease is
// no longer this replica's (another holder, deleted); an error leaves it undecided (the
// caller judges by the renew deadline).
func (w leaseWriter) renew(ctx context.Context, cur *coordinationv1.Lease) (l *coordinationv1.Lease, lost bool, err error) {
	leases := w.m.opts.Client.Leases(w.m.opts.Namespace)
	next := cur.DeepCopy()
	next.Spec.RenewTime = ptr.To(metav1.NewMicroTime(w.m.clock.Now()))
	updated, err := leases.Update(ctx, next, metav1.UpdateOptions{})
	switch {
	case err == nil:
		return updated, false, nil
	case apierrors.IsNotFound(err):
		return nil, true, nil
	case apierrors.IsConflict(err):
		// Someone wrote it: it stays ours only if the holder is still us (then retry with
		// the fresh copy next round).
		live, gerr := leases.Get(ctx, cur.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, apierrors.IsNotFound(gerr), fmt.Errorf("renew Lease %s: %w", cur.Name, gerr)
		}
		if holder(live) != w.m.opts.Identity {
			return nil, true, nil
		}
		return live, false, fmt.Errorf("renew Lease %s: %w", cur.Name, err)
	default:
		return nil, false, fmt.Errorf("renew Lease %s: %w", cur.Name, err)
	}
}

// release gives up a Lease this replica holds, so that the next holder need not wait for
// it to expire (as client-go's ReleaseOnCancel). A conflict means it was not ours any more.
func (w leaseWriter) release(ctx context.Context, cur *coordinationv1.Lease) error {
	l := cur.DeepCopy()
	now := metav1.NewMicroTime(w.m.clock.Now())
	l.Spec.HolderIdentity = nil
	l.Spec.LeaseDurationSeconds = ptr.To(int32(1))
	l.Spec.RenewTime, l.Spec.AcquireTime = &now, &now
	_, err := w.m.opts.Client.Leases(w.m.opts.Namespace).Update(ctx, l, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release Lease %s: %w", cur.Name, err)
	}
	return nil
}

func (w leaseWriter) annotations(in map[string]string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out[naming.BucketsAnnotation] = strconv.Itoa(w.m.opts.Buckets)
	return out
}
