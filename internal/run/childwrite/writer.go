package childwrite

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

	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/runplan"
)

// Store is a child informer's cache, as the writes read it.
type Store interface {
	GetByKey(key string) (any, bool, error)
	ByIndex(indexName, indexedValue string) ([]any, error)
}

// Cache is the cache of one child type the controller watches, indexed by OwnerIndex.
type Cache struct {
	GVR   schema.GroupVersionResource
	Store Store
}

// OwnerIndex indexes a child cache by the uid of each child's controller owner.
const OwnerIndex = "ork-owner-uid"

// FieldOwnership tells whether ork's field manager still owns every field of obj
// (ownedfields.Checker).
type FieldOwnership interface {
	Owns(ctx context.Context, obj *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) (bool, error)
}

// Deps is what one CRD's child writes need, and all they know of the engine: its clients,
// its write book and child locks (shared by every CRD: two CRDs may name the same child),
// the fence, the CRD's child caches, and callbacks into the ledger and the dry run.
type Deps struct {
	Dyn     dynamic.Interface
	Meta    metadata.Interface
	Creator Creator
	Book    *Book
	Locks   *Locks
	Owned   FieldOwnership
	// MayWrite is the fence, asked before every write for the CR of key and uid.
	MayWrite func(key string, uid types.UID) error
	// NotLeader is the error the fence and the guarded clients refuse a write with: passed
	// on as it is, since it stops the replica rather than fails the write.
	NotLeader error
	// Mapping resolves a kind by the cluster's discovery.
	Mapping  func(schema.GroupVersionKind) (*meta.RESTMapping, error)
	Children []Cache
	// Managed are the types the CRD declares (managedResources).
	Managed map[schema.GroupResource]bool
	// CRD names the CRD in metrics; Operator is the operator's name (its label's value).
	CRD, Operator   string
	Watched         []string
	ForceConflict   *bool
	ShardSlots      bool
	ChildrenPayload bool
	// Record is the decision log being on: each write reads the child's whole object before
	// and answers with it after (ork reads children as metadata only otherwise), and the
	// Report lists each child's account (Report.Children). KindFor names a pruned child's
	// kind in it; nil: its resource.
	Record  bool
	KindFor func(schema.GroupVersionResource) (schema.GroupVersionKind, error)
	// Remote: the children are in another cluster than the CR (a target, whose clients and
	// caches these are): no ownerReference, naming.OwnerAnnotation says whose each is, and the
	// caches are indexed by it (OwnerIndex all the same).
	Remote bool
	// DryRun makes every write a server-side dry run that is remembered nowhere (New picks
	// the effects once); Note hears what it would change.
	DryRun bool
	Note   func(cr metav1.Object, ch runplan.Change)
	// Removed and MarkRemoved are the ledger's memo of a CR whose onDelete block ran.
	Removed     func(key string, uid types.UID) bool
	MarkRemoved func(key string, uid types.UID)
	// ApplyTotal counts writes by CRD, kind and result; LockWait times child lock waits by CRD.
	ApplyTotal *prometheus.CounterVec
	LockWait   *prometheus.HistogramVec
	Log        *slog.Logger
}

// Writer writes one CRD's children.
type Writer struct {
	Deps
	// fx are the effects of its writes in the run's mode (DryRun), chosen once by New.
	fx effects
}

// New is the child writer of d.
func New(d Deps) *Writer {
	w := &Writer{Deps: d}
	w.fx = newEffects(w)
	return w
}

// controls reports whether cr owns child: its controller reference, or in a target its
// owner annotation.
func (w *Writer) controls(cr, child metav1.Object) bool {
	if w.Remote {
		return planner.MarkedBy(cr, child)
	}
	return planner.ControlledBy(cr, child)
}

// judge is the ownership decision on live (planner.Judge), which in a target also reads
// the owner annotation.
func (w *Writer) judge(cr *unstructured.Unstructured, live metav1.Object, resource string) *planner.Failure {
	if w.Remote {
		return planner.JudgeMarked(cr, live, resource, w.Operator)
	}
	return planner.Judge(cr, live, resource, w.Operator)
}
