package run_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/runtest"
)

// 2. Intent results become owned, labelled children applied by the orkestra field manager,
// and the returned status lands on the CR with observedGeneration and Ready=True.
func TestIntentResultIsApplied(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	cr := f.CreateCR("web", map[string]any{"replicas": 2})

	got := f.WaitReady("web", "True")
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
		t.Errorf("status.phase = %q, want Ready (from the result)", phase)
	}
	if og, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); og != cr.GetGeneration() {
		t.Errorf("status.observedGeneration = %d, want %d", og, cr.GetGeneration())
	}
	if c := runtest.ReadyCondition(got); c["reason"] != "ReconcileSucceeded" {
		t.Errorf("Ready condition = %v, want reason ReconcileSucceeded", c)
	}

	dep, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
		t.Errorf("deployment replicas = %d, want 2", r)
	}
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 || cs[0].(map[string]any)["image"] != "nginx:1.27" {
		t.Errorf("deployment containers = %v, want one nginx:1.27", cs)
	}
	svc, err := f.Get(runtest.Services, "web-svc")
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(80) {
		t.Errorf("service ports = %v, want port 80", ports)
	}
	for _, child := range []*unstructured.Unstructured{dep, svc} {
		assertOwnedByOrk(t, child, cr)
	}
	f.WaitEvent("web", corev1.EventTypeNormal, "Reconciled")
}

func assertOwnedByOrk(t *testing.T, child, owner *unstructured.Unstructured) {
	t.Helper()
	// A new child is created (an Update entry), and its first apply takes it over (Apply).
	assertWrittenByOrk(t, child, owner, "")
}

// assertWrittenByOrk is assertOwnedByOrk for a given write: Apply, or Update for the
// onCreate children that ork creates once; "" for either.
func assertWrittenByOrk(t *testing.T, child, owner *unstructured.Unstructured, op metav1.ManagedFieldsOperationType) {
	t.Helper()
	ref := metav1.GetControllerOf(child)
	// The garbage collector resolves the owner by apiVersion, kind and name, and deletes the
	// child at once if that owner does not exist: each must be exact, not only the UID.
	if ref == nil || ref.UID != owner.GetUID() || ref.APIVersion != owner.GetAPIVersion() || ref.Kind != owner.GetKind() ||
		ref.Name != owner.GetName() || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("%s %s controller ownerReference = %+v, want the CR %s with controller=true", child.GetKind(), child.GetName(), ref, owner.GetUID())
	}
	if got := child.GetLabels()[naming.ManagedByLabel]; got != "orkestra" {
		t.Errorf("%s %s label %s = %q, want orkestra", child.GetKind(), child.GetName(), naming.ManagedByLabel, got)
	}
	managers := map[string]bool{}
	for _, mf := range child.GetManagedFields() {
		managers[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if op == "" && (managers["orkestra/Apply"] || managers["orkestra/Update"]) {
		return
	}
	if !managers["orkestra/"+string(op)] {
		t.Errorf("%s %s managedFields = %v, want an %s entry by orkestra", child.GetKind(), child.GetName(), managers, op)
	}
}

// 3. The full object form, and the custom intent type for a kind of another CRD.
func TestFullObjectFormAndCustomType(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.InstallCRD("Widget", "widgets")
	widgets := schema.GroupVersionResource{Group: f.Group, Version: "v1", Resource: "widgets"}
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-config"},
				"data": map[string]any{"mode": "full"}},
			map[string]any{"type": "custom", "fields": map[string]any{"apiVersion": f.Group + "/v1", "kind": "Widget",
				"name": "web-widget", "spec": map[string]any{"size": 3}}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps", f.Group + "/widgets"}}), nil)
	cr := f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")

	cm, err := f.Get(runtest.ConfigMaps, "web-config")
	if err != nil {
		t.Fatal(err)
	}
	if mode, _, _ := unstructured.NestedString(cm.Object, "data", "mode"); mode != "full" {
		t.Errorf("configmap data.mode = %q, want full", mode)
	}
	w, err := f.Get(widgets, "web-widget")
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("widget spec.size = %d, want 3", size)
	}
	assertOwnedByOrk(t, cm, cr)
	assertOwnedByOrk(t, w, cr)
}

// 4. A type outside managedResources: nothing is applied, Ready=False (ApplyFailed) names the
// entry, and a Warning Event is recorded.
func TestUndeclaredTypeAppliesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}, "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx:1.27"}},
			map[string]any{"type": "configmap", "fields": map[string]any{"name": "web-config", "data": map[string]any{"a": "b"}}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"apps/deployments"}}), nil)
	f.CreateCR("web", map[string]any{})

	got := f.WaitReady("web", "False")
	msg, _ := runtest.ReadyCondition(got)["message"].(string)
	// ApplyFailed, as docs/remote-reconciler.md and ork remote check say (the planner's verdict).
	if !strings.HasPrefix(msg, "ApplyFailed: nothing applied: resources[1]: ") {
		t.Errorf("Ready message %q, want ApplyFailed: nothing applied: resources[1]: …", msg)
	}
	for _, want := range []string{"resources[1]", "configmaps", "not declared in managedResources"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not mention %q", msg, want)
		}
	}
	if phase, found, _ := unstructured.NestedString(got.Object, "status", "phase"); found {
		t.Errorf("status.phase = %q written although nothing was applied", phase)
	}
	f.MustNotExist(runtest.Deployments, "web")
	f.MustNotExist(runtest.ConfigMaps, "web-config")
	ev := f.WaitEvent("web", corev1.EventTypeWarning, "ReconcileError")
	if !strings.Contains(ev.Message, "managedResources") {
		t.Errorf("Warning event message %q does not say what to declare", ev.Message)
	}
}

// 10. Someone edits a child: the owner is re-queued and the reconciler's value restored.
func TestEditedChildIsRestored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.Eventually("deployment web", func() (bool, error) {
		_, err := f.Get(runtest.Deployments, "web")
		return err == nil, err
	})

	patch := []byte(`{"spec":{"replicas":7}}`)
	if _, err := f.Dyn.Resource(runtest.Deployments).Namespace(f.NS).Patch(t.Context(), "web", types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	// No resync is configured: a resync call here is the child's change (the protocol has no
	// "child" trigger: docs/remote-reconciler.md#when-ork-calls).
	ep.NextMatching(t, "with trigger resync", func(c call) bool { return c.Trigger == "resync" })
	f.Eventually("replicas restored to 2", func() (bool, error) {
		dep, err := f.Get(runtest.Deployments, "web")
		if err != nil {
			return false, err
		}
		r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
		return r == 2, nil
	})
}

// 13. forceConflict: false never takes a field another manager owns; the conflict is
// reported in the Ready condition.
func TestForceConflictFalseReportsConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fields := map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 3}
	other, err := resources.BuildIntent("deployment", fields, resources.OptionsFor(f.NS, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Dyn.Resource(runtest.Deployments).Namespace(f.NS).Apply(t.Context(), "web", other.Obj,
		metav1.ApplyOptions{FieldManager: "someone-else", Force: true}); err != nil {
		t.Fatal(err)
	}
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "deployment", "forceConflict": false,
				"fields": map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 2}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})

	got := f.WaitReady("web", "False")
	msg, _ := runtest.ReadyCondition(got)["message"].(string)
	if !strings.Contains(msg, "conflict") || !strings.Contains(msg, "someone-else") {
		t.Errorf("Ready message %q, want a conflict naming the other manager", msg)
	}
	dep, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d, want 3: the field belongs to someone-else", r)
	}
}
