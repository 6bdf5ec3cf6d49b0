package childwrite

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/run/kobj"
)

// reasonCleanupFailed is the reason of a failed clean-up of a target.
const reasonCleanupFailed = "TargetCleanupFailed"

// Sweep deletes from the target every child cr marks (a Remote writer: no garbage collector
// there follows an ownerReference to the CR), but those whose uid keep holds, and says how
// many of them still exist: the CR's finalizer (naming.TargetCleanupFinalizer) is lifted
// only at zero. It lists live, not from the caches, which may not have heard of a child
// written just before; each delete carries the object's uid as precondition, so a
// replacement someone else made meanwhile is left alone and counted again. keep is for a CR
// that left this target for another: two kubeconfig Secrets may reach one cluster, whose
// children are then the new target's.
func (w *Writer) Sweep(ctx context.Context, cr *unstructured.Unstructured, selector string, keep map[types.UID]bool) (left int, err error) {
	for _, ch := range w.Children {
		list, err := w.Meta.Resource(ch.GVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return 0, failed(reasonCleanupFailed, "list %s on the target: %v", ch.GVR.Resource, err).withCause(err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if !planner.MarkedBy(cr, obj) || keep[obj.GetUID()] {
				continue
			}
			left++
			if obj.GetDeletionTimestamp() != nil {
				continue
			}
			if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
				return 0, err
			}
			ref, uid := RefOf(ch.GVR.GroupResource(), obj), obj.GetUID()
			w.fx.pruning(ref, uid)
			err := w.Meta.Resource(ch.GVR).Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{
				Preconditions:     &metav1.Preconditions{UID: &uid},
				PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
				DryRun:            w.fx.options(),
			})
			switch {
			case err == nil:
				w.fx.pruned(cr, ch.GVR, ref)
			case apierrors.IsNotFound(err):
				w.fx.notPruned(ref, uid)
			default:
				w.fx.notPruned(ref, uid)
				return 0, failed(reasonCleanupFailed, "delete %s/%s on the target: %v", ch.GVR.Resource, obj.GetName(), err).withCause(err)
			}
		}
	}
	return left, nil
}

// Held are the uids of the children cr marks on the target, listed live.
func (w *Writer) Held(ctx context.Context, cr *unstructured.Unstructured, selector string) (map[types.UID]bool, error) {
	held := map[types.UID]bool{}
	for _, ch := range w.Children {
		list, err := w.Meta.Resource(ch.GVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, failed(reasonCleanupFailed, "list %s on the target: %v", ch.GVR.Resource, err).withCause(err)
		}
		for i := range list.Items {
			if planner.MarkedBy(cr, &list.Items[i]) {
				held[list.Items[i].GetUID()] = true
			}
		}
	}
	return held, nil
}

// MarkedOwnerIndex is OwnerIndex for the caches of a target's children: the uid in
// naming.OwnerAnnotation, since no ownerReference there names the CR.
func MarkedOwnerIndex(obj any) ([]string, error) {
	m, err := kobjMeta(obj)
	if err != nil || metav1.GetControllerOf(m) != nil {
		return nil, nil
	}
	if uid := m.GetAnnotations()[naming.OwnerAnnotation]; uid != "" {
		return []string{uid}, nil
	}
	return nil, nil
}

func kobjMeta(obj any) (metav1.Object, error) {
	m, ok := kobj.DeletedMeta(obj)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", obj)
	}
	return m, nil
}
