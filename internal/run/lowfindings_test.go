package run

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/katalog"
)

// Two CRDs' controllers handle the events of one shared child informer, in either order:
// the one that does not own the child must not consume the owner's note that the delete is
// ork's own prune, or the owner runs a pass for nothing.
func TestAnotherCRDsHandlerDoesNotConsumeThePruneMark(t *testing.T) {
	writes := newWriteBook()
	newController := func(kind string) *controller {
		return &controller{e: &Engine{gate: allMine{}, writes: writes, opts: Options{Metrics: NewMetrics()}}, ledger: newLedger(), queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()), cfg: crdConfig{crd: &katalog.CRD{Name: kind}, gvk: schema.GroupVersionKind{Group: "myorg.io", Version: "v1", Kind: kind}}}
	}
	other, owner := newController("Other"), newController("App")
	defer other.queue.ShutDown()
	defer owner.queue.ShutDown()
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	child := &unstructured.Unstructured{}
	child.SetNamespace("ns")
	child.SetName("web")
	child.SetUID("child-uid")
	child.SetResourceVersion("42")
	child.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(
		&metav1.ObjectMeta{Name: "a", UID: "cr-uid"}, owner.cfg.gvk)})
	writes.wrote(refOf(gr, child), [32]byte{1}, "cr-uid", nil, child)
	writes.pruning(refOf(gr, child), "child-uid")

	other.onChild(gr, nil, child, true) // the other CRD's handler runs first
	owner.onChild(gr, nil, child, true)
	if n := owner.queue.Len(); n != 0 {
		t.Errorf("ork's own prune queued its owner (%d keys) after another CRD's handler saw the delete first", n)
	}
}

// A child write's "changed" is judged against what was there before the write, not against
// a cache that lags behind ork's own last write: an apply that returns the very version
// ork's last write returned changed nothing.
func TestApplyOntoALaggingCacheIsNoChange(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cached, lastWritten, got string
		want                     bool
	}{
		{"the apply changed the object", "5", "5", "9", true},
		{"cache current, no-op apply", "5", "5", "5", false},
		{"cache lags behind ork's write, no-op apply", "5", "7", "7", false},
		{"cache lags, and the apply changed it", "5", "7", "9", true},
		{"nothing written before", "5", "", "9", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, out := &metav1.ObjectMeta{ResourceVersion: tc.cached}, &metav1.ObjectMeta{ResourceVersion: tc.got}
			if got := applyChanged(live, out, tc.lastWritten); got != tc.want {
				t.Errorf("applyChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
