// Package managed says, without a cluster, which resource types a remote CRD may apply (its
// managedResources) and how ork keys children of those types in prepared.children.
package managed

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
)

// Types are the managedResources of one remote CRD. Without a cluster there is no
// RESTMapper: the plural of a kind comes from ork's intent types, then from the Katalog's
// CRDs, else it is guessed from the kind (see Resource).
type Types struct {
	declared map[schema.GroupResource]bool
	plurals  map[schema.GroupKind]string
}

// New reads crd's managedResources; all are the Katalog's CRDs, whose plurals are known.
func New(crd *katalog.CRD, all []*katalog.CRD) Types {
	t := Types{declared: map[schema.GroupResource]bool{}, plurals: map[schema.GroupKind]string{}}
	if rem := crd.OperatorBox.Reconcile.Remote; rem != nil {
		for _, m := range rem.ManagedResources {
			t.declared[schema.GroupResource{Group: m.Group, Resource: m.Plural}] = true
		}
	}
	for _, c := range all {
		if c.APITypes != nil && c.APITypes.Kind != "" && c.APITypes.Plural != "" {
			t.plurals[schema.GroupKind{Group: c.APITypes.Group, Kind: c.APITypes.Kind}] = c.APITypes.Plural
		}
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
