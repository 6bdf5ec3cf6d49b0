package shardrun_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/testkit"
)

// dropValue as spec.v makes dropEndpoint return no child for the widget.
const dropValue = "drop"

// dropEndpoint is newEndpoint, but a widget whose spec.v is dropValue gets no ConfigMap.
func dropEndpoint(t *testing.T) *reconcilertest.Endpoint {
	return reconcilertest.NewEndpoint(t, func(c reconcilertest.Call) reconcilertest.Response {
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		md, _ := obj["metadata"].(map[string]any)
		resources := []any{}
		if spec["v"] != dropValue {
			resources = append(resources, map[string]any{"type": "configmap",
				"fields": map[string]any{"name": md["name"], "data": map[string]any{"v": spec["v"]}}})
		}
		return reconcilertest.JSON(map[string]any{"result": "ok", "status": map[string]any{"seen": spec["v"]}, "resources": resources})
	}, reconcilertest.EndpointOptions{})
}

// Children a single leader wrote carry no slot label. Once sharding is on, the replica that
// takes their owners' buckets gives it to them, so its child cache sees them: a child the
// owner's reconciler no longer returns at the ring's first pass is pruned.
func TestChildrenWrittenBeforeShardingAreSeenByTheRing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ep = dropEndpoint(t)
	f.remoteOption("prune: true")
	const b, n = 4, 8
	want, uids := map[string]string{}, map[string]types.UID{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()], uids[cr.GetName()] = "1", cr.GetUID()
	}
	solo := f.start("solo", "--leader-elect", "--endpoint", f.via("solo"))
	f.waitConverged("the single leader reconciles every widget", leaseDuration+slack, want)
	for name := range want {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the single leader's child %s: %v", name, err)
		}
		if s, ok := cm.Labels[naming.SlotLabel]; ok {
			t.Fatalf("the single leader wrote %s=%s on %s: the test needs children without it", naming.SlotLabel, s, name)
		}
	}
	if err := solo.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-solo.Exited()

	// Half the widgets no longer get a child: the ring's first pass of each drops it.
	dropped := 0
	for name := range want {
		if dropped == n/2 {
			break
		}
		f.setV(name, dropValue)
		want[name] = dropValue
		dropped++
	}
	f.sharded("s0", b, "--endpoint", f.via("s0"))
	f.waitConverged("the ring reconciles every widget", leaseDuration+slack, want)
	// A labelled child's owner passes again no sooner than ChildMinInterval (1 s) after its
	// take pass; slack for the rest.
	testkit.Eventually(t, "dropped children pruned, the others labelled with their owner's slot", 100*time.Millisecond, time.Second+slack,
		func(ctx context.Context) (bool, error) {
			for name, v := range want {
				cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, name, metav1.GetOptions{})
				switch {
				case v == dropValue && apierrors.IsNotFound(err):
				case v == dropValue && err == nil:
					return false, fmt.Errorf("ConfigMap %s, which its owner's reconciler no longer returns, is not pruned (labels %v)", name, cm.Labels)
				case err != nil:
					return false, err
				case cm.Labels[naming.SlotLabel] != naming.SlotOf(uids[name]):
					return false, fmt.Errorf("ConfigMap %s: %s %q, want %q", name, naming.SlotLabel, cm.Labels[naming.SlotLabel], naming.SlotOf(uids[name]))
				}
			}
			return true, nil
		})
}
