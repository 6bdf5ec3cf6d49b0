package run

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/informers"
)

// childInformers hands out the shared informers on managed types. They list and watch only
// objects carrying ork's managed-by label and this operator's name in OperatorLabel: ork
// caches what it owns, not every Deployment, Service, ConfigMap and Secret of the cluster,
// nor another operator's children. A child an older ork wrote lacks the operator label:
// the cache does not show it, so the apply reads it live (checkOwner) and adds the label. A type whose children no reconciler sees
// (payload.children off) is cached as metadata only: ownership, echoes and changes need no
// more.
type childInformers struct {
	full     dynamicinformer.DynamicSharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	// watched are the factories of each watched namespace (--watch-namespace), for the
	// namespaced types; none when ork watches every namespace.
	watched []namespaceFactories
	// needFull are the types some remote reconciler receives as prepared.children.
	needFull map[schema.GroupResource]bool
}

// childSelector selects what the operator named name applied: every object it writes
// carries both labels.
func childSelector(name string) string {
	return ManagedByLabel + "=" + ManagedByValue + "," + OperatorLabel + "=" + name
}

// namespaceFactories are the child informer factories of one watched namespace.
type namespaceFactories struct {
	namespace string
	full      dynamicinformer.DynamicSharedInformerFactory
	metadata  metadatainformer.SharedInformerFactory
}

func newChildInformers(dyn dynamic.Interface, meta metadata.Interface, set *katalog.Set, name string, watch []string) childInformers {
	selector := childSelector(name)
	onlyOrks := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	ci := childInformers{
		full:     dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, onlyOrks),
		metadata: metadatainformer.NewFilteredSharedInformerFactory(meta, 0, metav1.NamespaceAll, onlyOrks),
		needFull: map[schema.GroupResource]bool{},
	}
	for _, ns := range watch {
		ci.watched = append(ci.watched, namespaceFactories{
			namespace: ns,
			full:      dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, onlyOrks),
			metadata:  metadatainformer.NewFilteredSharedInformerFactory(meta, 0, ns, onlyOrks),
		})
	}
	for _, crd := range set.CRDs {
		r := crd.OperatorBox.Reconcile.Remote
		if r == nil || !r.Payload.Children.Enabled {
			continue
		}
		for _, m := range r.ManagedResources {
			ci.needFull[schema.GroupResource{Group: m.Group, Resource: m.Plural}] = true
		}
	}
	return ci
}

// informer is the shared informer on gvr: over every namespace, or, under
// --watch-namespace, one per watched namespace for a namespaced type.
func (ci childInformers) informer(gvr schema.GroupVersionResource, namespaced bool) informers.Scoped {
	pick := func(full dynamicinformer.DynamicSharedInformerFactory, meta metadatainformer.SharedInformerFactory) cache.SharedIndexInformer {
		if ci.needFull[gvr.GroupResource()] {
			return full.ForResource(gvr).Informer()
		}
		return meta.ForResource(gvr).Informer()
	}
	if !namespaced || len(ci.watched) == 0 {
		return informers.AllNamespaces(pick(ci.full, ci.metadata))
	}
	var namespaces []string
	var infs []cache.SharedIndexInformer
	for _, f := range ci.watched {
		namespaces = append(namespaces, f.namespace)
		infs = append(infs, pick(f.full, f.metadata))
	}
	return informers.FromInformers(namespaces, infs)
}

func (ci childInformers) start(stop <-chan struct{}) {
	ci.full.Start(stop)
	ci.metadata.Start(stop)
	for _, f := range ci.watched {
		f.full.Start(stop)
		f.metadata.Start(stop)
	}
}

// shutdown waits for the informers start began (after their stop channel closed).
func (ci childInformers) shutdown() {
	ci.full.Shutdown()
	ci.metadata.Shutdown()
	for _, f := range ci.watched {
		f.full.Shutdown()
		f.metadata.Shutdown()
	}
}
