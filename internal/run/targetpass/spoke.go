package targetpass

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/metacreate"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/apitypes"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/ownedfields"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/target"
)

// newSpoke builds the target's child caches and writer; the Set's lock is held.
func (t *Targets) newSpoke(ref target.Ref, cl *target.Client) (*spokes.Spoke, error) {
	creator, err := metacreate.New(cl.Config)
	if err != nil {
		return nil, &target.Error{Ref: ref, Err: err}
	}
	api := apitypes.New(cl.Kube.Discovery(), t.d.DiscoveryResetInterval)
	selector := func(o *metav1.ListOptions) { o.LabelSelector = t.d.Selector }
	var factory spokes.Factory
	if t.d.Writer.ChildrenPayload {
		factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(cl.Dynamic, 0, metav1.NamespaceAll, selector)
	} else {
		factory = metadatainformer.NewFilteredSharedInformerFactory(cl.Meta, 0, metav1.NamespaceAll, selector)
	}
	sp := spokes.NewSpoke(cl, factory)
	caches := make([]childwrite.Cache, 0, len(t.d.Kinds))
	for _, ch := range t.d.Kinds {
		inf := sp.Factory.ForResource(ch.GVR).Informer()
		_ = inf.SetTransform(childwrite.SummariseWriters)
		if err := inf.AddIndexers(cache.Indexers{childwrite.OwnerIndex: childwrite.MarkedOwnerIndex}); err != nil {
			return nil, fmt.Errorf("target %s: %w", ref, err)
		}
		gr := ch.GVR.GroupResource()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if !initial {
					t.onSpokeChild(sp, gr, nil, obj, false)
				}
			},
			UpdateFunc: func(old, obj any) { t.onSpokeChild(sp, gr, old, obj, false) },
			DeleteFunc: func(obj any) { t.onSpokeChild(sp, gr, nil, obj, true) },
		}); err != nil {
			return nil, fmt.Errorf("target %s: %w", ref, err)
		}
		caches = append(caches, childwrite.Cache{GVR: ch.GVR, Store: inf.GetIndexer()})
		sp.Caches[ch.TypeKey] = inf.GetIndexer()
		sp.Synced = append(sp.Synced, inf.HasSynced)
	}
	d := t.d.Writer
	d.Dyn, d.Meta, d.Creator, d.Book, d.Locks = cl.Dynamic, cl.Meta, creator, sp.Book, childwrite.NewLocks()
	d.Owned = ownedfields.New(ownedfields.Options{Client: openapi.NewClientWithContext(cl.Kube.Discovery().RESTClient()), Manager: naming.FieldManager})
	d.Mapping, d.Children = api.Mapping, caches
	d.Log, d.Remote = t.log().With("target", ref.String()), true
	sp.Writer = childwrite.New(d)
	sp.Start()
	return sp, nil
}

// onSpokeChild queues the CR that marks a changed child on a target, unless the change is
// ork's own write coming back (the spoke's write book), as the controller does for the hub's.
func (t *Targets) onSpokeChild(sp *spokes.Spoke, gr schema.GroupResource, oldObj, obj any, deleted bool) {
	u, ok := kobj.DeletedMeta(obj)
	if !ok {
		return
	}
	ev := childwrite.Event{Ref: childwrite.RefOf(gr, u), RV: u.GetResourceVersion(), UID: u.GetUID()}
	key, ok := t.d.Set.OwnerKey(types.UID(u.GetAnnotations()[naming.OwnerAnnotation]))
	if deleted {
		own := sp.Book.OwnDelete(ev)
		sp.Book.Forget(ev, true)
		if ok && !own {
			t.d.ChildChanged(key)
		}
		return
	}
	if !ok {
		return
	}
	payload := t.d.Writer.ChildrenPayload
	if old, isMeta := kobj.DeletedMeta(oldObj); isMeta {
		if old.GetResourceVersion() == u.GetResourceVersion() {
			return
		}
		if !payload && kobj.ChildStatusOnly(oldObj, obj) {
			return
		}
	}
	if sp.Book.Own(ev, !payload) {
		return
	}
	t.d.ChildChanged(key)
}
