package targetrun_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/operation"
	engine "github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// converge bounds a wait for what a pass or two does on the spoke: children written or
// deleted, Ready set. They take well under a second alone; under -race on a 2-core CI
// machine, with the package's other tests' control planes busy, several seconds. 30 s is
// the fixture's own bound (runtest.Fixture.Eventually): the slack catches only behaviour
// that never happens.
const converge = 30 * time.Second

// onSpoke waits until the spoke holds both of cr's children (want) or none of them.
func onSpoke(t *testing.T, f *runtest.Fixture, cr types.UID, want bool, within time.Duration) {
	t.Helper()
	sd := spokeDyn(t)
	f.EventuallyWithin(within, fmt.Sprintf("the CR's children on the spoke: %v", want), func() (bool, error) {
		n := 0
		for _, gvr := range []schema.GroupVersionResource{deployments, services} {
			list, err := sd.Resource(gvr).Namespace(f.NS).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, u := range list.Items {
				if u.GetAnnotations()[naming.OwnerAnnotation] == string(cr) && u.GetDeletionTimestamp() == nil {
					n++
				}
			}
		}
		if want && n == 2 || !want && n == 0 {
			return true, nil
		}
		return false, fmt.Errorf("%d children there", n)
	})
}

// spokeUIDs are the uids of cr's children on the spoke, by resource and name.
func spokeUIDs(t *testing.T, f *runtest.Fixture, cr types.UID) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, gvr := range []schema.GroupVersionResource{deployments, services} {
		list, err := spokeDyn(t).Resource(gvr).Namespace(f.NS).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range list.Items {
			if u.GetAnnotations()[naming.OwnerAnnotation] == string(cr) {
				out[gvr.Resource+"/"+u.GetName()] = u.GetUID()
			}
		}
	}
	return out
}

// childTargets is the CR's status record of the targets that may hold its children.
func childTargets(f *runtest.Fixture, name string) []string {
	raw, _, _ := unstructured.NestedStringSlice(f.GetCR(name).Object, "status", "childTargets")
	return raw
}

// A CR whose target changes leaves nothing on the cluster it left, once its children are on
// the new one; the status records where they may be, so a change made while ork was stopped
// is cleaned up too; the target-cleanup finalizer goes when no target holds any.
func TestTargetChangeLeavesNoChildrenBehind(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	putKubeconfig(t, f.NS, "spoke-again", spokeKubeconfig(t, "")) // the same cluster, another Secret
	set := targetKatalog(f, ep)
	_, stop := f.StartStoppable(set, nil)
	spokeRef := f.NS + "/spoke[kubeconfig]"

	cr := f.CreateCR("web", spec("spoke"))
	onSpoke(t, f, cr.GetUID(), true, converge)
	waitReady(f, "web", converge)
	if got := childTargets(f, "web"); !slices.Equal(got, []string{spokeRef}) {
		t.Errorf("status.childTargets = %q, want [%s]", got, spokeRef)
	}

	// To the hub: the children come there, and go from the spoke.
	f.PatchSpec("web", `{"spec":{"cluster":""}}`)
	f.Eventually("the deployment on the hub", func() (bool, error) {
		_, err := f.Get(deployments, "web")
		return err == nil, err
	})
	onSpoke(t, f, cr.GetUID(), false, converge)
	f.Eventually("the record and the finalizer gone", func() (bool, error) {
		u := f.GetCR("web")
		if len(childTargets(f, "web")) != 0 || slices.Contains(u.GetFinalizers(), naming.TargetCleanupFinalizer) {
			return false, fmt.Errorf("childTargets %q, finalizers %q", childTargets(f, "web"), u.GetFinalizers())
		}
		return true, nil
	})

	// Back to the spoke: the hub's children go.
	f.PatchSpec("web", `{"spec":{"cluster":"spoke"}}`)
	onSpoke(t, f, cr.GetUID(), true, converge)
	f.Eventually("the hub's deployment gone", func() (bool, error) {
		if _, err := f.Get(deployments, "web"); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("still there: %v", err)
		}
		return true, nil
	})

	// Another Secret of the same cluster: the children there are the new target's, and stay:
	// the very objects, not deleted and written again (their uids).
	before := spokeUIDs(t, f, cr.GetUID())
	f.PatchSpec("web", `{"spec":{"cluster":"spoke-again"}}`)
	f.Eventually("the record names the new Secret alone", func() (bool, error) {
		if got := childTargets(f, "web"); !slices.Equal(got, []string{f.NS + "/spoke-again[kubeconfig]"}) {
			return false, fmt.Errorf("childTargets %q", got)
		}
		return true, nil
	})
	// The record loses the old Secret once the sweep is over: what the sweep did is done.
	if after := spokeUIDs(t, f, cr.GetUID()); len(before) != 2 || !maps.Equal(after, before) {
		t.Errorf("the children on the spoke after the move to another Secret = %v, want the same objects %v", after, before)
	}
	onSpoke(t, f, cr.GetUID(), true, converge)

	// Moved while ork is stopped: the record tells the next start where the children are.
	stop()
	f.PatchSpec("web", `{"spec":{"cluster":""}}`)
	f.StartStoppable(set, nil)
	onSpoke(t, f, cr.GetUID(), false, converge)
	f.Eventually("the record, the finalizer and lastDecision.target gone", func() (bool, error) {
		u := f.GetCR("web")
		rec, _, _ := prov.FromStatus(u)
		if len(childTargets(f, "web")) != 0 || slices.Contains(u.GetFinalizers(), naming.TargetCleanupFinalizer) || rec.Target != "" {
			return false, fmt.Errorf("childTargets %q, finalizers %q, lastDecision.target %q", childTargets(f, "web"), u.GetFinalizers(), rec.Target)
		}
		return true, nil
	})
	if _, err := f.Get(deployments, "web"); err != nil {
		t.Errorf("the deployment on the hub: %v", err)
	}
}

// A target the CR left that does not answer keeps its children there listed, and the
// target-cleanup finalizer on: the CR, deleted meanwhile, goes only once the target answers
// again and its children there are gone.
func TestALeftTargetDownHoldsTheDeleteUntilItsChildrenGo(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	proxy, server := proxyToSpoke(t)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, server))
	f.Start(targetKatalog(f, ep), nil)
	spokeRef := f.NS + "/spoke[kubeconfig]"

	cr := f.CreateCR("web", spec("spoke"))
	onSpoke(t, f, cr.GetUID(), true, converge)
	waitReady(f, "web", converge)

	proxy.Down()
	f.PatchSpec("web", `{"spec":{"cluster":""}}`)
	f.Eventually("the deployment on the hub", func() (bool, error) {
		_, err := f.Get(deployments, "web")
		return err == nil, err
	})
	waitReady(f, "web", converge) // its children are where it wants them
	if ev := f.WaitEvent("web", "Warning", engine.EventLeftTargetCleanupPending); !strings.Contains(ev.Message, spokeRef) ||
		!strings.Contains(ev.Message, "--subresource=status") {
		t.Errorf("the %s Event's message = %q, want the target and the way out", ev.Reason, ev.Message)
	}
	if got := childTargets(f, "web"); !slices.Equal(got, []string{spokeRef}) {
		t.Errorf("status.childTargets with the left target down = %q, want [%s]", got, spokeRef)
	}
	if !slices.Contains(f.GetCR("web").GetFinalizers(), naming.TargetCleanupFinalizer) {
		t.Errorf("finalizers with the left target down = %q, want %s kept", f.GetCR("web").GetFinalizers(), naming.TargetCleanupFinalizer)
	}

	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReason(f, "web", "False", "TargetUnreachable", converge)

	proxy.Up()
	// The breaker's next try (1 s doubling, a few seconds in all here); 60 s leaves slack
	// for a slow machine's extra doublings.
	f.EventuallyWithin(60*time.Second, "the CR gone once the spoke answers", func() (bool, error) {
		_, err := f.CRs().Get(t.Context(), "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	onSpoke(t, f, cr.GetUID(), false, time.Second) // gone before the CR was
}

// A stateful move: the reconciler answers pending on the new target while its operation
// there runs (docs/multicluster.md, "When the target changes"). The children on the cluster
// the CR left stay for every pending answer, and go once an answer is applied whole.
func TestAMoveKeepsTheOldChildrenWhileAnOperationIsPending(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	var moved, finished atomic.Bool
	var polls atomic.Int32
	ep := runtest.NewEndpoint(t, func(c runtest.Call) runtest.Response {
		if !moved.Load() || finished.Load() {
			return runtest.OKWithChildren(c)
		}
		if op, _, _ := unstructured.NestedMap(c.Body, "prepared", "operation"); op != nil {
			polls.Add(1)
		}
		name := c.CRName()
		return runtest.JSONResponse(map[string]any{
			"result":    "pending",
			"operation": map[string]any{"id": "move-1", "pollAfter": "1s", "message": "copying the data"},
			"resources": []any{
				map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "replicas": 2, "port": 8080}},
				map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
			},
		})
	})
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	f.Start(targetKatalog(f, ep), nil)

	cr := f.CreateCR("web", spec("spoke"))
	onSpoke(t, f, cr.GetUID(), true, converge)
	waitReady(f, "web", converge)

	moved.Store(true)
	f.PatchSpec("web", `{"spec":{"cluster":""}}`)
	// The pass that writes this condition has applied the hub's children and would have
	// swept the spoke before its status write.
	waitReason(f, "web", "False", operation.ReasonPending, converge)
	if _, err := f.Get(deployments, "web"); err != nil {
		t.Fatalf("the deployment on the hub while pending: %v", err)
	}
	onSpoke(t, f, cr.GetUID(), true, time.Second) // there already: a check, not a wait
	// A second poll arrives once the first poll's pass is over: it kept them too.
	f.Eventually("two polls of the operation", func() (bool, error) { return polls.Load() >= 2, nil })
	onSpoke(t, f, cr.GetUID(), true, time.Second)

	finished.Store(true)
	onSpoke(t, f, cr.GetUID(), false, converge)
	waitReady(f, "web", converge)
	f.Eventually("the record gone", func() (bool, error) {
		if got := childTargets(f, "web"); len(got) != 0 {
			return false, fmt.Errorf("childTargets %q", got)
		}
		return true, nil
	})
}
