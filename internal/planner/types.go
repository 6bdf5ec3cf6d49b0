package planner

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
)

// Types are the managedResources of one remote CRD, for planning without a cluster (ork
// simulate, ork remote check). There is no RESTMapper: the plural and scope of a kind come
// from ork's intent types, then Kubernetes' built-in resources (apiresources.Builtin, the
// discovery ork run would see for them), then the Katalog's CRDs; only a kind none of these
// knows is guessed (see Resource and Map).
type Types struct {
	// Operator is the operator label's value, ork run's --name; default
	// naming.DefaultOperator.
	Operator string
	declared map[schema.GroupResource]bool
	builtin  *apiresources.Table
	plurals  map[schema.GroupKind]string
	// clusterScoped holds the scope of the Katalog's CRDs: true for cluster-scoped.
	clusterScoped map[schema.GroupKind]bool
}

// NewTypes reads the types crd may write: a remote CRD's managedResources, a declarative
// CRD's block types (as ork run watches them); all are the Katalog's CRDs, whose plurals and
// scopes are known. crd may be nil, for Types that only resolve kinds.
func NewTypes(crd *katalog.CRD, all []*katalog.CRD) Types {
	t := Types{declared: map[schema.GroupResource]bool{}, builtin: apiresources.Builtin(),
		plurals: map[schema.GroupKind]string{}, clusterScoped: map[schema.GroupKind]bool{}}
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
	switch {
	case crd == nil:
	case crd.IsRemote():
		for _, m := range crd.OperatorBox.Reconcile.Remote.ManagedResources {
			t.declared[schema.GroupResource{Group: m.Group, Resource: m.Plural}] = true
		}
	default:
		ob := crd.OperatorBox
		for _, block := range []katalog.DeclaredResources{ob.OnCreate, ob.OnReconcile, ob.OnDelete} {
			t.declareBlock(block)
		}
	}
	return t
}

// declareBlock declares the types of a declarative block: an intent type's, and a customs
// entry's literal kind (a templated one ork run refuses at start).
func (t Types) declareBlock(block katalog.DeclaredResources) {
	for key, entries := range block {
		ti, ok := resources.LookupBlock(key)
		switch {
		case !ok:
		case ti.Type != resources.Custom:
			t.declared[ti.GVR().GroupResource()] = true
		default:
			for _, e := range entries {
				apiVersion, _ := e["apiVersion"].(string)
				kind, _ := e["kind"].(string)
				gv, err := schema.ParseGroupVersion(apiVersion)
				if err != nil || kind == "" {
					continue
				}
				gr, _ := t.ResourceOf(gv.WithKind(kind).GroupKind())
				t.declared[gr] = true
			}
		}
	}
}

// Resource is the group and plural of a built object. guessed is true when the kind is
// neither an intent type, a built-in kind nor a CRD of the Katalog: the plural is then the lower-case kind
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
	if r, ok := t.builtinKind(gk); ok {
		return schema.GroupResource{Group: gk.Group, Resource: r.Plural}, false
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
// cluster: intent types are; a built-in kind or a CRD of the Katalog as declared. known is
// false for any other kind, which then counts as namespaced (most custom kinds are).
func (t Types) Namespaced(gk schema.GroupKind) (namespaced, known bool) {
	if _, ok := resources.LookupKind(gk); ok {
		return true, true
	}
	if r, ok := t.builtinKind(gk); ok {
		return r.Namespaced, true
	}
	if cluster, ok := t.clusterScoped[gk]; ok {
		return !cluster, true
	}
	return true, false
}

// builtinKind is gk's entry in Kubernetes' built-in resources, for a table of NewTypes.
func (t Types) builtinKind(gk schema.GroupKind) (apiresources.Resource, bool) {
	if t.builtin == nil {
		return apiresources.Resource{}, false
	}
	return t.builtin.LookupKind(gk.Group, gk.Kind)
}

// Map is the Planner's Map without a cluster: Resource and Namespaced. It never fails.
func (t Types) Map(gvk schema.GroupVersionKind) (Mapping, error) {
	gr, _ := t.ResourceOf(gvk.GroupKind())
	namespaced, known := t.Namespaced(gvk.GroupKind())
	return Mapping{Resource: gr.WithVersion(gvk.Version), Namespaced: namespaced, ScopeUnknown: !known}, nil
}

// Planner plans as ork run does with --name Operator and every namespace watched, the
// types resolved by Map and checked against managedResources.
func (t Types) Planner(forceConflict *bool) Planner {
	return Planner{Map: t.Map, Declared: t.IsDeclared, Operator: t.Operator, ForceConflict: forceConflict}
}

// Build builds and plans every entry of a remote answer for cr, as ork run does before
// applying anything, and returns the children, or nil and every problem of every entry
// (an entry that builds is planned even when another does not, so that each mistake is
// named at once; Verdict picks what ork run reports).
func (t Types) Build(entries []map[string]any, cr *unstructured.Unstructured, forceConflict *bool) ([]Child, []EntryError) {
	p := t.Planner(forceConflict)
	opts := resources.OptionsFor(cr.GetNamespace(), cr.GetName())
	var out []Child
	var errs []EntryError
	for i, raw := range entries {
		o, err := resources.Build(raw, opts)
		if err != nil {
			errs = append(errs, EntryError{List: "resources", Index: i, Stage: Invalid, Err: err})
			continue
		}
		planned, perrs := p.Plan(cr, []resources.Object{o}, nil)
		for _, e := range perrs {
			e.Index = i
			errs = append(errs, e)
		}
		out = append(out, planned...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Ref names an object as simulate does: "deployments/web" for a kind whose plural is known,
// else "<guessed plural>.<group>/web".
func (t Types) Ref(u *unstructured.Unstructured) string {
	gr, guessed := t.ResourceOf(u.GroupVersionKind().GroupKind())
	if guessed {
		return gr.String() + "/" + u.GetName()
	}
	return gr.Resource + "/" + u.GetName()
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
// ("deployment"), else "<plural>.<group>", or "<plural>" for the core group.
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
