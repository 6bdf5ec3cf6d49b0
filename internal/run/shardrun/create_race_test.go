package shardrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// readyReason is the status and message of a widget's Ready condition ("" without one).
func readyReason(w *unstructured.Unstructured) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			s, _ := m["status"].(string)
			r, _ := m["message"].(string)
			return s, r
		}
	}
	return "", ""
}

// The create race across replicas: every widget, in buckets held by two replicas, asks for
// the same ConfigMap. The engine's conditional create (create, and on AlreadyExists a live
// read and the ownership judgement) holds across processes: one widget owns it and is
// Ready, every other one is refused as AlreadyOwned, and no replica overwrote another's.
func TestTheCreateRaceHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ep.SetRespond(func(c reconcilertest.Call) reconcilertest.Response {
		obj, _ := c.Body["object"].(map[string]any)
		md, _ := obj["metadata"].(map[string]any)
		return reconcilertest.JSON(map[string]any{"result": "ok", "status": map[string]any{"seen": "shared"},
			"resources": []any{map[string]any{"type": "configmap", "fields": map[string]any{"name": "shared", "data": map[string]any{"by": md["name"]}}}}})
	})
	const b, n = 2, 12
	crs := f.create(n, "1")
	inBucket := map[int]int{}
	for _, cr := range crs {
		inBucket[shard.BucketOf(cr.GetUID(), b)]++
	}
	if inBucket[0] == 0 || inBucket[1] == 0 {
		t.Fatalf("widgets by bucket %v: both replicas must have some", inBucket)
	}
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.sharded("c", b, "--endpoint", f.via("c"))
	holders := f.settled(leaseDuration+slack, b, "a", "c")

	var owner string
	testkit.Eventually(t, "one owner of the ConfigMap, every other widget refused", 100*time.Millisecond, leaseDuration+slack, func(ctx context.Context) (bool, error) {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, "shared", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(cm)
		if ref == nil || cm.Data["by"] != ref.Name {
			return false, fmt.Errorf("ConfigMap shared: controller %v, data.by %q", ref, cm.Data["by"])
		}
		owner = ref.Name
		list, err := f.dyn.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, w := range list.Items {
			status, msg := readyReason(&w)
			switch {
			case w.GetName() == owner && status != "True":
				return false, fmt.Errorf("the owner %s: Ready %s %s", owner, status, msg)
			case w.GetName() != owner && (status != "False" || !strings.HasPrefix(msg, planner.ReasonAlreadyOwned+":")):
				return false, fmt.Errorf("%s: Ready %s %q, want False AlreadyOwned", w.GetName(), status, msg)
			}
		}
		return true, nil
	})
	by := map[string]bool{}
	for _, c := range f.ep.Calls() {
		by[c.Header.Get(replicaHeader)] = true
	}
	if !by["a"] || !by["c"] {
		t.Fatalf("calls by %v: both replicas should have raced (holders %v)", by, holders)
	}
}
