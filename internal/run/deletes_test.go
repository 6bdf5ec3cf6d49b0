package run

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/run/keyledger"
)

func incarnation(uid, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "t.ork.test/v1", "kind": "App"}}
	u.SetNamespace("ns")
	u.SetName("a")
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	return u
}

// A delete and a re-create that ork's watch missed (an outage, then a relist) arrive as one
// update whose uid changed: the old object's delete is still delivered, before the new one.
func TestAnUpdateThatChangesTheUIDDeliversTheOldDelete(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	c := &controller{e: (&Engine{opts: Options{Metrics: NewMetrics()}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), queue: workQueue{TypedRateLimitingInterface: q}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}}}
	c.onUpdate(incarnation("u1", "1"), incarnation("u2", "5"))
	got, tomb, ok := c.ledger.Begin("ns/a", time.Now())
	if !ok || got != TriggerDelete || tomb == nil || tomb.GetUID() != "u1" {
		t.Fatalf("after an update from u1 to u2: %s of %v, want the delete of u1", got, tomb)
	}
	if q.Len() != 1 {
		t.Errorf("queue holds %d keys, want the key once", q.Len())
	}
}
