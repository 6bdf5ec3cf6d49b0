// Package planner holds ork's pure planning rules, shared by ork run, ork simulate and ork
// remote check so that an answer judged offline means the same in the cluster: a
// reconciler's answer to the child objects to apply (built, placed, owned, labelled, with
// the digest of what is applied), the ownership judgement of an existing child, the
// failure reasons and their messages, and how children are keyed in prepared.children. It
// makes no requests.
package planner

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
)

// OwnerAnnotation is naming.OwnerAnnotation, kept here for the engine (internal/run).
const OwnerAnnotation = naming.OwnerAnnotation

// Mapping is how a kind's objects are addressed: their resource and scope.
type Mapping struct {
	Resource   schema.GroupVersionResource
	Namespaced bool
	// ScopeUnknown: planned offline, the kind is neither built in nor a CRD of the Katalog;
	// Namespaced is a guess, and a refusal resting on it says so.
	ScopeUnknown bool
}

// Planner turns built objects into the children ork applies for one CRD's custom resources.
type Planner struct {
	// Map resolves a kind: the cluster's discovery in ork run, Types offline. Required.
	Map func(schema.GroupVersionKind) (Mapping, error)
	// Declared reports whether objects of a type may be applied (managedResources, or a
	// declarative CRD's block types). Required.
	Declared func(schema.GroupResource) bool
	// Operator is the operator label's value (ork run --name); default
	// naming.DefaultOperator.
	Operator string
	// Watched are the namespaces ork may write children in (--watch-namespace); default
	// (none): every namespace.
	Watched []string
	// ForceConflict is the CRD's reconcile.forceConflict; default (nil) true.
	ForceConflict *bool
	// ShardSlots labels every child with its owner's slot (naming.SlotLabel: naming.SlotOf the CR's
	// uid), which a sharded replica's child caches select on (ork run --shard-buckets).
	// Default false: no slot label.
	ShardSlots bool
	// Remote: the children go to another cluster than the custom resource's (a target), where
	// no ownerReference can point to it: each is marked with naming.OwnerAnnotation instead.
	// Default false: an ownerReference wherever one can be.
	Remote bool
}

// Child is an object ready to apply: placed, owned and labelled, and the digest it carries.
type Child struct {
	Obj      *unstructured.Unstructured
	Resource schema.GroupVersionResource
	// Force is the entry's forceConflict, else the CRD's, else true.
	Force  bool
	Digest [sha256.Size]byte
	// CreateOnly children (onCreate) are created when missing and never written again.
	CreateOnly bool
}

// Ref is the child's resource and name, as messages name it: "deployments/web".
func (c Child) Ref() string { return c.Resource.Resource + "/" + c.Obj.GetName() }

// Plan plans every object for cr, all or nothing: apply (an answer's resources, or
// onReconcile) and createIfMissing (onCreate). Each problem is an EntryError; Verdict
// says what ork reports for them.
func (p Planner) Plan(cr *unstructured.Unstructured, apply, createIfMissing []resources.Object) ([]Child, []EntryError) {
	var out []Child
	var errs []EntryError
	for _, list := range []struct {
		name       string
		objs       []resources.Object
		createOnly bool
	}{{"resources", apply, false}, {"onCreate", createIfMissing, true}} {
		for i, o := range list.objs {
			c, err := p.Child(cr, o)
			if err != nil {
				stage := Unplaceable
				switch {
				case errors.Is(err, errUndeclared):
					stage = Undeclared
				case errors.Is(err, errUnserved), errors.Is(err, errDiscovery):
					stage = Unserved
				}
				errs = append(errs, EntryError{List: list.name, Index: i, Stage: stage, Err: err})
				continue
			}
			c.CreateOnly = list.createOnly
			out = append(out, c)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// errUndeclared, errUnserved and errDiscovery mark Child's errors for a type not in
// managedResources, a kind the cluster does not serve, and a kind discovery could not
// resolve (an apiserver error, not a verdict on the kind).
var (
	errUndeclared = errors.New("not declared in managedResources")
	errUnserved   = errors.New("kind not served by the cluster")
	errDiscovery  = errors.New("discovery failed")
)

// Child resolves o's type, checks it is declared and placeable, and sets on a copy the
// namespace, the ownerReferences (or naming.OwnerAnnotation), the managed-by and operator labels
// and, last, the applied digest.
func (p Planner) Child(cr *unstructured.Unstructured, o resources.Object) (Child, error) {
	obj := o.Obj.DeepCopy()
	gvk := obj.GroupVersionKind()
	m, err := p.Map(gvk)
	if err != nil && meta.IsNoMatchError(err) {
		return Child{}, fmt.Errorf("%s %q: %w: %w", gvk.Kind, obj.GetName(), errUnserved, err)
	}
	if err != nil {
		// Discovery did not answer: the kind may well be served; ApplyFailed all the same
		// (a write ork could not make), but not said to be unserved.
		return Child{}, fmt.Errorf("%s %q: kind not resolved, %w: %w", gvk.Kind, obj.GetName(), errDiscovery, err)
	}
	gr := m.Resource.GroupResource()
	if !p.Declared(gr) {
		return Child{}, fmt.Errorf("%s %q: type %s is %w (declare it: {group: %q, plural: %s})",
			gvk.Kind, obj.GetName(), gr.String(), errUndeclared, gr.Group, gr.Resource)
	}
	switch {
	case m.Namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(cr.GetNamespace())
	case !m.Namespaced:
		obj.SetNamespace("")
	}
	if m.Namespaced && obj.GetNamespace() == "" && m.ScopeUnknown {
		return Child{}, fmt.Errorf("%s %q: scope unknown offline (neither a built-in kind nor a CRD of the Katalog), so taken as namespaced, and the cluster-scoped owner gives no namespace (set one if the kind is namespaced)",
			gvk.Kind, obj.GetName())
	}
	if m.Namespaced && obj.GetNamespace() == "" {
		return Child{}, fmt.Errorf("%s %q: namespaced, but the cluster-scoped owner gives no namespace (set one)", gvk.Kind, obj.GetName())
	}
	// Under --watch-namespace ork neither caches nor may write outside the watched set.
	if m.Namespaced && !p.watches(obj.GetNamespace()) {
		return Child{}, fmt.Errorf("%s %q: namespace %s is not watched (--watch-namespace %s): ork can neither see nor write a child there",
			gvk.Kind, obj.GetName(), obj.GetNamespace(), strings.Join(p.Watched, ","))
	}
	// An ownerReference cannot cross namespaces, nor point from cluster scope into one; a
	// cluster-scoped CR may own children in any namespace
	// (docs/remote-reconciler.md#resources).
	ownable := !p.Remote && (cr.GetNamespace() == "" || obj.GetNamespace() == cr.GetNamespace())
	refs, err := ownerReferences(cr, obj.GetOwnerReferences(), ownable)
	if err != nil {
		return Child{}, fmt.Errorf("%s %q: %w", gvk.Kind, obj.GetName(), err)
	}
	obj.SetOwnerReferences(refs)
	MarkOwner(obj, cr, ownable)
	if p.ShardSlots {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[naming.SlotLabel] = naming.SlotOf(cr.GetUID())
		obj.SetLabels(labels)
	}
	digest := p.Label(obj)
	return Child{Obj: obj, Resource: m.Resource, Force: p.force(o), Digest: digest}, nil
}

func (p Planner) watches(namespace string) bool {
	for _, w := range p.Watched {
		if w == namespace {
			return true
		}
	}
	return len(p.Watched) == 0
}

// force is the entry's forceConflict, else the CRD's, else true.
func (p Planner) force(o resources.Object) bool {
	if o.ForceConflict != nil {
		return *o.ForceConflict
	}
	if p.ForceConflict != nil {
		return *p.ForceConflict
	}
	return true
}

// Label sets the labels ork puts on every child (managed-by, and the operator label), then,
// as the last change, the applied annotation (resources.MarkApplied), whose digest it
// returns. It modifies obj.
func (p Planner) Label(obj *unstructured.Unstructured) [sha256.Size]byte {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[naming.ManagedByLabel] = naming.ManagedBy
	labels[naming.OperatorLabel] = p.operator()
	obj.SetLabels(labels)
	return resources.MarkApplied(obj)
}

func (p Planner) operator() string {
	if p.Operator == "" {
		return naming.DefaultOperator
	}
	return p.Operator
}

// ownerReferences are the reconciler's own (non-controller) references plus, when the child
// can be owned, ork's controller reference to the CR. Only ork names the controller.
func ownerReferences(cr *unstructured.Unstructured, theirs []metav1.OwnerReference, ownable bool) ([]metav1.OwnerReference, error) {
	out := make([]metav1.OwnerReference, 0, len(theirs)+1)
	for _, r := range theirs {
		if r.UID == cr.GetUID() {
			continue // ork's own reference, round-tripped from prepared.children
		}
		if r.Controller != nil && *r.Controller {
			return nil, fmt.Errorf("ownerReferences: %s %s is marked controller: true; ork sets the controller reference (to the custom resource) itself",
				r.Kind, r.Name)
		}
		out = append(out, r)
	}
	if !ownable {
		return out, nil
	}
	return append(out, metav1.OwnerReference{
		APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}), nil
}

// MarkOwner sets naming.OwnerAnnotation on a child that cannot carry a controller reference to cr
// (not ownable), so that onDelete can tell it is cr's.
func MarkOwner(obj *unstructured.Unstructured, cr metav1.Object, ownable bool) {
	if ownable {
		return
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[naming.OwnerAnnotation] = string(cr.GetUID())
	obj.SetAnnotations(ann)
}
