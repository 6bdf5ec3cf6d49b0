package childwrite

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/runplan"
)

// dryApply is writeChild in a dry run (dryEffects): a server-side dry-run apply of p onto live (nil:
// absent), whose answer, compared with the live object in full, says what would change.
func (w *Writer) dryApply(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object, owned bool) (created, changed bool, err error) {
	if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
		return false, false, err
	}
	var before *unstructured.Unstructured
	if live != nil {
		before, err = w.client(p).Get(ctx, p.obj.GetName(), metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, false, failed(reasonApplyFailed, "read %s/%s: %v", p.gvr.Resource, p.obj.GetName(), err)
		}
	}
	obj := p.sent()
	if before != nil {
		obj = withPreconditions(obj, before, !owned)
	}
	out, err := w.client(p).Apply(ctx, p.obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: naming.FieldManager, Force: p.force, DryRun: w.fx.options()})
	w.countApply(p, err == nil)
	if err != nil {
		return false, false, w.applyError(p, err)
	}
	ref := p.gvr.Resource + "/" + p.obj.GetName()
	if before == nil {
		w.Note(cr, runplan.Change{Action: runplan.Create, Ref: ref, Namespace: p.obj.GetNamespace()})
		return true, false, nil
	}
	fields := changedFields(before.Object, out.Object)
	if len(fields) == 0 {
		return false, false, nil
	}
	w.Note(cr, runplan.Change{Action: runplan.Update, Ref: ref, Namespace: p.obj.GetNamespace(), Fields: fields})
	return false, true, nil
}

// withPreconditions is obj with live's uid (and resourceVersion when adopting) set, as a
// real apply carries them.
func withPreconditions(obj, live *unstructured.Unstructured, adopting bool) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.SetUID(live.GetUID())
	if adopting {
		out.SetResourceVersion(live.GetResourceVersion())
	}
	return out
}
