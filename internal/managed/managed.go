// Package managed says, without a cluster, which resource types a remote CRD may apply (its
// managedResources) and how ork keys children of those types in prepared.children.
package managed

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
)

// Types are the managedResources of one remote CRD. Without a cluster there is no
// RESTMapper: the plural of a kind comes from ork's intent types, then from the Katalog's
// CRDs, else it is guessed from the kind (see Resource).
type Types struct {
	declared map[schema.GroupResource]bool
	plurals  map[schema.GroupKind]string
	// clusterScoped are the Katalog's cluster-scoped CRDs; every other kind counts as
	// namespaced (all intent types are).
	clusterScoped map[schema.GroupKind]bool
}

// New reads crd's managedResources; all are the Katalog's CRDs, whose plurals are known.
func New(crd *katalog.CRD, all []*katalog.CRD) Types {
	t := Types{declared: map[schema.GroupResource]bool{}, plurals: map[schema.GroupKind]string{}, clusterScoped: map[schema.GroupKind]bool{}}
	if rem := crd.OperatorBox.Reconcile.Remote; rem != nil {
		for _, m := range rem.ManagedResources {
			t.declared[schema.GroupResource{Group: m.Group, Resource: m.Plural}] = true
		}
	}
	for _, c := range all {
		if c.APITypes == nil || c.APITypes.Kind == "" {
			continue
		}
		gk := schema.GroupKind{Group: c.APITypes.Group, Kind: c.APITypes.Kind}
		if c.APITypes.Plural != "" {
			t.plurals[gk] = c.APITypes.Plural
		}
		t.clusterScoped[gk] = !c.IsNamespaced()
	}
	return t
}

// Resource is the group and plural of a built object. guessed is true when the kind is
// neither an intent type nor a CRD of the Katalog: the plural is then the lower-case kind
// plus "s" (what kubectl's RESTMapper guesses too), and a declared entry of the same group
// whose plural is another usual plural of the kind counts as it.
func (t Types) Resource(o resources.Object) (gr schema.GroupResource, guessed bool) {
	gk := o.Obj.GroupVersionKind().GroupKind()
	if o.Type.Plural != "" {
		return schema.GroupResource{Group: gk.Group, Resource: o.Type.Plural}, false
	}
	return t.ResourceOf(gk)
}

// ResourceOf is Resource for a group and kind.
func (t Types) ResourceOf(gk schema.GroupKind) (gr schema.GroupResource, guessed bool) {
	if ti, ok := resources.LookupKind(gk); ok {
		return schema.GroupResource{Group: gk.Group, Resource: ti.Plural}, false
	}
	if p, ok := t.plurals[gk]; ok {
		return schema.GroupResource{Group: gk.Group, Resource: p}, false
	}
	for _, p := range candidates(gk.Kind) {
		if gr := (schema.GroupResource{Group: gk.Group, Resource: p}); t.declared[gr] {
			return gr, true
		}
	}
	return schema.GroupResource{Group: gk.Group, Resource: candidates(gk.Kind)[0]}, true
}

// Namespaced reports whether objects of gk are namespaced, as far as ork knows without a
// cluster: a cluster-scoped CRD of the Katalog is not, anything else is.
func (t Types) Namespaced(gk schema.GroupKind) bool { return !t.clusterScoped[gk] }

// Ref names an object as simulate does: "deployments/web" for a kind whose plural is known,
// else "<guessed plural>.<group>/web".
func (t Types) Ref(u *unstructured.Unstructured) string {
	gr, guessed := t.ResourceOf(u.GroupVersionKind().GroupKind())
	if guessed {
		return gr.String() + "/" + u.GetName()
	}
	return gr.Resource + "/" + u.GetName()
}

// Own sets on obj what ork run sets on an object it applies for cr: cr's namespace when a
// namespaced obj names none, a controller ownerReference to cr when both live in the same
// namespace, the managed-by label, the operator label and the applied annotation. It
// modifies obj.
func (t Types) Own(obj, cr *unstructured.Unstructured) {
	if t.Namespaced(obj.GroupVersionKind().GroupKind()) {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(cr.GetNamespace())
		}
	} else {
		obj.SetNamespace("")
	}
	if obj.GetNamespace() == cr.GetNamespace() {
		obj.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}})
	}
	Label(obj)
}

// Label sets the labels ork run puts on every child: managed-by, and the operator label
// with ork run's default --name (simulate and remote check have no operator name of their
// own); then, as the last change, ork run's annotation of what it writes
// (resources.AppliedAnnotation). It modifies obj.
func Label(obj *unstructured.Unstructured) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[resources.ManagedByLabel] = resources.ManagedBy
	labels[resources.OperatorLabel] = resources.DefaultOperator
	obj.SetLabels(labels)
	resources.MarkApplied(obj)
}

// Owned reports whether cr is obj's controller.
func Owned(obj, cr *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == cr.GetUID() && cr.GetUID() != ""
}

// Children groups objects as ork sends them in prepared.children: objects of declared
// types, by Key of their type, then by name. The objects are shared, not copied.
func (t Types) Children(objs []*unstructured.Unstructured) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for _, o := range objs {
		gr, _ := t.ResourceOf(o.GroupVersionKind().GroupKind())
		if !t.declared[gr] {
			continue
		}
		k := Key(gr)
		if out[k] == nil {
			out[k] = map[string]map[string]any{}
		}
		out[k][o.GetName()] = o.Object
	}
	return out
}

// candidates are the usual plurals of a kind, the likeliest first.
func candidates(kind string) []string {
	k := strings.ToLower(kind)
	out := []string{k + "s"}
	switch {
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ey"):
		out = append(out, k[:len(k)-1]+"ies")
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		out = append(out, k+"es")
	}
	return append(out, k)
}

// Check fails when the type of o is not declared in managedResources; the message is ork
// run's.
func (t Types) Check(o resources.Object) error {
	gr, _ := t.Resource(o)
	if t.declared[gr] {
		return nil
	}
	return fmt.Errorf("%s %q: type %s is not declared in managedResources (declare it: {group: %q, plural: %s})",
		o.Obj.GetKind(), o.Obj.GetName(), gr.String(), gr.Group, gr.Resource)
}

// Declared lists the declared types, sorted.
func (t Types) Declared() []schema.GroupResource {
	out := make([]schema.GroupResource, 0, len(t.declared))
	for gr := range t.declared {
		out = append(out, gr)
	}
	slices.SortFunc(out, func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// IsDeclared reports whether gr is in managedResources.
func (t Types) IsDeclared(gr schema.GroupResource) bool { return t.declared[gr] }

// Key is the prepared.children key of a type: the intent type of a built-in kind
// ("deployment"), else "<plural>.<group>", or "<plural>" for the core group. ork run keys
// the children it sends the same way.
func Key(gr schema.GroupResource) string {
	for _, t := range resources.Types() {
		if t.Type != resources.Custom && t.GVK.Group == gr.Group && t.Plural == gr.Resource {
			return t.Type
		}
	}
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}
