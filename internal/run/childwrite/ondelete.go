package childwrite

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/kobj"
)

// removal is onDelete's judgement of one live object.
type removal int

const (
	notMine removal = iota
	mine
	// legacy is an object with ork's managed-by label and no mark, written by an ork from
	// before the owner annotation: deleted by name, with a log line, for one release.
	legacy
)

func judgeRemoval(cr, live metav1.Object) removal {
	if ref := metav1.GetControllerOf(live); ref != nil {
		if ref.UID == cr.GetUID() {
			return mine
		}
		return notMine
	}
	if owner, marked := live.GetAnnotations()[naming.OwnerAnnotation]; marked {
		if owner == string(cr.GetUID()) {
			return mine
		}
		return notMine
	}
	if live.GetLabels()[naming.ManagedByLabel] == naming.ManagedBy {
		return legacy
	}
	return notMine
}

// RemoveAll deletes the objects of a declarative onDelete block, once per CR: only those the
// CR controls or marks (see judgeRemoval), each with uid and resourceVersion preconditions,
// under the children's locks. Objects already gone or going count as deleted.
func (w *Writer) RemoveAll(ctx context.Context, cr *unstructured.Unstructured, objs []resources.Object) error {
	key := kobj.KeyOf(cr)
	if w.Removed(key, cr.GetUID()) {
		return nil // done on an earlier pass: whatever has the names now is not this CR's
	}
	type target struct {
		gvr  schema.GroupVersionResource
		ref  Ref
		name string
	}
	targets := make([]target, 0, len(objs))
	refs := make([]Ref, 0, len(objs))
	for _, o := range objs {
		gvk := o.Obj.GroupVersionKind()
		m, err := w.Mapping(gvk)
		if err != nil {
			return fmt.Errorf("delete %s %q: %w", gvk.Kind, o.Obj.GetName(), err)
		}
		ns := o.Obj.GetNamespace()
		switch {
		case m.Scope.Name() != meta.RESTScopeNameNamespace:
			ns = ""
		case ns == "":
			ns = cr.GetNamespace()
		}
		ref := Ref{gr: m.Resource.GroupResource(), namespace: ns, name: o.Obj.GetName()}
		targets = append(targets, target{gvr: m.Resource, ref: ref, name: o.Obj.GetName()})
		refs = append(refs, ref)
	}
	// Judged and deleted under the children's locks, as a create or adoption is: no pass of
	// another CR takes one of them between this read and this delete.
	held, err := w.lockChildren(ctx, refs)
	if err != nil {
		return err
	}
	defer held.releaseAll()
	for _, t := range targets {
		if err := w.removeOne(ctx, cr, t.gvr, t.ref); err != nil {
			return err
		}
	}
	w.fx.removed(key, cr.GetUID())
	return nil
}

// removeOne deletes one onDelete object if cr controls or marks it; a precondition that
// fails means it changed meanwhile: read and judge again.
func (w *Writer) removeOne(ctx context.Context, cr *unstructured.Unstructured, gvr schema.GroupVersionResource, ref Ref) error {
	for range writeAttempts {
		live, err := w.Meta.Resource(gvr).Namespace(ref.namespace).Get(ctx, ref.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s/%s: %w", gvr.Resource, ref.name, err)
		}
		if live.GetDeletionTimestamp() != nil {
			return nil
		}
		switch judgeRemoval(cr, live) {
		case notMine:
			w.Log.Info("onDelete: not deleted: neither controlled nor marked by the custom resource",
				"key", kobj.KeyOf(cr), "resource", gvr.Resource, "namespace", ref.namespace, "name", ref.name)
			return nil
		case legacy:
			w.Log.Info("onDelete: deleting an unmarked object by its managed-by label and name; "+
				"objects ork creates are marked now, and this fallback goes in a later release",
				"key", kobj.KeyOf(cr), "resource", gvr.Resource, "namespace", ref.namespace, "name", ref.name)
		}
		if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
			return err
		}
		uid, rv := live.GetUID(), live.GetResourceVersion()
		err = w.Dyn.Resource(gvr).Namespace(ref.namespace).Delete(ctx, ref.name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, DryRun: w.fx.options()})
		switch {
		case err == nil:
			w.fx.deleted(cr, gvr, ref)
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !precondition.Failed(err):
			return fmt.Errorf("delete %s/%s: %w", gvr.Resource, ref.name, err)
		}
	}
	return fmt.Errorf("delete %s/%s: the object kept changing under %d attempts", gvr.Resource, ref.name, writeAttempts)
}
