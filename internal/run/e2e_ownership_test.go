package run_test

import (
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/runtest"
)

// sharedChild answers every CR with a Deployment named "shared", its image naming the CR.
func sharedChild(c call) response {
	return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
		map[string]any{"type": "deployment", "fields": map[string]any{"name": "shared", "image": "img-" + c.CRName()}},
	}})
}

func (f *fixture) controllerOf(gvr schema.GroupVersionResource, name string) (*metav1.OwnerReference, *unstructured.Unstructured) {
	f.T.Helper()
	u, err := f.Get(gvr, name)
	if err != nil {
		f.T.Fatal(err)
	}
	return metav1.GetControllerOf(u), u
}

func image(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	s, _ := cs[0].(map[string]any)["image"].(string)
	return s
}

// 10.4 A child another CR controls is never taken over: the second CR fails with
// AlreadyOwned naming the owner, and nothing of its result is applied.
func TestChildOfAnotherCRIsNotTakenOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, sharedChild)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	a := f.CreateCR("a", map[string]any{})
	f.WaitReady("a", "True")
	f.CreateCR("b", map[string]any{})
	got := f.WaitReady("b", "False")
	msg, _ := runtest.ReadyCondition(got)["message"].(string)
	if !strings.HasPrefix(msg, "AlreadyOwned") || !strings.Contains(msg, "App a") {
		t.Errorf("Ready message of b = %q, want AlreadyOwned naming App a", msg)
	}
	ref, dep := f.controllerOf(runtest.Deployments, "shared")
	if ref == nil || ref.UID != a.GetUID() {
		t.Errorf("deployment shared is controlled by %+v, want a (%s)", ref, a.GetUID())
	}
	if img := image(dep); img != "img-a" {
		t.Errorf("deployment shared has image %q, want img-a: b's result was applied", img)
	}
	f.WaitEvent("b", corev1.EventTypeWarning, "ReconcileError")
}

// 10.4 Two CRs creating the same child at the same moment cannot both win: two caches that
// both say "missing" are not trusted; the writes of one child are serialised across ork's
// workers and the second decides on what the first wrote (ork's write book, else a read).
func TestTwoCRsCreatingTheSameChildAtOnceOneWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	arrived := map[string]bool{}
	both := make(chan struct{})
	ep := runtest.NewEndpoint(t, func(c call) response {
		mu.Lock()
		arrived[c.CRName()] = true
		if len(arrived) == 2 {
			select {
			case <-both:
			default:
				close(both)
			}
		}
		mu.Unlock()
		select { // hold each first call until both are in flight (workers: 2)
		case <-both:
		case <-c.Ctx.Done():
		}
		return sharedChild(c)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	crs := map[string]*unstructured.Unstructured{"a": f.CreateCR("a", map[string]any{}), "b": f.CreateCR("b", map[string]any{})}
	var winners, losers []string
	for name := range crs {
		f.Eventually("a Ready condition on "+name, func() (bool, error) { return runtest.ReadyCondition(f.GetCR(name)) != nil, nil })
		c := runtest.ReadyCondition(f.GetCR(name))
		if c["status"] == "True" {
			winners = append(winners, name)
		} else if msg, _ := c["message"].(string); strings.HasPrefix(msg, "AlreadyOwned") {
			losers = append(losers, name)
		}
	}
	if len(winners) != 1 || len(losers) != 1 {
		t.Fatalf("winners %v, AlreadyOwned %v: want exactly one of each", winners, losers)
	}
	ref, dep := f.controllerOf(runtest.Deployments, "shared")
	if ref == nil || ref.UID != crs[winners[0]].GetUID() {
		t.Errorf("deployment shared is controlled by %+v, want the winner %s", ref, winners[0])
	}
	if img := image(dep); img != "img-"+winners[0] {
		t.Errorf("deployment shared has image %q, want the winner's img-%s", img, winners[0])
	}
}

// 10.4 A child whose controller is an earlier incarnation of the same CR (deleted while
// the garbage collector was not running) is adopted, and the stale reference dropped.
func TestChildOfAnEarlierIncarnationIsAdopted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "the delete", func(c call) bool { return c.Trigger == "delete" })
	again := f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	_, dep := f.controllerOf(runtest.Deployments, "web")
	refs := dep.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != again.GetUID() {
		t.Errorf("ownerReferences = %+v, want only the new incarnation %s", refs, again.GetUID())
	}
}

// 10.4 ownerReferences the reconciler sets itself (not controller) are kept beside ork's.
func TestReconcilerOwnerReferencesAreKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	anchor, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-config",
				"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "anchor", "uid": string(anchor.UID)}}},
				"data": map[string]any{"k": "v"}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}), nil)
	cr := f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	cm, err := f.Get(runtest.ConfigMaps, "web-config")
	if err != nil {
		t.Fatal(err)
	}
	uids := map[types.UID]bool{}
	for _, r := range cm.GetOwnerReferences() {
		uids[r.UID] = true
	}
	if !uids[anchor.UID] || !uids[cr.GetUID()] || len(uids) != 2 {
		t.Errorf("ownerReferences = %+v, want the reconciler's anchor and ork's controller reference", cm.GetOwnerReferences())
	}
}

// 10.7 A cluster-scoped CR owns the namespaced children it creates: they carry its
// controller reference (garbage collection), their changes re-queue it, and they are in
// prepared.children.
func TestClusterScopedCROwnsItsNamespacedChildren(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{Cluster: true})
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "configmap", "fields": map[string]any{"name": c.CRName() + "-config", "namespace": f.NS,
				"data": map[string]any{"k": "v"}}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"},
		Payload: "              children:\n                enabled: true\n"}), nil)
	cr := f.CreateCR("site", map[string]any{})
	f.WaitReady("site", "True")
	cm, err := f.Get(runtest.ConfigMaps, "site-config")
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != cr.GetUID() {
		t.Fatalf("configmap site-config controller = %+v, want the cluster-scoped CR %s", ref, cr.GetUID())
	}
	if _, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Patch(t.Context(), "site-config", types.MergePatchType,
		[]byte(`{"data":{"k":"edited"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	c := ep.NextMatching(t, "after the child's edit", func(c call) bool { return c.Trigger == "resync" })
	if _, found, _ := unstructured.NestedMap(c.Body, "prepared", "children", "configmap", "site-config"); !found {
		t.Errorf("prepared.children = %v, want configmap site-config", c.Body["prepared"])
	}
}
