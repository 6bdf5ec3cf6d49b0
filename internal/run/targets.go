package run

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/metacreate"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/run/apitypes"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/ownedfields"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/target"
)

// Targets: the children of a CR whose CRD names a target (docs/multicluster.md) go to the
// cluster its kubeconfig Secret reaches. The engine keeps one target.Pool (clients built
// lazily, a circuit breaker per target); each controller keeps, per target its CRs use, a
// spoke: the target's child caches (watched, label-selected like the hub's) and a
// childwrite.Writer built on the target's clients and caches, its own write book and child
// locks (a child's Ref names no cluster, so the hub's book cannot hold a target's children).
const (
	// cleanupPoll is how soon a deleting CR looks again at its children on the target.
	cleanupPoll = 500 * time.Millisecond
	// reasonTargetInvalid: the CR's target does not render (a field it lacks).
	reasonTargetInvalid = "TargetInvalid"
)

// hasTargets reports whether a CRD of set names a target.
func hasTargets(set *katalog.Set) bool {
	return slices.ContainsFunc(set.CRDs, func(c *katalog.CRD) bool { return c.Target() != nil })
}

// fixedTarget reports whether crd's target is a fixed Secret name: no custom resource of it
// has a child on the hub (a templated name may render empty, the hub).
func fixedTarget(crd *katalog.CRD) bool {
	t := crd.Target()
	return t != nil && t.KubeconfigSecretRef != nil && t.KubeconfigSecretRef.Name != "" && !render.IsTemplate(t.KubeconfigSecretRef.Name)
}

// targetAt is the Katalog path of crd's target, for errors.
func targetAt(crd *katalog.CRD) string {
	if crd.OperatorBox.Reconcile.Remote != nil {
		return "operatorBox.reconcile.remote.target"
	}
	return "operatorBox.reconcile.target"
}

// targetPass is where one pass writes the CR's children: the hub, or a target.
type targetPass struct {
	ref    target.Ref
	writes childWrites
	// spoke is the target's writer (nil for the hub): the clean-up sweeps it.
	spoke *childwrite.Writer
}

// passTarget resolves in's target. A failure the pass reports is a decision (the target
// does not render, is unreachable); an error is a failed finalizer write or a lost fence. A
// CR with a target other than the hub gets naming.TargetCleanupFinalizer first, before any
// of its children is written there.
func (c *controller) passTarget(ctx context.Context, in *input) (targetPass, *decision, error) {
	hub := targetPass{writes: c.writes}
	if c.spokes == nil {
		return hub, nil, nil
	}
	ref, err := target.Resolve(c.spokes.Template, in.cr.Object)
	if in.gone {
		// Its delete call still names the cluster; nothing is written there any more (its
		// children went before it did).
		if err == nil {
			in.target = ref
		}
		return hub, nil, nil
	}
	if err != nil {
		d := failure(reasonTargetInvalid, "target: %v", err)
		return hub, &d, nil
	}
	c.releaseTargets(c.spokes.Use(in.key, in.cr.GetUID(), ref))
	if ref.Local() {
		return hub, nil, nil
	}
	in.target = ref
	if !in.deleting {
		if skip, err := c.setFinalizerNamed(ctx, in, naming.TargetCleanupFinalizer, true); err != nil || skip != nil {
			return hub, skip, err
		}
	}
	if ok, why := c.e.targets.Reachable(ref); !ok {
		d := c.unreachable(ref, why)
		return hub, &d, nil
	}
	if !c.e.targets.StateOf(ref).Reachable {
		// The one try the open breaker lets through is a probe: a pass whose writes all turn
		// out unchanged sends nothing to the target, and would say Ready about a dead one.
		if err := c.e.targets.Probe(ctx, ref); err != nil {
			d := c.unreachable(ref, err.Error())
			return hub, &d, nil
		}
	}
	sp, err := c.spokeFor(ctx, ref)
	if err != nil {
		c.e.targets.Failed(ref, err)
		d := c.unreachable(ref, err.Error())
		return hub, &d, nil
	}
	if !in.deleting {
		// Recorded before its first child goes there: a later change of target, or its
		// delete, finds them even after a restart (targetmove.go).
		if err := c.recordTarget(ctx, in, ref); err != nil {
			return hub, nil, err
		}
	}
	return targetPass{ref: ref, writes: sp.Writer, spoke: sp.Writer}, nil, nil
}

// unreachable is the decision of a pass whose target does not answer: Ready=False, tried
// again when the breaker lets the next try through, without holding a worker meanwhile.
func (c *controller) unreachable(ref target.Ref, why string) decision {
	after := max(time.Until(c.e.targets.StateOf(ref).RetryAt), minRequeueAfter)
	return decision{action: actionRetryAfter, after: after, reason: target.ReasonTargetUnreachable,
		message: fmt.Sprintf("target %s is unreachable: %s", ref, why)}
}

// targetWritten feeds the breaker with what the writes to tp's target met: a failure that
// says the target cannot be reached makes the pass's decision TargetUnreachable; wrote is
// whether a write went through (an unchanged child may send nothing, which says nothing).
func (c *controller) targetWritten(tp targetPass, err error, d *decision, wrote bool) {
	if tp.spoke == nil {
		return
	}
	if err != nil && target.Unreachable(err) {
		c.e.targets.Failed(tp.ref, err)
		f := c.unreachable(tp.ref, err.Error())
		f.related, f.relatedRead, f.relatedCut, f.op, f.progress = d.related, d.relatedRead, d.relatedCut, d.op, d.progress
		*d = f
		return
	}
	if wrote {
		c.e.targets.Succeeded(tp.ref)
	}
}

// cleanupTarget deletes a deleting CR's children from its target, and from every target its
// status records as holding some (one it left), and lifts naming.TargetCleanupFinalizer once
// none is left; ork's own finalizer, when the CRD has finalize, goes first (the reconciler's
// delete may want its children). A decision asks to look again while children remain.
func (c *controller) cleanupTarget(ctx context.Context, in *input, tp targetPass) (*decision, error) {
	if !slices.Contains(in.cr.GetFinalizers(), naming.TargetCleanupFinalizer) || finalizer.Has(in.cr) {
		return nil, nil
	}
	refs, err := c.heldTargets(ctx, in, tp.ref)
	if err != nil {
		return nil, err
	}
	left := 0
	for _, ref := range refs {
		n, down, err := c.sweepTarget(ctx, in, ref, nil)
		if err != nil {
			return nil, err
		}
		if down != "" {
			d := c.unreachable(ref, down)
			return &d, nil
		}
		left += n
	}
	if left > 0 {
		return &decision{success: true, action: actionRequeueAfter, after: cleanupPoll, reason: ReasonSucceeded,
			message: fmt.Sprintf("waiting for %d children to be deleted on the targets", left)}, nil
	}
	return c.setFinalizerNamed(ctx, in, naming.TargetCleanupFinalizer, false)
}

// spokeFor is the controller's spoke of ref, built (or rebuilt, when the pool's client
// changed: a rotated Secret) with the target's current client, its child caches synced.
func (c *controller) spokeFor(ctx context.Context, ref target.Ref) (*spokes.Spoke, error) {
	cl, err := c.e.targets.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.spokes.For(ctx, ref, cl, func() (*spokes.Spoke, error) { return c.newSpoke(ref, cl) })
}

// releaseTargets stops the spokes of refs, which none of the controller's CRs use any more,
// and tells the pool to forget a target no controller holds.
func (c *controller) releaseTargets(refs []target.Ref) {
	for _, ref := range c.spokes.Release(refs) {
		c.e.targets.Forget(ref)
	}
}

// newSpoke builds the target's child caches and writer; c.spokes's lock is held.
func (c *controller) newSpoke(ref target.Ref, cl *target.Client) (*spokes.Spoke, error) {
	creator, err := metacreate.New(cl.Config)
	if err != nil {
		return nil, &target.Error{Ref: ref, Err: err}
	}
	api := apitypes.New(cl.Kube.Discovery(), c.e.opts.DiscoveryResetInterval)
	selector := func(o *metav1.ListOptions) { o.LabelSelector = childSelector(c.e.opts.Name) }
	var factory spokes.Factory
	if c.cfg.childrenPayload {
		factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(cl.Dynamic, 0, metav1.NamespaceAll, selector)
	} else {
		factory = metadatainformer.NewFilteredSharedInformerFactory(cl.Meta, 0, metav1.NamespaceAll, selector)
	}
	sp := spokes.NewSpoke(cl, factory)
	types := append(slices.Clone(c.children), c.cfg.targetTypes...)
	caches := make([]childwrite.Cache, 0, len(types))
	for _, ch := range types {
		inf := sp.Factory.ForResource(ch.gvr).Informer()
		_ = inf.SetTransform(childwrite.SummariseWriters)
		if err := inf.AddIndexers(cache.Indexers{ownerIndex: childwrite.MarkedOwnerIndex}); err != nil {
			return nil, fmt.Errorf("target %s: %w", ref, err)
		}
		gr := ch.gvr.GroupResource()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if !initial {
					c.onSpokeChild(sp, gr, nil, obj, false)
				}
			},
			UpdateFunc: func(old, obj any) { c.onSpokeChild(sp, gr, old, obj, false) },
			DeleteFunc: func(obj any) { c.onSpokeChild(sp, gr, nil, obj, true) },
		}); err != nil {
			return nil, fmt.Errorf("target %s: %w", ref, err)
		}
		caches = append(caches, childwrite.Cache{GVR: ch.gvr, Store: inf.GetIndexer()})
		sp.Caches[ch.typeKey] = inf.GetIndexer()
		sp.Synced = append(sp.Synced, inf.HasSynced)
	}
	sp.Writer = childwrite.New(childwrite.Deps{
		Dyn: cl.Dynamic, Meta: cl.Meta, Creator: creator, Book: sp.Book, Locks: childwrite.NewLocks(),
		Owned:    ownedfields.New(ownedfields.Options{Client: openapi.NewClientWithContext(cl.Kube.Discovery().RESTClient()), Manager: FieldManager}),
		MayWrite: c.e.fence.mayWrite, NotLeader: errNotLeader, Mapping: api.Mapping, Children: caches, Managed: c.cfg.managed,
		CRD: c.cfg.crd.Name, Operator: c.e.opts.Name,
		ForceConflict: c.cfg.crd.OperatorBox.Reconcile.ForceConflict, ShardSlots: c.e.ring != nil,
		ChildrenPayload: c.cfg.childrenPayload, DryRun: c.e.dry != nil, Note: c.note,
		Removed: c.ledger.Removed, MarkRemoved: c.ledger.MarkRemoved,
		ApplyTotal: c.e.opts.Metrics.ApplyTotal, LockWait: c.e.opts.Metrics.ChildLockWait,
		Log: c.cfg.log.With("target", ref.String()), Remote: true,
	})
	sp.Start()
	return sp, nil
}

// spokeChildren are cr's children on its target, as childrenOf gives the hub's; false when
// its last pass did not go to a target.
func (c *controller) spokeChildren(cr *unstructured.Unstructured) (map[string]map[string]map[string]any, bool) {
	if c.spokes == nil {
		return nil, false
	}
	sp, ok := c.spokes.Current(kobj.KeyOf(cr), cr.GetUID())
	if !ok {
		return nil, false
	}
	return sp.Children(ownerIndex, cr.GetUID()), true
}

// onSpokeChild queues the CR that marks a changed child on a target, unless the change is
// ork's own write coming back (the spoke's write book), as onChild does for the hub's.
func (c *controller) onSpokeChild(sp *spokes.Spoke, gr schema.GroupResource, oldObj, obj any, deleted bool) {
	u, ok := kobj.DeletedMeta(obj)
	if !ok {
		return
	}
	ev := childwrite.Event{Ref: childwrite.RefOf(gr, u), RV: u.GetResourceVersion(), UID: u.GetUID()}
	key, ok := c.spokes.OwnerKey(types.UID(u.GetAnnotations()[OwnerAnnotation]))
	if deleted {
		own := sp.Book.OwnDelete(ev)
		sp.Book.Forget(ev, true)
		if ok && !own {
			c.childChanged(key)
		}
		return
	}
	if !ok {
		return
	}
	if old, isMeta := kobj.DeletedMeta(oldObj); isMeta {
		if old.GetResourceVersion() == u.GetResourceVersion() {
			return
		}
		if !c.cfg.childrenPayload && kobj.ChildStatusOnly(oldObj, obj) {
			return
		}
	}
	if sp.Book.Own(ev, !c.cfg.childrenPayload) {
		return
	}
	c.childChanged(key)
}

// turnTarget names the target of key's CR for the work queue's turns (crdqueue.New): the
// one its last pass went to, else the one its cached object renders; "" for the hub, a
// target that does not render, or a CRD without targets. It runs at each add, before the
// queue's locks are taken (crdqueue.Queue's lock order), never under them.
func (c *controller) turnTarget(key string) string {
	if c.spokes == nil {
		return ""
	}
	ref, ok := c.spokes.TargetOf(key)
	if !ok {
		cr := c.cached(key)
		if cr == nil {
			return ""
		}
		ref, _ = target.Resolve(c.spokes.Template, cr.Object) // an error is the hub's turn: the pass says it
	}
	return targetName(ref)
}

// requeueTarget queues the CRs whose last pass went to ref (its reachability changed).
func (c *controller) requeueTarget(ref target.Ref) {
	if c.spokes == nil {
		return
	}
	for _, key := range c.spokes.KeysOf(ref) {
		c.add(key, addOpts{trigger: TriggerRequeue})
	}
}

// forgetTargets drops the targets of the CRs gone says are gone.
func (c *controller) forgetTargets(gone func(key string, uid types.UID) bool) {
	if c.spokes == nil {
		return
	}
	c.releaseTargets(c.spokes.Forget(gone))
}

// probeTargets probes the targets with a client (spokes.Probe) and queues the CRs of each
// target whose reachability changed. The returned func stops it and waits.
func (e *Engine) probeTargets(ctx context.Context, controllers []*controller) func() {
	if e.targets == nil {
		return func() {}
	}
	return spokes.Probe(ctx, e.targets, func(ref target.Ref) {
		for _, c := range controllers {
			c.requeueTarget(ref)
		}
	}, e.log)
}
