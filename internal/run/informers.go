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
	// needFull are the types some remote reconciler receives as prepared.children.
	needFull map[schema.GroupResource]bool
}

// childSelector selects what the operator named name applied: every object it writes
// carries both labels.
func childSelector(name string) string {
	return ManagedByLabel + "=" + ManagedByValue + "," + OperatorLabel + "=" + name
}

func newChildInformers(dyn dynamic.Interface, meta metadata.Interface, set *katalog.Set, name string) childInformers {
	selector := childSelector(name)
	onlyOrks := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	ci := childInformers{
		full:     dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, onlyOrks),
		metadata: metadatainformer.NewFilteredSharedInformerFactory(meta, 0, metav1.NamespaceAll, onlyOrks),
		needFull: map[schema.GroupResource]bool{},
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

func (ci childInformers) informer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	if ci.needFull[gvr.GroupResource()] {
		return ci.full.ForResource(gvr).Informer()
	}
	return ci.metadata.ForResource(gvr).Informer()
}

func (ci childInformers) start(stop <-chan struct{}) {
	ci.full.Start(stop)
	ci.metadata.Start(stop)
}

// shutdown waits for the informers start began (after their stop channel closed).
func (ci childInformers) shutdown() {
	ci.full.Shutdown()
	ci.metadata.Shutdown()
}
