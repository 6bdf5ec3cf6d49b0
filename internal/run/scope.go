package run

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/run/informers"
)

// watchScope builds the informers on a custom resource type: one over every namespace, or
// one per watched namespace. A cluster-scoped type cannot be watched by namespace: an error.
func (e *Engine) watchScope(gvr schema.GroupVersionResource, build func(namespace string) cache.SharedIndexInformer) (informers.Scoped, error) {
	if len(e.opts.WatchNamespaces) == 0 {
		return informers.AllNamespaces(build(metav1.NamespaceAll)), nil
	}
	namespaced, err := e.api.Namespaced(gvr)
	if err != nil {
		return informers.Scoped{}, err
	}
	if !namespaced {
		return informers.Scoped{}, fmt.Errorf("%s is cluster-scoped: its custom resources are in no namespace, so --watch-namespace cannot limit ork to them (run it in an ork without --watch-namespace)",
			gvr.GroupResource())
	}
	return informers.PerNamespace(e.opts.WatchNamespaces, build), nil
}
