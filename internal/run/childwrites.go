package run

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/childwrite"
)

// Names ork puts on the objects it applies, as users see them (docs/naming.md).
const (
	// ManagedByLabel, ManagedByValue and OperatorLabel label every object ork applies;
	// OperatorLabel's value is Options.Name.
	ManagedByLabel = naming.ManagedByLabel
	ManagedByValue = naming.ManagedBy
	OperatorLabel  = naming.OperatorLabel
	// PruneAnnotation set to "false" on a child keeps prune from ever deleting it (a
	// PersistentVolumeClaim holding data, say).
	PruneAnnotation = naming.PruneAnnotation
	// OwnerAnnotation marks a child created outside its CR's namespace with the CR's uid: no
	// ownerReference can cross namespaces, and onDelete deletes only what its CR controls or
	// marks (docs/naming.md#on-children-the-objects-ork-applies-for-a-custom-resource). The
	// planner sets it.
	OwnerAnnotation = naming.OwnerAnnotation
)

// ownerIndex indexes children by the UID of their controller owner.
const ownerIndex = childwrite.OwnerIndex

// childWrites is where a pass's decision reaches the children: informers feed the queue,
// a pass (reconcile.go) asks the reconciler, and these writes carry out its answer. The
// rules of what to write are the planner's (internal/planner); how is childwrite's.
type childWrites interface {
	// ApplyAll plans apply and createIfMissing for cr (all or nothing) and writes them in the
	// answer's order: a conditional create for a child the cache does not know, a
	// server-side apply with a uid (and, adopting, resourceVersion) precondition otherwise,
	// skipped when the write book or the child's applied digest shows it unchanged. Each
	// child written carries the decision id in naming.DecisionAnnotation.
	ApplyAll(ctx context.Context, cr *unstructured.Unstructured, apply, createIfMissing []resources.Object, decision string) (childwrite.Report, error)
	// Prune deletes the children of cr that the answer no longer lists.
	Prune(ctx context.Context, cr *unstructured.Unstructured, rep *childwrite.Report) error
	// RemoveAll deletes the objects of a declarative onDelete block that cr controls or
	// marks.
	RemoveAll(ctx context.Context, cr *unstructured.Unstructured, objs []resources.Object) error
	// ChildStates are cr's children for the drift test without a call (skip.go): as the
	// caches show them, or as the pass of rep left them.
	ChildStates(cr *unstructured.Unstructured, rep *childwrite.Report, withVersion bool) ([]prov.ChildState, bool)
}

var _ childWrites = (*childwrite.Writer)(nil)

// childWriter is the controller's write path, built once its child caches exist: the
// engine's clients, write book and child locks, its fence, and callbacks into the ledger and
// the dry run.
func (c *controller) childWriter() *childwrite.Writer {
	caches := make([]childwrite.Cache, len(c.children))
	for i, ch := range c.children {
		caches[i] = childwrite.Cache{GVR: ch.gvr, Store: ch.informer.GetIndexer()}
	}
	d := c.childWriteDeps()
	d.Dyn, d.Meta, d.Creator, d.Book, d.Locks, d.Owned = c.e.dyn, c.e.meta, c.e.creator, c.e.writes, c.e.childLocks, c.e.owned
	d.Mapping, d.Children, d.Watched = c.e.api.Mapping, caches, c.e.opts.WatchNamespaces
	d.Record, d.KindFor = c.e.opts.DecisionLog != nil, c.e.api.KindFor
	return childwrite.New(d)
}

// childWriteDeps is what the hub's writer and the targets' (run/targetpass) share: the fence,
// the CRD's names and flags, the callbacks into the ledger and the dry run, metrics, log.
func (c *controller) childWriteDeps() childwrite.Deps {
	return childwrite.Deps{
		MayWrite: c.e.fence.mayWrite, NotLeader: errNotLeader, Managed: c.cfg.managed,
		CRD: c.cfg.crd.Name, Operator: c.e.opts.Name,
		ForceConflict: c.cfg.crd.OperatorBox.Reconcile.ForceConflict, ShardSlots: c.e.ring != nil,
		ChildrenPayload: c.cfg.childrenPayload, DryRun: c.e.dry != nil, Note: c.note,
		Removed: c.ledger.Removed, MarkRemoved: c.ledger.MarkRemoved,
		ApplyTotal: c.e.opts.Metrics.ApplyTotal, LockWait: c.e.opts.Metrics.ChildLockWait, Log: c.cfg.log,
	}
}
