package targetrun_test

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/target"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// targetKatalog is the fixture's Katalog with the target named by spec.cluster: a CR whose
// cluster is "" stays on the hub.
func targetKatalog(f *runtest.Fixture, ep *runtest.Endpoint) *katalog.Set {
	return f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: `            target:
              kubeconfigSecretRef: {name: "{{ .spec.cluster }}", key: kubeconfig}
`})
}

// spec is a CR's spec with the fields the fixture's Katalog renders, on cluster.
func spec(cluster string) map[string]any {
	return map[string]any{"replicas": 1, "logLevel": "info", "cluster": cluster}
}

func spokeDyn(t *testing.T) dynamic.Interface {
	d, err := dynamic.NewForConfig(spoke.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitReason waits until the CR's Ready condition has status and reason, at most within.
func waitReason(f *runtest.Fixture, name, status, reason string, within time.Duration) {
	f.T.Helper()
	f.EventuallyWithin(within, fmt.Sprintf("%s Ready=%s %s", name, status, reason), func() (bool, error) {
		c := runtest.ReadyCondition(f.GetCR(name))
		if c != nil && c["status"] == status && c["reason"] == reason {
			return true, nil
		}
		return false, fmt.Errorf("Ready: %v", c)
	})
}

// waitReady waits until the CR's Ready condition is True, at most within.
func waitReady(f *runtest.Fixture, name string, within time.Duration) {
	f.T.Helper()
	f.EventuallyWithin(within, name+" Ready", func() (bool, error) {
		c := runtest.ReadyCondition(f.GetCR(name))
		if c != nil && c["status"] == "True" {
			return true, nil
		}
		return false, fmt.Errorf("Ready: %v", c)
	})
}

func TestTargetChildrenLiveOnTheSpoke(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	f.Start(targetKatalog(f, ep), nil)
	sd := spokeDyn(t)

	cr := f.CreateCR("web", spec("spoke"))
	start := time.Now()
	f.EventuallyWithin(5*time.Second, "children on the spoke", func() (bool, error) {
		_, err1 := sd.Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
		_, err2 := sd.Resource(services).Namespace(f.NS).Get(t.Context(), "web-svc", metav1.GetOptions{})
		if err1 != nil || err2 != nil {
			return false, fmt.Errorf("deployment: %v, service: %v", err1, err2)
		}
		return true, nil
	})
	t.Logf("children on the spoke after %s", time.Since(start).Round(time.Millisecond))
	for _, gvr := range []schema.GroupVersionResource{deployments, services} {
		name := "web"
		if gvr == services {
			name = "web-svc"
		}
		u, err := sd.Resource(gvr).Namespace(f.NS).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if refs := u.GetOwnerReferences(); len(refs) != 0 {
			t.Errorf("%s/%s on the spoke has ownerReferences %v", gvr.Resource, name, refs)
		}
		l := u.GetLabels()
		if l[naming.ManagedByLabel] != naming.ManagedBy || l[naming.OperatorLabel] != naming.DefaultOperator {
			t.Errorf("%s/%s labels = %v", gvr.Resource, name, l)
		}
		if got := u.GetAnnotations()[naming.OwnerAnnotation]; got != string(cr.GetUID()) {
			t.Errorf("%s/%s owner annotation = %q, want the CR's uid %s", gvr.Resource, name, got, cr.GetUID())
		}
		f.MustNotExist(gvr, name) // nothing on the hub
	}
	waitReady(f, "web", 10*time.Second)
	if fs := f.GetCR("web").GetFinalizers(); len(fs) != 1 || fs[0] != naming.TargetCleanupFinalizer {
		t.Errorf("finalizers = %v, want [%s]", fs, naming.TargetCleanupFinalizer)
	}

	// Watched, not polled: a child deleted on the spoke comes back at once.
	old, err := sd.Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.Resource(deployments).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.EventuallyWithin(2*time.Second, "the deployment restored on the spoke", func() (bool, error) {
		u, err := sd.Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return u.GetUID() != old.GetUID(), nil
	})

	// Deleted: the children go from the spoke before the CR goes from the hub.
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the CR gone", func() (bool, error) {
		_, err := f.CRs().Get(t.Context(), "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		// While the CR is there, its children may be; once it is gone they must be.
		return false, err
	})
	for _, gvr := range []schema.GroupVersionResource{deployments, services} {
		list, err := sd.Resource(gvr).Namespace(f.NS).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range list.Items {
			if u.GetAnnotations()[naming.OwnerAnnotation] == string(cr.GetUID()) {
				t.Errorf("%s/%s still on the spoke after its CR is gone (deleting: %v)", gvr.Resource, u.GetName(), u.GetDeletionTimestamp() != nil)
			}
		}
	}
}

func TestTargetNamespaceMissingOnTheSpoke(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	f.Start(targetKatalog(f, ep), nil)

	f.CreateCR("web", spec("spoke"))
	waitReason(f, "web", "False", target.ReasonTargetNamespaceMissing, 10*time.Second)
	// Created by someone else, it converges: ork creates no namespace, but tries again.
	spokeNamespace(t, f.NS)
	f.EventuallyWithin(20*time.Second, "the deployment on the spoke", func() (bool, error) {
		_, err := spokeDyn(t).Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
		return err == nil, err
	})
}

func TestTargetUnreachableHoldsOnlyItsOwnCRs(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	proxy, server := proxyToSpoke(t)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, server))
	f.Start(targetKatalog(f, ep), nil)

	f.CreateCR("far", spec("spoke"))
	waitReady(f, "far", 10*time.Second)

	proxy.Down()
	start := time.Now()
	// A hundred hub-local CRs converge meanwhile: no worker is held by the dead spoke's CR
	// (under -race on 2 cores they are all ready about 9 s after the cut; the bound is 30 s).
	const local = 100
	for i := range local {
		f.CreateCR(fmt.Sprintf("near-%02d", i), spec(""))
	}
	waitReason(f, "far", "False", target.ReasonTargetUnreachable, 30*time.Second)
	t.Logf("TargetUnreachable after %s", time.Since(start).Round(time.Millisecond))
	f.EventuallyWithin(30*time.Second, "hub-local CRs converged", func() (bool, error) {
		list, err := f.CRs().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if c := runtest.ReadyCondition(&list.Items[i]); c != nil && c["status"] == "True" && list.Items[i].GetName() != "far" {
				ready++
			}
		}
		if ready == local {
			t.Logf("%d hub-local CRs ready %s after the spoke stopped", local, time.Since(start).Round(time.Millisecond))
			return true, nil
		}
		return false, fmt.Errorf("%d of %d ready", ready, local)
	})
	for i := range local {
		if _, err := f.Get(deployments, fmt.Sprintf("near-%02d", i)); err != nil {
			t.Errorf("near-%02d's deployment on the hub: %v", i, err)
		}
	}
	// It stays so across the breaker's tries and the probes (every 10 s): a try whose
	// writes are all unchanged sends nothing, and must not pass for the spoke's answer.
	time.Sleep(time.Until(start.Add(25 * time.Second)))
	if c := runtest.ReadyCondition(f.GetCR("far")); c == nil || c["reason"] != target.ReasonTargetUnreachable {
		t.Errorf("far's Ready while the spoke is still down = %v, want reason %s", c, target.ReasonTargetUnreachable)
	}
	for _, e := range f.Events("far") {
		if e.Reason == "Reconciled" && e.LastTimestamp.After(start.Add(time.Second)) {
			t.Errorf("far reconciled while the spoke was down: %s %s", e.Reason, e.Message)
		}
	}

	proxy.Up()
	waitReady(f, "far", 30*time.Second)
	list, err := spokeDyn(t).Resource(deployments).Namespace(f.NS).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "far" {
		var names []string
		for _, u := range list.Items {
			names = append(names, u.GetName())
		}
		t.Errorf("deployments on the spoke = %v, want [far]", names)
	}
}

// With payload.children on, the reconciler sees a CR's children as they are on its target,
// each tagged with it, and prepared.target names it.
func TestTargetChildrenInThePayload(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(),
		Payload: "              children:\n                enabled: true\n",
		Extra: `            target:
              kubeconfigSecretRef: {name: "{{ .spec.cluster }}", key: kubeconfig}
`}), nil)
	f.CreateCR("web", spec("spoke"))
	waitReady(f, "web", 10*time.Second)
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	c := ep.NextMatching(t, "a call that sees the deployment on the spoke", func(c runtest.Call) bool {
		_, found, _ := unstructured.NestedMap(c.Body, "prepared", "children", "deployment", "web")
		return found
	})
	if ns, _, _ := unstructured.NestedString(c.Body, "prepared", "children", "deployment", "web", "metadata", "namespace"); ns != f.NS {
		t.Errorf("the deployment's namespace in prepared.children = %q, want %q", ns, f.NS)
	}
	if tgt, _, _ := unstructured.NestedString(c.Body, "prepared", "target"); tgt != "spoke" {
		t.Errorf("prepared.target = %q, want spoke", tgt)
	}
	if tag, _, _ := unstructured.NestedString(c.Body, "prepared", "children", "deployment", "web", "metadata", "annotations", naming.TargetAnnotation); tag != "spoke" {
		t.Errorf("the deployment's %s in prepared.children = %q, want spoke", naming.TargetAnnotation, tag)
	}
}
