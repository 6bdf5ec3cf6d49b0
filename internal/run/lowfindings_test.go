package run

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/keyledger"
)

// Two CRDs' controllers handle the events of one shared child informer, in either order:
// the one that does not own the child must not consume the owner's note that the delete is
// ork's own prune, or the owner runs a pass for nothing.
func TestAnotherCRDsHandlerDoesNotConsumeThePruneMark(t *testing.T) {
	writes := childwrite.NewBook()
	newController := func(kind string) *controller {
		return &controller{e: (&Engine{writes: writes, opts: Options{Metrics: NewMetrics()}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}, cfg: crdConfig{crd: &katalog.CRD{Name: kind}, gvk: schema.GroupVersionKind{Group: "myorg.io", Version: "v1", Kind: kind}}}
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
	writes.Wrote(childwrite.RefOf(gr, child), [32]byte{1}, "cr-uid", nil, child)
	writes.Pruning(childwrite.RefOf(gr, child), "child-uid")

	other.onChild(gr, nil, child, true) // the other CRD's handler runs first
	owner.onChild(gr, nil, child, true)
	if n := owner.queue.Len(); n != 0 {
		t.Errorf("ork's own prune queued its owner (%d keys) after another CRD's handler saw the delete first", n)
	}
}
