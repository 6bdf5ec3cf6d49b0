package run

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/candidate"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crdqueue"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/inflight"
	"github.com/orkspace/ork/internal/run/informers"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/liveness"
	"github.com/orkspace/ork/internal/run/relatedwatch"
	"github.com/orkspace/ork/internal/run/suspensions"
	"github.com/orkspace/ork/internal/run/targetpass"
)

// controller reconciles one CRD.
type controller struct {
	e *Engine
	// cfg is what the CRD's Katalog entry and the cluster fixed at the start.
	cfg      crdConfig
	informer informers.Scoped
	children []child
	// related reads and watches payload.related (related.go); nil without entries.
	related *relatedwatch.Watch
	// queue is the CRD's work queue with its lanes, one handle (enqueue.go).
	queue  workQueue
	ledger *keyledger.Ledger
	// suspended are the CRs suspended at their last pass (suspend.go).
	suspended *suspensions.Memory
	// pruned are the status keys the CRD's schema drops (statusprune.go).
	pruned crstatus.PrunedKeys
	rec    reconciler
	// cand is the remote reconciler's rollout candidate (run/candidate), nil without one.
	cand *candidate.Candidate
	// env is what the reconciler may use of the controller (passEnv), built once.
	env passEnv
	// writes is the controller's write path for its children (childwrite), built once.
	writes childWrites
	// ops are the long-running operations held for its CRs (operations.go).
	ops *inflight.Book
	// crw are the effects of the writes to the CR itself in the run's mode, built once.
	crw crWrites
	// targets is its target pass (run/targetpass): where its CRs' children go.
	targets *targetpass.Targets
}

// child is an informer on one managed resource type.
type child struct {
	gvr      schema.GroupVersionResource
	typeKey  string
	informer informers.Scoped
}

func newController(ctx context.Context, e *Engine, crd *katalog.CRD, factories childInformers) (*controller, error) {
	at := crd.APITypes
	gvr := schema.GroupVersionResource{Group: at.Group, Version: at.Version, Resource: at.Plural}
	if _, err := e.api.KindFor(gvr); err != nil {
		return nil, fmt.Errorf("%s is not served by the cluster (install crdFile first, or run with --install-crds): %w", gvr.GroupResource(), err)
	}
	hasStatus, err := e.api.ServesStatus(gvr)
	if err != nil {
		return nil, err
	}
	c := &controller{
		e: e,
		cfg: crdConfig{
			crd:       crd,
			gvr:       gvr,
			gvk:       schema.GroupVersionKind{Group: at.Group, Version: at.Version, Kind: at.Kind},
			managed:   map[schema.GroupResource]bool{},
			workers:   crd.OperatorBox.Reconcile.WorkerCount(),
			hasStatus: hasStatus,
			log:       e.log.With("crd", crd.Name),
		},
		ledger:    keyledger.New(),
		suspended: suspensions.New(func(n int) { e.opts.Metrics.SuspendedCRs.WithLabelValues(crd.Name).Set(float64(n)) }),
	}
	if e.dry == nil {
		// A dry run persists no operation: nothing is held, nothing is counted.
		c.ops = inflight.New(func(n int) { e.opts.Metrics.OperationsInFlight.WithLabelValues(crd.Name).Set(float64(n)) },
			func(result string, d time.Duration) {
				e.opts.Metrics.OperationDuration.WithLabelValues(crd.Name, result).Observe(d.Seconds())
			})
	}
	if crd.IsRemote() {
		c.cfg.operationInStatus, _ = operation.StatusKeeps(crd.Schema())
	}
	if !hasStatus {
		c.cfg.log.Warn("the CRD has no status subresource: ork writes no status for its custom resources "+
			"(every write to the object would bump its generation and trigger ork again); add subresources: {status: {}} to the CRD",
			"resource", gvr.GroupResource().String())
	}
	lanes := crdqueue.New(crd.Name, e.opts.BackoffBase, e.opts.BackoffMax, e.opts.Metrics.Queue,
		func(key string) string { return targetName(c.targets.Turn(key)) })
	rec, managedGRs, err := newReconciler(e, crd)
	if err != nil {
		return nil, err
	}
	c.rec = rec
	timeout := remote.DefaultTimeout
	if rr, ok := rec.(*remoteReconciler); ok {
		c.cand = rr.cand
		timeout = rr.r.Timeout()
		if rr.cand != nil && rr.cand.Canary() {
			// A canary pass waits for the candidate, whose timeout may be the longer.
			timeout = max(timeout, rr.cand.Timeout())
		}
	}
	c.queue = workQueue{TypedRateLimitingInterface: e.live.Watch(crd.Name, c.cfg.workers, timeout, lanes), lanes: lanes}
	c.cfg.passTimeout = timeout + liveness.PassWriteGrace
	if r := crd.OperatorBox.Reconcile.Remote; r != nil {
		c.cfg.childrenPayload = r.Payload.Children.Enabled
		// Sharded, ork's finalizer is on every custom resource: a name deleted and created
		// again may have its two incarnations in two replicas' buckets, and only the name
		// held until the old one's delete is answered orders their calls (docs/scaling.md).
		c.cfg.finalize, c.cfg.finalizeTimeout = r.Finalize || e.opts.ShardBuckets != 0, r.FinalizeTimeoutOrDefault()
		c.cfg.skipMaxAge, c.cfg.skipConfig = r.SkipUnchanged.MaxAgeOrZero(), skipConfig(r)
	}

	if r := crd.OperatorBox.Reconcile.Resync; r != "" {
		if c.cfg.resync, err = time.ParseDuration(r); err != nil {
			return nil, fmt.Errorf("reconcile.resync: %w", err)
		}
	}
	// No informer resync: every key schedules its own, with jitter (scheduleResync).
	crInformer := func(namespace string) cache.SharedIndexInformer {
		if e.ring != nil {
			return e.ring.NewCRCache(e.dyn, gvr, namespace, crd.Name, !e.opts.ShardClientFilterOnly).Informer()
		}
		return dynamicinformer.NewFilteredDynamicInformer(e.dyn, gvr, namespace, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	}
	if c.informer, err = e.watchScope(gvr, crInformer); err != nil {
		return nil, err
	}
	if err := c.informer.SetTransform(kobj.StripManagedFields); err != nil {
		return nil, fmt.Errorf("informer transform: %w", err)
	}
	if _, err := c.informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		// The initial list (start, a new leader) is the slow lane; a create seen later, fast.
		AddFunc:    c.onAdd,
		UpdateFunc: c.onUpdate,
		DeleteFunc: c.onDelete,
	}); err != nil {
		return nil, fmt.Errorf("event handler: %w", err)
	}

	// A target named by a fixed Secret name takes every child: none is ever on the hub, where
	// `ork rbac gen` grants no rights on their types, so the hub watches none of them.
	onlyTarget := targetpass.Fixed(crd)
	for _, gr := range managedGRs {
		ch, err := c.watchChildren(gr, factories, !onlyTarget)
		if err != nil {
			return nil, err
		}
		if onlyTarget {
			c.cfg.targetTypes = append(c.cfg.targetTypes, ch)
			continue
		}
		c.children = append(c.children, ch)
	}
	if c.related, err = newRelatedWatch(c); err != nil {
		return nil, err
	}
	c.writes = c.childWriter()
	set, err := targetpass.NewSet(crd, e.opts.Namespace, &e.spokeUse)
	if err != nil {
		return nil, err
	}
	c.targets = c.newTargets(set)
	c.crw = newCRWrites(c)
	c.env = newPassEnv(c)
	return c, nil
}

// watchChildren sets up (or shares) the informer on one managed type; without hub, it only
// resolves the type (its children are all on a target).
func (c *controller) watchChildren(gr managedType, factories childInformers, hub bool) (child, error) {
	gvr, err := c.e.api.Resolve(gr.GroupVersionResource)
	if err != nil {
		return child{}, fmt.Errorf("managedResources %s: %w", gr.GroupResource(), err)
	}
	c.cfg.managed[gvr.GroupResource()] = true
	if !hub {
		return child{gvr: gvr, typeKey: gr.typeKey}, nil
	}
	// The scope matters only under --watch-namespace: the default path asks nothing more.
	namespaced := true
	if len(c.e.opts.WatchNamespaces) > 0 {
		if namespaced, err = c.e.api.Namespaced(gvr); err != nil {
			return child{}, fmt.Errorf("managedResources %s: %w", gr.GroupResource(), err)
		}
	}
	inf := factories.informer(gvr, namespaced)
	// Shared informers are configured once; a second CRD managing the same type reuses it.
	if !inf.HasSynced() {
		_ = inf.SetTransform(childwrite.SummariseWriters) // managedFields reduced to ork's own entries
		_ = inf.AddIndexers(cache.Indexers{ownerIndex: kobj.OwnerUIDIndex})
	}
	resource := gvr.GroupResource()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if c.revealed(obj) {
				return
			}
			if isInInitialList || c.takenBacklog(obj, true) {
				// The cache's first list, at start or on a new leader: the owner's own
				// initial add queues it (in the slow lane). Passing it for its children
				// too would put the whole start-up backlog in the fast lane. So for a
				// child of a bucket this sharded replica just took.
				return
			}
			c.onChild(resource, nil, obj, false)
		},
		UpdateFunc: func(old, obj any) { c.onChild(resource, old, obj, false) },
		DeleteFunc: func(obj any) { c.onChild(resource, nil, obj, true) },
	}); err != nil {
		return child{}, fmt.Errorf("child event handler: %w", err)
	}
	return child{gvr: gvr, typeKey: gr.typeKey, informer: inf}, nil
}

// waitSynced waits until the CRD's own informer and its children's have listed their types,
// at most timeout. The error names the types that could not be listed, or is ctx's when ctx
// ended first.
func (c *controller) waitSynced(ctx context.Context, timeout time.Duration) error {
	syncCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	synced := []cache.InformerSynced{c.informer.HasSynced, c.related.HasSynced}
	for _, ch := range c.children {
		synced = append(synced, ch.informer.HasSynced)
	}
	if cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // a stop, not a failure: the caller starts nothing
	}
	var missing []string
	if !c.informer.HasSynced() {
		missing = append(missing, c.cfg.gvr.GroupResource().String())
	}
	for _, ch := range c.children {
		if !ch.informer.HasSynced() {
			missing = append(missing, ch.gvr.GroupResource().String())
		}
	}
	missing = append(missing, c.related.Unsynced()...)
	slices.Sort(missing)
	return fmt.Errorf("crd %s: caches did not sync within %s: could not list and watch %v "+
		"(check that ork may list and watch them, and that the apiserver serves them; --cache-sync-timeout sets the bound)",
		c.cfg.crd.Name, timeout, missing)
}

// enqueue queues obj's key for t: in the fast lane when fast (a real change).
func (c *controller) enqueue(obj any, t Trigger, fast bool) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		c.cfg.log.Warn("cannot key object", "err", err)
		return
	}
	var uid types.UID
	if m, err := meta.Accessor(obj); err == nil {
		uid = m.GetUID()
	}
	c.countTrigger(t)
	o := addOpts{trigger: t, uid: uid}
	if fast {
		o.lane = laneFast
	}
	c.add(key, o)
}

func (c *controller) onUpdate(oldObj, newObj any) {
	oldU, ok1 := oldObj.(*unstructured.Unstructured)
	newU, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return
	}
	// Another object under the name: deleted and created again while the watch was down
	// (the relist shows it as an update). The old one's delete is owed first.
	if oldU.GetUID() != newU.GetUID() {
		c.onDelete(oldU)
		c.notePass(newU)
		c.enqueue(newObj, TriggerCreate, true) // a real change: the fast lane
		return
	}
	// The same version again is the informer's resync, or a re-list after a broken watch.
	if oldU.GetResourceVersion() == newU.GetResourceVersion() {
		if c.e.gate.partial() {
			// A sharded cache lists again whenever the held buckets change: the CRs it
			// still holds are no news (a change comes with a new resourceVersion), unless
			// a take owes them a pass.
			c.onSync(newU)
			return
		}
		c.enqueue(newObj, TriggerResync, false)
		return
	}
	// ork's own status write echoes back as an update: reacting to it would loop forever.
	// Its finalizer write too: it needs no call of its own (unless a take owes it a pass).
	// And the operation annotation it writes for a reconciler's long-running operation.
	if kobj.OnlyStatusChanged(oldU, newU) || onlyOrkFinalizerChanged(oldU, newU, c.cfg.finalize) || kobj.OnlyAnnotationChanged(oldU, newU, operation.Annotation) ||
		kobj.OnlyFinalizerAdded(oldU, newU, naming.TargetCleanupFinalizer) {
		c.onSync(newU)
		return
	}
	c.notePass(newU) // this pass is the take's too: a later relist owes it none
	c.enqueue(newObj, TriggerUpdate, true)
}

func (c *controller) onDelete(obj any) {
	u, ok := kobj.DeletedObject(obj)
	if !ok {
		return
	}
	c.e.gate.forgetPass(u.GetUID())
	if !c.e.gate.owns(u.GetUID()) {
		return // its bucket went to another replica: it left this cache, not the cluster
	}
	key, err := cache.MetaNamespaceKeyFunc(u)
	if err != nil {
		return
	}
	c.ledger.NoteDelete(key, u.DeepCopy())
	c.related.Forget(key) // its references die with it; a new object of the name records its own
	if c.cand != nil {
		c.cand.Forget(key, u.GetUID())
	}
	c.countTrigger(TriggerDelete)
	c.add(key, addOpts{lane: laneFast})
}

// onChild re-queues the owner of a changed child, found by its controller ownerReference,
// unless the change is ork's own write coming back, or only the child's status changed and
// the reconciler does not see children.
func (c *controller) onChild(gr schema.GroupResource, oldObj, obj any, deleted bool) {
	u, ok := kobj.DeletedMeta(obj)
	if !ok {
		return
	}
	ev := childwrite.Event{Ref: childwrite.RefOf(gr, u), RV: u.GetResourceVersion(), UID: u.GetUID()}
	key, ok := c.ownerKey(u)
	if deleted && ok && !c.e.gate.owns(metav1.GetControllerOf(u).UID) {
		// Its owner's bucket went to another replica: it left this cache, not the cluster.
		c.e.writes.Forget(ev, ok)
		return
	}
	var ownDelete bool
	if deleted {
		ownDelete = c.e.writes.OwnDelete(ev) // ork pruned it: asked for, no news
		c.e.writes.Forget(ev, ok)            // whoever owned it: the record must not outlive the object
	}
	if !ok {
		return
	}
	if deleted {
		if !ownDelete {
			c.childChanged(key)
		}
		return
	}
	if old, ok := kobj.DeletedMeta(oldObj); ok {
		if old.GetResourceVersion() == u.GetResourceVersion() {
			return // a re-list of an unchanged child: the owner's own resync covers it
		}
		if !c.cfg.childrenPayload && kobj.ChildStatusOnly(oldObj, obj) {
			return
		}
	}
	if c.e.writes.Own(ev, !c.cfg.childrenPayload) {
		return
	}
	// During the owner's pass, ork's write and its echo race: decide once the pass has
	// recorded what it wrote.
	if c.ledger.DeferIfProcessing(key, ev) {
		return
	}
	c.childChanged(key)
}

// childChanged queues the owner for a child's change (the fast lane), no sooner than ChildMinInterval after
// its last pass: a rollout's burst of changes, or a controller fighting ork, cannot run the
// remote reconciler hot.
func (c *controller) childChanged(key string) {
	c.countTrigger(TriggerChild)
	c.add(key, addOpts{trigger: TriggerChild, lane: laneFast, minInterval: c.e.opts.ChildMinInterval})
}

// ownerKey is the queue key of the CR that controls u, if it is one of this CRD's.
func (c *controller) ownerKey(u metav1.Object) (string, bool) {
	ref := metav1.GetControllerOf(u)
	if ref == nil || ref.Kind != c.cfg.gvk.Kind {
		return "", false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != c.cfg.gvk.Group {
		return "", false
	}
	if c.cfg.crd.IsNamespaced() {
		return u.GetNamespace() + "/" + ref.Name, true
	}
	return ref.Name, true
}

func (c *controller) countTrigger(t Trigger) {
	c.e.opts.Metrics.TriggersTotal.WithLabelValues(c.cfg.crd.Name, string(t)).Inc()
}
