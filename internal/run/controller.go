package run

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/katalog"
)

// ownerIndex indexes children by the UID of their controller owner.
const ownerIndex = "ork-owner-uid"

// controller reconciles one CRD.
type controller struct {
	e        *Engine
	crd      *katalog.CRD
	gvr      schema.GroupVersionResource
	gvk      schema.GroupVersionKind
	informer cache.SharedIndexInformer
	children []child
	// managed is the set of group/resources the reconciler may return.
	managed  map[schema.GroupResource]bool
	queue    workqueue.TypedRateLimitingInterface[string]
	triggers *triggerBook
	workers  int
	stopping atomic.Bool
	rec      reconciler
	log      *slog.Logger
}

// child is an informer on one managed resource type.
type child struct {
	gvr      schema.GroupVersionResource
	typeKey  string
	informer cache.SharedIndexInformer
}

func newController(ctx context.Context, e *Engine, crd *katalog.CRD, factory dynamicinformer.DynamicSharedInformerFactory) (*controller, error) {
	at := crd.APITypes
	gvr := schema.GroupVersionResource{Group: at.Group, Version: at.Version, Resource: at.Plural}
	if _, err := e.kindFor(gvr); err != nil {
		return nil, fmt.Errorf("%s is not served by the cluster (install crdFile first, or run with --install-crds): %w", gvr.GroupResource(), err)
	}
	c := &controller{
		e:        e,
		crd:      crd,
		gvr:      gvr,
		gvk:      schema.GroupVersionKind{Group: at.Group, Version: at.Version, Kind: at.Kind},
		managed:  map[schema.GroupResource]bool{},
		triggers: newTriggerBook(),
		workers:  crd.OperatorBox.Reconcile.WorkerCount(),
		log:      e.log.With("crd", crd.Name),
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](e.opts.BackoffBase, e.opts.BackoffMax),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: crd.Name, MetricsProvider: e.opts.Metrics.QueueProvider()},
	)
	rec, managedGRs, err := newReconciler(e, crd)
	if err != nil {
		return nil, err
	}
	c.rec = rec

	resync := time.Duration(0)
	if r := crd.OperatorBox.Reconcile.Resync; r != "" {
		if resync, err = time.ParseDuration(r); err != nil {
			return nil, fmt.Errorf("reconcile.resync: %w", err)
		}
	}
	c.informer = dynamicinformer.NewFilteredDynamicInformer(e.dyn, gvr, metav1.NamespaceAll, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	if err := c.informer.SetTransform(stripManagedFields); err != nil {
		return nil, fmt.Errorf("informer transform: %w", err)
	}
	if _, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj, TriggerCreate) },
		UpdateFunc: c.onUpdate,
		DeleteFunc: c.onDelete,
	}); err != nil {
		return nil, fmt.Errorf("event handler: %w", err)
	}

	for _, gr := range managedGRs {
		ch, err := c.watchChildren(gr, factory)
		if err != nil {
			return nil, err
		}
		c.children = append(c.children, ch)
	}
	return c, nil
}

// watchChildren sets up (or shares) the informer on one managed type.
func (c *controller) watchChildren(gr managedType, factory dynamicinformer.DynamicSharedInformerFactory) (child, error) {
	gvr, err := c.e.resolve(gr.GroupVersionResource)
	if err != nil {
		return child{}, fmt.Errorf("managedResources %s: %w", gr.GroupResource(), err)
	}
	c.managed[gvr.GroupResource()] = true
	inf := factory.ForResource(gvr).Informer()
	// Shared informers are configured once; a second CRD managing the same type reuses it.
	if !inf.HasSynced() {
		_ = inf.SetTransform(stripManagedFields)
		_ = inf.AddIndexers(cache.Indexers{ownerIndex: ownerUIDIndex})
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.onChild,
		UpdateFunc: func(_, obj any) { c.onChild(obj) },
		DeleteFunc: c.onChild,
	}); err != nil {
		return child{}, fmt.Errorf("child event handler: %w", err)
	}
	return child{gvr: gvr, typeKey: gr.typeKey, informer: inf}, nil
}

func (c *controller) childrenSynced() []cache.InformerSynced {
	out := make([]cache.InformerSynced, len(c.children))
	for i, ch := range c.children {
		out[i] = ch.informer.HasSynced
	}
	return out
}

func (c *controller) enqueue(obj any, t Trigger) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		c.log.Warn("cannot key object", "err", err)
		return
	}
	c.triggers.note(key, t)
	c.queue.Add(key)
}

func (c *controller) onUpdate(oldObj, newObj any) {
	oldU, ok1 := oldObj.(*unstructured.Unstructured)
	newU, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return
	}
	if oldU.GetResourceVersion() == newU.GetResourceVersion() {
		c.enqueue(newObj, TriggerResync)
		return
	}
	// ork's own status write echoes back as an update: reacting to it would loop forever.
	if onlyStatusChanged(oldU, newU) {
		return
	}
	c.enqueue(newObj, TriggerUpdate)
}

func (c *controller) onDelete(obj any) {
	u, ok := deletedObject(obj)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(u)
	if err != nil {
		return
	}
	c.triggers.noteDelete(key, u.DeepCopy())
	c.queue.Add(key)
}

// onChild re-queues the owner of a changed child, found by its controller ownerReference.
func (c *controller) onChild(obj any) {
	u, ok := deletedObject(obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(u)
	if ref == nil || ref.Kind != c.gvk.Kind {
		return
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != c.gvk.Group {
		return
	}
	key := ref.Name
	if c.crd.IsNamespaced() {
		key = u.GetNamespace() + "/" + ref.Name
	}
	c.triggers.note(key, TriggerChild)
	c.queue.Add(key)
}

// onlyStatusChanged reports whether two versions differ only in status, resourceVersion or
// managedFields.
func onlyStatusChanged(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy().Object
		delete(c, "status")
		if md, ok := c["metadata"].(map[string]any); ok {
			delete(md, "resourceVersion")
			delete(md, "managedFields")
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// stripManagedFields drops managedFields from cached objects: they are large and ork never
// reads them.
func stripManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return obj, nil
}

func ownerUIDIndex(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(u); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// deletedObject is the object of an informer event, unwrapping the tombstone a delete
// missed during a re-list arrives as.
func deletedObject(obj any) (*unstructured.Unstructured, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}
