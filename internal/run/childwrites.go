package run

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/runplan"
)

// childWrites is where a pass's decision reaches the children: informers feed the queue,
// a pass (reconcile.go) asks the reconciler, and these writes carry out its answer. The
// rules of what to write are the planner's (internal/planner); how is here.
type childWrites interface {
	// applyAll plans apply and createIfMissing for cr (all or nothing) and writes them in the
	// answer's order: a conditional create for a child the cache does not know, a
	// server-side apply with a uid (and, adopting, resourceVersion) precondition otherwise,
	// skipped when the write book or the child's applied digest shows it unchanged (apply.go).
	applyAll(ctx context.Context, cr *unstructured.Unstructured, apply, createIfMissing []resources.Object) (applyReport, error)
	// prune deletes the children of cr that the answer no longer lists (prune.go).
	prune(ctx context.Context, cr *unstructured.Unstructured, rep *applyReport) error
	// removeAll deletes the objects of a declarative onDelete block that cr controls or
	// marks (ondelete.go).
	removeAll(ctx context.Context, cr *unstructured.Unstructured, objs []resources.Object) error
}

// childStore is a child informer's cache, as the writes read it.
type childStore interface {
	GetByKey(key string) (any, bool, error)
	ByIndex(indexName, indexedValue string) ([]any, error)
}

// childCache is the cache of one child type the controller watches.
type childCache struct {
	gvr   schema.GroupVersionResource
	store childStore
}

// fieldOwnership tells whether ork's field manager still owns every field of obj
// (ownedfields.Checker).
type fieldOwnership interface {
	Owns(ctx context.Context, obj *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) (bool, error)
}

// childWriter writes one controller's children. It holds what the writes need and nothing of
// the controller: the engine's clients, its write book and child locks (shared by every CRD:
// two CRDs may name the same child), the fence, the child caches, and callbacks into the
// ledger and the dry run.
type childWriter struct {
	dyn     dynamic.Interface
	meta    metadata.Interface
	creator objectCreator
	book    *writeBook
	locks   *childLocks
	owned   fieldOwnership
	// mayWrite is the fence, asked before every write for the CR of key and uid.
	mayWrite func(key string, uid types.UID) error
	// mapping resolves a kind by the cluster's discovery.
	mapping  func(schema.GroupVersionKind) (*meta.RESTMapping, error)
	children []childCache
	// managed are the types the CRD declares (managedResources).
	managed         map[schema.GroupResource]bool
	crd, operator   string
	watched         []string
	forceConflict   *bool
	shardSlots      bool
	childrenPayload bool
	// dry: every write is a server-side dry run, and note hears what it would change.
	dry  bool
	note func(cr metav1.Object, ch runplan.Change)
	// removed and markRemoved are the ledger's memo of a CR whose onDelete block ran.
	removed     func(key string, uid types.UID) bool
	markRemoved func(key string, uid types.UID)
	applyTotal  *prometheus.CounterVec
	lockWait    *prometheus.HistogramVec
	log         *slog.Logger
}

var _ childWrites = childWriter{}

// childWriter is the controller's write path, built once its child caches exist.
func (c *controller) childWriter() childWriter {
	caches := make([]childCache, len(c.children))
	for i, ch := range c.children {
		caches[i] = childCache{gvr: ch.gvr, store: ch.informer.GetIndexer()}
	}
	return childWriter{
		dyn: c.e.dyn, meta: c.e.meta, creator: c.e.creator, book: c.e.writes, locks: c.e.childLocks, owned: c.e.owned,
		mayWrite: c.e.fence.mayWrite, mapping: c.e.api.mapping, children: caches, managed: c.cfg.managed,
		crd: c.cfg.crd.Name, operator: c.e.opts.Name, watched: c.e.opts.WatchNamespaces,
		forceConflict: c.cfg.crd.OperatorBox.Reconcile.ForceConflict, shardSlots: c.e.shards != nil,
		childrenPayload: c.cfg.childrenPayload, dry: c.e.dry != nil, note: c.note,
		removed: c.ledger.removed, markRemoved: c.ledger.markRemoved,
		applyTotal: c.e.opts.Metrics.ApplyTotal, lockWait: c.e.opts.Metrics.ChildLockWait, log: c.cfg.log,
	}
}

// dryOptions are the DryRun values of a write: all stages, or none outside a dry run.
func (c childWriter) dryOptions() []string {
	if !c.dry {
		return nil
	}
	return []string{metav1.DryRunAll}
}
