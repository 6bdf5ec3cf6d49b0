package childwrite

import (
	"cmp"
	"context"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/trace"
)

const reasonPruneFailed = "PruneFailed"

// pruneCandidate is a child the result no longer lists, as the cache shows it.
type pruneCandidate struct {
	gvr schema.GroupVersionResource
	ref Ref
	obj metav1.Object
}

// Prune deletes (background propagation) the children of cr that the result no longer
// lists: objects of the managed types that cr controls and ork labelled, but not one
// annotated prune: "false". Candidates come from the child caches; each delete carries the
// cached object's uid and resourceVersion as preconditions, so it happens only if the live
// object is still the one judged prunable (a child someone annotated, or handed to another
// owner, since the cache saw it is read again and judged anew). No child lock is taken:
// those preconditions decide against any concurrent adoption, which carries its own
// resourceVersion precondition.
func (w *Writer) Prune(ctx context.Context, cr *unstructured.Unstructured, rep *Report) error {
	cands := w.pruneCandidates(cr, rep.kept)
	if len(cands) == 0 {
		return nil
	}
	for _, cand := range cands {
		pruned, err := w.pruneOne(ctx, cr, cand)
		if w.Record && pruned && cand.obj != nil {
			rep.Children = append(rep.Children, w.prunedRecord(cand, cand.obj.GetResourceVersion()))
		}
		if err != nil {
			rep.Objects = append(rep.Objects, trace.Apply{Ref: cand.gvr.Resource + "/" + cand.ref.name,
				Namespace: cand.ref.namespace, Outcome: trace.Failed, Error: err.Error()})
			return err
		}
		if pruned {
			if rep.pruned == nil {
				rep.pruned = map[Ref]bool{}
			}
			rep.pruned[cand.ref] = true
			rep.Pruned++
			rep.Objects = append(rep.Objects, trace.Apply{Ref: cand.gvr.Resource + "/" + cand.ref.name,
				Namespace: cand.ref.namespace, Outcome: trace.Pruned})
		}
	}
	return nil
}

// pruneCandidates are the cached children of cr not in kept that may be pruned, in a stable
// order.
func (w *Writer) pruneCandidates(cr *unstructured.Unstructured, kept map[Ref]bool) []pruneCandidate {
	var out []pruneCandidate
	for _, ch := range w.Children {
		objs, err := ch.Store.ByIndex(OwnerIndex, string(cr.GetUID()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil {
				continue
			}
			ref := RefOf(ch.GVR.GroupResource(), m)
			if !kept[ref] && w.prunable(cr, m) {
				out = append(out, pruneCandidate{gvr: ch.GVR, ref: ref, obj: m})
			}
		}
	}
	// Children ork wrote for cr that the cache has not seen yet (the pass before created
	// them moments ago): read live by pruneOne. Their add event, ork's own write, queues
	// nothing, so only this pass would prune them.
	seen := map[Ref]bool{}
	for _, cand := range out {
		seen[cand.ref] = true
	}
	for _, ref := range w.Book.writtenFor(cr.GetUID()) {
		if kept[ref] || seen[ref] {
			continue
		}
		for _, ch := range w.Children {
			if ch.GVR.GroupResource() == ref.gr {
				if _, cached, _ := ch.Store.GetByKey(ref.key()); !cached {
					out = append(out, pruneCandidate{gvr: ch.GVR, ref: ref})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b pruneCandidate) int {
		return cmp.Or(cmp.Compare(a.ref.gr.String(), b.ref.gr.String()),
			cmp.Compare(a.ref.namespace, b.ref.namespace), cmp.Compare(a.ref.name, b.ref.name))
	})
	return out
}

// prunable: controlled by cr, labelled by ork, not kept by its annotation, not already
// going.
func (w *Writer) prunable(cr *unstructured.Unstructured, child metav1.Object) bool {
	return w.controls(cr, child) && child.GetLabels()[naming.ManagedByLabel] == naming.ManagedBy &&
		child.GetAnnotations()[naming.PruneAnnotation] != "false" && child.GetDeletionTimestamp() == nil
}

// pruneOne deletes one candidate if it is still prunable; false when it no longer is (or is
// gone already). ork's delete is noted first, so that its event costs no call.
func (w *Writer) pruneOne(ctx context.Context, cr *unstructured.Unstructured, cand pruneCandidate) (bool, error) {
	live := cand.obj
	if live == nil { // not cached yet
		var err error
		if live, err = w.readChildMeta(ctx, cand.gvr, cand.ref, reasonPruneFailed); err != nil {
			return false, err
		}
	}
	for range writeAttempts {
		if live == nil || !w.prunable(cr, live) {
			return false, nil
		}
		if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
			return false, err
		}
		uid, rv := live.GetUID(), live.GetResourceVersion()
		w.fx.pruning(cand.ref, uid)
		err := w.Meta.Resource(cand.gvr).Namespace(cand.ref.namespace).Delete(ctx, cand.ref.name, metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
			PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
			DryRun:            w.fx.options(),
		})
		if err == nil {
			w.fx.pruned(cr, cand.gvr, cand.ref)
			return true, nil
		}
		w.fx.notPruned(cand.ref, uid)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case errors.Is(err, w.NotLeader):
			return false, w.NotLeader
		case !precondition.Failed(err):
			return false, failed(reasonPruneFailed, "prune %s/%s: %v", cand.gvr.Resource, cand.ref.name, err).withCause(err)
		}
		// Changed or replaced since the cache saw it: judge the live object.
		if live, err = w.readChildMeta(ctx, cand.gvr, cand.ref, reasonPruneFailed); err != nil {
			return false, err
		}
	}
	return false, failed(reasonPruneFailed, "prune %s/%s: the object kept changing under %d deletes", cand.gvr.Resource, cand.ref.name, writeAttempts)
}

// readChildMeta reads a child's metadata from the apiserver; nil when absent. A failure
// is reported under reason (the apply's or the prune's).
func (w *Writer) readChildMeta(ctx context.Context, gvr schema.GroupVersionResource, ref Ref, reason string) (metav1.Object, error) {
	u, err := w.Meta.Resource(gvr).Namespace(ref.namespace).Get(ctx, ref.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, failed(reason, "read %s/%s: %v", gvr.Resource, ref.name, err).withCause(err)
	}
	return u, nil
}
