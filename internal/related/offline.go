package related

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
)

// Offline is what payload.related finds for one custom resource among given objects (the
// other documents of a CR file, --related files): the stand-in for ork run's reads in
// ork simulate and ork remote check.
type Offline struct {
	// Related is prepared.related: every entry's as, [] when nothing matched.
	Related map[string][]map[string]any
	// Refs name what each entry resolved to, in entry order: "config: configmaps default/web-config".
	Refs []string
	// Missing are the required entries that found nothing, as Refs names them.
	Missing []string
}

// FromObjects resolves entries for cr and picks their objects from objs. A kind or plural
// is resolved through the built-in API table and crds; an unknown type counts as namespaced.
func FromObjects(entries []katalog.Related, crds []*katalog.CRD, cr map[string]any, objs []*unstructured.Unstructured) (Offline, error) {
	out := Offline{Related: map[string][]map[string]any{}}
	for i, r := range entries {
		e, err := Compile(fmt.Sprintf("payload.related[%d]", i), r)
		if err != nil {
			return Offline{}, err
		}
		gk, plural, namespaced := offlineType(r, crds)
		e.Namespaced = namespaced
		ref, err := e.Resolve(cr)
		if err != nil {
			return Offline{}, err
		}
		var found []map[string]any
		for _, o := range objs {
			gv, _ := schema.ParseGroupVersion(o.GetAPIVersion())
			if gv.Group != gk.Group || o.GetKind() != gk.Kind || o.GetNamespace() != ref.Namespace {
				continue
			}
			if ref.Selector == nil && o.GetName() == ref.Name || ref.Selector != nil && ref.Selector.Matches(labels.Set(o.GetLabels())) {
				found = append(found, o.DeepCopy().Object)
			}
		}
		slices.SortFunc(found, func(a, b map[string]any) int {
			ua, ub := unstructured.Unstructured{Object: a}, unstructured.Unstructured{Object: b}
			return cmp.Or(cmp.Compare(ua.GetNamespace(), ub.GetNamespace()), cmp.Compare(ua.GetName(), ub.GetName()))
		})
		if len(found) > MaxSelected {
			found = found[:MaxSelected]
		}
		if gk.Group == "" && gk.Kind == "Secret" && !r.AllowSecrets {
			for _, o := range found {
				delete(o, "data")
				delete(o, "stringData")
			}
		}
		if found == nil {
			found = []map[string]any{}
		}
		out.Related[r.As] = found
		name := fmt.Sprintf("%s: %s %s", r.As, plural, ref)
		out.Refs = append(out.Refs, name)
		if r.Required && len(found) == 0 {
			out.Missing = append(out.Missing, name)
		}
	}
	return out, nil
}

// offlineType is an entry's group and kind, its plural, and its scope.
func offlineType(r katalog.Related, crds []*katalog.CRD) (schema.GroupKind, string, bool) {
	for _, c := range crds {
		if at := c.APITypes; at != nil && at.Group == r.Group && (r.Kind != "" && at.Kind == r.Kind || r.Plural != "" && at.Plural == r.Plural) {
			return schema.GroupKind{Group: at.Group, Kind: at.Kind}, at.Plural, c.IsNamespaced()
		}
	}
	t := apiresources.Builtin()
	res, ok := t.LookupKind(r.Group, r.Kind)
	if r.Kind == "" {
		res, ok = t.Lookup(r.Group, r.Plural)
	}
	if ok {
		return schema.GroupKind{Group: res.Group, Kind: res.Kind}, res.Plural, res.Namespaced
	}
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}, cmp.Or(r.Plural, r.Kind), true
}
