package targetpass

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/target"
)

// The engine keeps one target.Pool (clients built lazily, a circuit breaker per target); each
// controller keeps, per target its CRs use, a spoke: the target's child caches (watched,
// label-selected like the hub's) and a childwrite.Writer built on the target's clients and
// caches, its own write book and child locks (a child's Ref names no cluster, so the hub's
// book cannot hold a target's children).

// ChildType is one managed type of the CRD's children.
type ChildType struct {
	GVR     schema.GroupVersionResource
	TypeKey string
	// Hub is the hub's child cache of the type, indexed by owner; nil for a type the hub
	// does not watch (a CRD whose every child is on a target, Fixed).
	Hub interface {
		ByIndex(name, value string) ([]any, error)
	}
}

// Pruner prunes a CR's children on the hub: the hub's writer.
type Pruner interface {
	Prune(ctx context.Context, cr *unstructured.Unstructured, rep *childwrite.Report) error
}

// Deps is what the target pass knows of its controller.
type Deps struct {
	// Set is the controller's spokes (NewSet); nil when its CRD names no target.
	Set *spokes.Set
	// Pool holds the targets' clients and breakers, engine-wide; Uses counts the spokes'
	// holds of each target across the controllers.
	Pool *target.Pool
	Uses *spokes.Uses
	// Kinds are the managed types: the hub's child types, then those the hub does not watch.
	Kinds []ChildType
	// Selector is the label selector of ork's children.
	Selector string
	// DiscoveryResetInterval is how often a target's discovery is read again.
	DiscoveryResetInterval time.Duration
	// Writer is what a spoke's writer shares with the hub's: the fence (MayWrite, NotLeader),
	// the CRD's names and flags, the callbacks into the ledger and the dry run, the metrics
	// and the log (which the pass logs to too).
	Writer childwrite.Deps
	// Hub is the hub's writer.
	Hub Pruner
	// Cached is the cached CR of key; nil when there is none.
	Cached func(key string) *unstructured.Unstructured
	// ChildChanged queues key's CR for a changed child; Requeue queues it for a target's
	// changed reachability.
	ChildChanged, Requeue func(key string)
	// Event records an Event on obj, when this replica may still write.
	Event func(obj *unstructured.Unstructured, typ, reason, msg string)
	// Records says whether status.childTargets is written at all: the CRD keeps a status,
	// the run is not dry, and the schema does not prune the key (then ork knows the
	// targets only until it stops).
	Records func() bool
	// MinAfter is the floor of a retry's delay.
	MinAfter time.Duration
}

// Targets is one controller's target pass. A nil Targets, or one without a Set, sends every
// child to the hub.
type Targets struct {
	d Deps
	// oneOffs are the sweep clients kept for a CR's next sweep (sweep).
	oneOffs oneOffs
}

// New is the target pass of d's controller.
func New(d Deps) *Targets { return &Targets{d: d} }

// off reports whether the CRD names no target.
func (t *Targets) off() bool { return t == nil || t.d.Set == nil }

func (t *Targets) log() *slog.Logger { return t.d.Writer.Log }

// Named reports whether a CRD of set names a target.
func Named(set *katalog.Set) bool {
	return slices.ContainsFunc(set.CRDs, func(c *katalog.CRD) bool { return c.Target() != nil })
}

// Fixed reports whether crd's target is a fixed Secret name: no custom resource of it has a
// child on the hub (a templated name may render empty, the hub).
func Fixed(crd *katalog.CRD) bool {
	t := crd.Target()
	return t != nil && t.KubeconfigSecretRef != nil && t.KubeconfigSecretRef.Name != "" && !render.IsTemplate(t.KubeconfigSecretRef.Name)
}

// at is the Katalog path of crd's target, for errors.
func at(crd *katalog.CRD) string {
	if crd.OperatorBox.Reconcile.Remote != nil {
		return "operatorBox.reconcile.remote.target"
	}
	return "operatorBox.reconcile.target"
}

// NewSet is the spokes of crd's custom resources, its target compiled; nil when crd names
// none. uses counts the holds of each target across the controllers.
func NewSet(crd *katalog.CRD, namespace string, uses *spokes.Uses) (*spokes.Set, error) {
	t := crd.Target()
	if t == nil {
		return nil, nil
	}
	tmpl, err := target.Compile(at(crd), t, namespace)
	if err != nil {
		return nil, err
	}
	return spokes.New(tmpl, uses), nil
}

// Writer is the writer of the children of key's CR uid on at, the target its pass resolved;
// nil for the hub, or when no spoke of it runs.
func (t *Targets) Writer(key string, uid types.UID, at target.Ref) *childwrite.Writer {
	if at.Local() || t.off() {
		return nil
	}
	if sp, ok := t.d.Set.Current(key, uid); ok {
		return sp.Writer
	}
	return nil
}

// Children are cr's children on its target, as the hub's caches give the hub's; false when
// its last pass did not go to a target.
func (t *Targets) Children(cr *unstructured.Unstructured) (map[string]map[string]map[string]any, bool) {
	if t.off() {
		return nil, false
	}
	sp, ok := t.d.Set.Current(kobj.KeyOf(cr), cr.GetUID())
	if !ok {
		return nil, false
	}
	return sp.Children(childwrite.OwnerIndex, cr.GetUID()), true
}

// hubHolds reports whether the hub's child caches hold a child of cr.
func (t *Targets) hubHolds(cr *unstructured.Unstructured) bool {
	for _, k := range t.d.Kinds {
		if k.Hub == nil {
			continue
		}
		if objs, err := k.Hub.ByIndex(childwrite.OwnerIndex, string(cr.GetUID())); err == nil && len(objs) > 0 {
			return true
		}
	}
	return false
}

// Turn names the target of key's CR for the work queue's turns (crdqueue.New): the one its
// last pass went to, else the one its cached object renders; the hub's (zero) for a target
// that does not render or a CRD without targets. It runs at each add, before the queue's
// locks are taken (crdqueue.Queue's lock order), never under them.
func (t *Targets) Turn(key string) target.Ref {
	if t.off() {
		return target.Ref{}
	}
	ref, ok := t.d.Set.TargetOf(key)
	if !ok {
		cr := t.d.Cached(key)
		if cr == nil {
			return target.Ref{}
		}
		ref, _ = target.Resolve(t.d.Set.Template, cr.Object) // an error is the hub's turn: the pass says it
	}
	return ref
}

// requeue queues the CRs whose last pass went to ref (its reachability changed).
func (t *Targets) requeue(ref target.Ref) {
	if t.off() {
		return
	}
	for _, key := range t.d.Set.KeysOf(ref) {
		t.d.Requeue(key)
	}
}

// Forget drops the targets of the CRs gone says are gone.
func (t *Targets) Forget(gone func(key string, uid types.UID) bool) {
	if t.off() {
		return
	}
	t.release(t.d.Set.Forget(gone))
	for _, ref := range t.oneOffs.forget(gone) {
		if !t.d.Uses.Holds(ref) {
			t.d.Pool.Forget(ref)
		}
	}
}

// Close stops the spokes' child informers.
func (t *Targets) Close() {
	if t.off() {
		return
	}
	t.d.Set.CloseAll()
}

// release stops the spokes of refs, which none of the controller's CRs use any more, and
// tells the pool to forget a target no controller holds.
func (t *Targets) release(refs []target.Ref) {
	for _, ref := range t.d.Set.Release(refs) {
		t.d.Pool.Forget(ref)
	}
}

// Probe probes the targets of pool with a client (spokes.Probe) and queues the CRs of each
// target whose reachability changed, in every controller of all. The returned func stops it
// and waits; without a pool (no CRD names a target) there is nothing to probe.
func Probe(ctx context.Context, pool *target.Pool, log *slog.Logger, all ...*Targets) func() {
	if pool == nil {
		return func() {}
	}
	return spokes.Probe(ctx, pool, func(ref target.Ref) {
		for _, t := range all {
			t.requeue(ref)
		}
	}, log)
}
