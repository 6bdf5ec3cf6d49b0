package decision

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RelatedVersions are the related objects' resourceVersions by the request's names: the
// name alone for an entry that read one object, the name and the object's namespace/name
// for each of several.
func RelatedVersions(rel []Related) map[string]string {
	if len(rel) == 0 {
		return nil
	}
	count := map[string]int{}
	for _, r := range rel {
		count[r.Name]++
	}
	out := make(map[string]string, len(rel))
	for _, r := range rel {
		k := r.Name
		if count[r.Name] > 1 {
			k += "/" + r.Ref.Namespace + "/" + r.Ref.Name
		}
		out[k] = r.ResourceVersion
	}
	return out
}

// RelatedOf lists the related objects a request carries, by its names, references and
// resourceVersions only: a Secret's values never leave the request.
func RelatedOf(objs map[string][]map[string]any) []Related {
	var out []Related
	for name, list := range objs {
		for _, o := range list {
			u := unstructured.Unstructured{Object: o}
			out = append(out, Related{Name: name, ResourceVersion: u.GetResourceVersion(), Ref: Ref{
				APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}})
		}
	}
	slices.SortFunc(out, func(a, b Related) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Ref.Namespace, b.Ref.Namespace), cmp.Compare(a.Ref.Name, b.Ref.Name))
	})
	return out
}
