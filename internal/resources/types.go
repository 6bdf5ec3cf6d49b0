// Package resources turns an intent entry (type + flat fields) or a full object into an
// applyable Kubernetes object, or a precise error. It is shared by the declarative
// reconciler, the remote reconciler and simulate.
package resources

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TypeInfo describes one intent type.
type TypeInfo struct {
	// Type is the intent name: "deployment".
	Type string
	// Block is the key of the declarative onCreate/onReconcile block: "deployments".
	Block string
	// GVK is the object's kind; empty for custom, whose apiVersion/kind come from fields.
	GVK schema.GroupVersionKind
	// Plural is the REST resource name: "deployments".
	Plural string
}

// GVR is the group/version/resource of the type.
func (t TypeInfo) GVR() schema.GroupVersionResource {
	return t.GVK.GroupVersion().WithResource(t.Plural)
}

// Custom is the intent type for any kind not built in; apiVersion and kind are in its fields.
const Custom = "custom"

var types = []TypeInfo{
	{"configmap", "configMaps", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps"},
	{"cronjob", "cronJobs", schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, "cronjobs"},
	{Custom, "customs", schema.GroupVersionKind{}, ""},
	{"daemonset", "daemonSets", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "daemonsets"},
	{"deployment", "deployments", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments"},
	{"ingress", "ingresses", schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, "ingresses"},
	{"job", "jobs", schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs"},
	{"persistentvolumeclaim", "persistentVolumeClaims", schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}, "persistentvolumeclaims"},
	{"secret", "secrets", schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "secrets"},
	{"service", "services", schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services"},
	{"serviceaccount", "serviceAccounts", schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, "serviceaccounts"},
	{"statefulset", "statefulSets", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "statefulsets"},
}

// Types lists every intent type, sorted by name.
func Types() []TypeInfo { return slices.Clone(types) }

// Lookup finds an intent type by name ("deployment").
func Lookup(name string) (TypeInfo, bool) {
	i := slices.IndexFunc(types, func(t TypeInfo) bool { return t.Type == name })
	if i < 0 {
		return TypeInfo{}, false
	}
	return types[i], true
}

// LookupBlock finds an intent type by its declarative block key ("deployments").
func LookupBlock(block string) (TypeInfo, bool) {
	i := slices.IndexFunc(types, func(t TypeInfo) bool { return t.Block == block })
	if i < 0 {
		return TypeInfo{}, false
	}
	return types[i], true
}

// LookupKind finds the built-in type of a group/kind (for the full object form).
func LookupKind(gk schema.GroupKind) (TypeInfo, bool) {
	i := slices.IndexFunc(types, func(t TypeInfo) bool { return t.Type != Custom && t.GVK.GroupKind() == gk })
	if i < 0 {
		return TypeInfo{}, false
	}
	return types[i], true
}
