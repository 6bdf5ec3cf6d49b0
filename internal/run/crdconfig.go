package run

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
)

// crdConfig is what a controller's CRD entry and the cluster fix when the engine starts;
// nothing changes it after newController.
type crdConfig struct {
	crd *katalog.CRD
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
	// managed is the set of group/resources the reconciler may return.
	managed map[schema.GroupResource]bool
	workers int
	// childrenPayload is true when the reconciler sees the children (payload.children):
	// then a child's status change is news to it.
	childrenPayload bool
	// hasStatus is false for a CRD without the status subresource: ork writes no status.
	hasStatus bool
	// operationInStatus: the CRD's status schema keeps status.operation, where a held
	// operation is persisted (else the annotation: operationPlace).
	operationInStatus bool
	// finalize is reconcile.remote.finalize; finalizeTimeout its bound.
	finalize        bool
	finalizeTimeout time.Duration
	// passTimeout bounds one pass: the call's timeout plus liveness.PassWriteGrace for the
	// reads and writes around it.
	passTimeout time.Duration
	// resync is reconcile.resync, 0 for none.
	resync time.Duration
	// skipMaxAge is reconcile.remote.skipUnchanged.maxAge, 0 when it is off; skipConfig is
	// the digest of the rest of reconcile.remote, recorded with the children (skip.go).
	skipMaxAge time.Duration
	skipConfig string
	log        *slog.Logger
	// targetTypes are the managed types, without a hub informer, of a CRD whose every child
	// is on a target (targetpass.Fixed); the controller's children are none then.
	targetTypes []child
}
