package rbacgen

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
)

// scopes tells namespaced types from cluster-scoped ones without a cluster: the Katalog's
// own CRDs by their declared scope, Kubernetes' built-in types by the table below.
type scopes map[schema.GroupResource]bool

// builtinScopes are Kubernetes' built-in types that a reconciler may plausibly manage, true
// when namespaced.
var builtinScopes = map[schema.GroupResource]bool{
	{Resource: "configmaps"}: true, {Resource: "endpoints"}: true, {Resource: "events"}: true,
	{Resource: "limitranges"}: true, {Resource: "persistentvolumeclaims"}: true, {Resource: "pods"}: true,
	{Resource: "podtemplates"}: true, {Resource: "replicationcontrollers"}: true, {Resource: "resourcequotas"}: true,
	{Resource: "secrets"}: true, {Resource: "serviceaccounts"}: true, {Resource: "services"}: true,
	{Resource: "namespaces"}: false, {Resource: "nodes"}: false, {Resource: "persistentvolumes"}: false,
	{Group: "apps", Resource: "deployments"}: true, {Group: "apps", Resource: "statefulsets"}: true,
	{Group: "apps", Resource: "daemonsets"}: true, {Group: "apps", Resource: "replicasets"}: true,
	{Group: "apps", Resource: "controllerrevisions"}: true,
	{Group: "batch", Resource: "jobs"}:               true, {Group: "batch", Resource: "cronjobs"}: true,
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: true,
	{Group: "policy", Resource: "poddisruptionbudgets"}:          true,
	{Group: "networking.k8s.io", Resource: "ingresses"}:          true, {Group: "networking.k8s.io", Resource: "networkpolicies"}: true,
	{Group: "networking.k8s.io", Resource: "ingressclasses"}: false,
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:  true,
	{Group: "events.k8s.io", Resource: "events"}:             true,
	{Group: "coordination.k8s.io", Resource: "leases"}:       true,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:  true, {Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}: true,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:        false,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: false,
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                 false, {Group: "storage.k8s.io", Resource: "csidrivers"}: false,
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:                             false,
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:                            false,
	{Group: "node.k8s.io", Resource: "runtimeclasses"}:                                   false,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:               false,
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: false,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:   false,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}:               false,
}

func newScopes(set *katalog.Set) scopes {
	s := scopes{}
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
	gr := schema.GroupResource{Group: group, Resource: resource}
	_, ours := s[gr]
	_, builtin := builtinScopes[gr]
	return ours || builtin
}

// namespaced reports whether group/resource is namespaced; an unknown type counts as
// namespaced (most are), which the caller warns about.
func (s scopes) namespaced(group, resource string) bool {
	gr := schema.GroupResource{Group: group, Resource: resource}
	if n, ok := s[gr]; ok {
		return n
	}
	if n, ok := builtinScopes[gr]; ok {
		return n
	}
	return true
}
