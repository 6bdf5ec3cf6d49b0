package rbacgen

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
)

// scopes tells namespaced types from cluster-scoped ones without a cluster: the Katalog's
// own CRDs by their declared scope, Kubernetes' built-in types by the table generated from
// the pinned apiserver's discovery (internal/apiresources), true when namespaced.
type scopes map[schema.GroupResource]bool

func newScopes(set *katalog.Set) scopes {
	s := scopes{}
	for _, r := range apiresources.Builtin().Resources {
		s[schema.GroupResource{Group: r.Group, Resource: r.Plural}] = r.Namespaced
	}
	if set == nil {
		return s
	}
	for _, crd := range set.CRDs {
		if at := crd.APITypes; at != nil && at.Plural != "" {
			s[schema.GroupResource{Group: at.Group, Resource: at.Plural}] = crd.IsNamespaced()
		}
	}
	return s
}

// known reports whether the scope of group/resource is known.
func (s scopes) known(group, resource string) bool {
	_, ok := s[schema.GroupResource{Group: group, Resource: resource}]
	return ok
}

// namespaced reports whether group/resource is namespaced; an unknown type counts as
// namespaced (most are), which the caller warns about.
func (s scopes) namespaced(group, resource string) bool {
	if n, ok := s[schema.GroupResource{Group: group, Resource: resource}]; ok {
		return n
	}
	return true
}
