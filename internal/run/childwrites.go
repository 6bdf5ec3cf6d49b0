package run

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/resources"
)

// childWrites is where a pass's decision reaches the children: informers feed the queue,
// a pass (reconcile.go) asks the reconciler, and these writes carry out its answer. The
// rules of what to write are the planner's (internal/planner); how is here.
type childWrites interface {
	// applyAll plans the children of d for cr (all or nothing) and writes them in the
	// answer's order: a conditional create for a child the cache does not know, a
	// server-side apply with a uid (and, adopting, resourceVersion) precondition otherwise,
	// skipped when the write book or the child's applied digest shows it unchanged (apply.go).
	applyAll(ctx context.Context, cr *unstructured.Unstructured, d decision) (applyReport, error)
	// prune deletes the children of cr that the answer no longer lists (prune.go).
	prune(ctx context.Context, cr *unstructured.Unstructured, rep *applyReport) error
	// removeAll deletes the objects of a declarative onDelete block that cr controls or
	// marks (ondelete.go).
	removeAll(ctx context.Context, cr *unstructured.Unstructured, objs []resources.Object) error
}

// childWriter writes one controller's children through the engine's clients, write book
// and child locks, judged against the controller's child caches.
type childWriter struct{ *controller }

var _ childWrites = childWriter{}
