package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/resources"
)

// Labels ork puts on every object it applies.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "orkestra"
)

// planned is an object ready to apply: resolved type, namespace and owner set.
type planned struct {
	obj   *unstructured.Unstructured
	gvr   schema.GroupVersionResource
	force bool
	// createOnly objects (onCreate) are created when missing and never written again.
	createOnly bool
}

// applyAll checks every object first and applies none if one is wrong (all or nothing),
// then applies them with server-side apply.
func (c *controller) applyAll(ctx context.Context, cr *unstructured.Unstructured, d decision) error {
	var plans []planned
	var errs []string
	for i, o := range d.apply {
		p, err := c.plan(cr, o)
		if err != nil {
			errs = append(errs, fmt.Sprintf("resources[%d]: %v", i, err))
			continue
		}
		plans = append(plans, p)
	}
	var createOnly []planned
	for i, o := range d.createIfMissing {
		p, err := c.plan(cr, o)
		if err != nil {
			errs = append(errs, fmt.Sprintf("onCreate[%d]: %v", i, err))
			continue
		}
		if !c.childExists(p.gvr.GroupResource(), p.obj.GetNamespace(), p.obj.GetName()) {
			p.createOnly = true
			createOnly = append(createOnly, p)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("nothing applied: %s", strings.Join(errs, "; "))
	}
	for _, p := range append(plans, createOnly...) {
		if err := c.applyOne(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// plan resolves an object's resource type, checks it is declared, and sets namespace,
// owner reference and the managed-by label on a copy.
func (c *controller) plan(cr *unstructured.Unstructured, o resources.Object) (planned, error) {
	obj := o.Obj.DeepCopy()
	gvk := obj.GroupVersionKind()
	m, err := c.e.mapping(gvk)
	if err != nil {
		return planned{}, fmt.Errorf("%s %q: kind not served by the cluster: %w", gvk.Kind, obj.GetName(), err)
	}
	gr := m.Resource.GroupResource()
	if !c.managed[gr] {
		return planned{}, fmt.Errorf("%s %q: type %s is not declared in managedResources (declare it: {group: %q, plural: %s})",
			gvk.Kind, obj.GetName(), gr.String(), gr.Group, gr.Resource)
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(cr.GetNamespace())
	case !namespaced:
		obj.SetNamespace("")
	}
	if namespaced && obj.GetNamespace() == "" {
		return planned{}, fmt.Errorf("%s %q: namespaced, but the cluster-scoped owner gives no namespace (set one)", gvk.Kind, obj.GetName())
	}
	// Owner references cannot cross namespaces, nor point from cluster scope to a namespace.
	if obj.GetNamespace() == cr.GetNamespace() {
		obj.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}})
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedByValue
	obj.SetLabels(labels)
	return planned{obj: obj, gvr: m.Resource, force: c.force(o)}, nil
}

// force is the entry's forceConflict, else the CRD's, else true.
func (c *controller) force(o resources.Object) bool {
	if o.ForceConflict != nil {
		return *o.ForceConflict
	}
	if f := c.crd.OperatorBox.Reconcile.ForceConflict; f != nil {
		return *f
	}
	return true
}

func (c *controller) applyOne(ctx context.Context, p planned) error {
	kind := p.obj.GetKind()
	client := c.e.dyn.Resource(p.gvr).Namespace(p.obj.GetNamespace())
	var err error
	if p.createOnly {
		// A create, not a forced apply: the cache that said "missing" may lag behind an
		// earlier pass's create, and a forced apply would overwrite a user's later edit.
		_, err = client.Create(ctx, p.obj, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
	} else {
		_, err = client.Apply(ctx, p.obj.GetName(), p.obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: p.force})
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	c.e.opts.Metrics.ApplyTotal.WithLabelValues(c.crd.Name, kind, result).Inc()
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("%s/%s", p.gvr.Resource, p.obj.GetName())
	var status apierrors.APIStatus
	if apierrors.IsConflict(err) && errors.As(err, &status) {
		return fmt.Errorf("apply %s: conflict with another field manager (forceConflict is false): %s", what, status.Status().Message)
	}
	return fmt.Errorf("apply %s: %w", what, err)
}

// deleteAll removes objects (declarative onDelete).
func (c *controller) deleteAll(ctx context.Context, cr *unstructured.Unstructured, objs []resources.Object) error {
	for _, o := range objs {
		gvk := o.Obj.GroupVersionKind()
		m, err := c.e.mapping(gvk)
		if err != nil {
			return fmt.Errorf("delete %s %q: %w", gvk.Kind, o.Obj.GetName(), err)
		}
		ns := o.Obj.GetNamespace()
		if ns == "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = cr.GetNamespace()
		}
		err = c.e.dyn.Resource(m.Resource).Namespace(ns).Delete(ctx, o.Obj.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s/%s: %w", m.Resource.Resource, o.Obj.GetName(), err)
		}
	}
	return nil
}
