package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

const pruneOn = "            prune: true\n"

var managedWithConfigMaps = []string{"apps/deployments", "/services", "/configmaps"}

// configMapEntry is a configmap intent entry; annotations may be nil.
func configMapEntry(name string, annotations map[string]any) map[string]any {
	fields := map[string]any{"name": name, "data": map[string]any{"k": "v"}}
	if annotations != nil {
		fields["annotations"] = annotations
	}
	return map[string]any{"type": "configmap", "fields": fields}
}

// phase is the CR's spec.phase in a request (0 when unset).
func phase(c call) int64 {
	p, _, _ := unstructured.NestedFieldNoCopy(c.Body, "object", "spec", "phase")
	n, _ := p.(float64) // the test decodes the request with encoding/json
	return int64(n)
}

// createConfigMap creates a ConfigMap as someone other than ork would.
func (f *fixture) createConfigMap(name string, labels map[string]string, owners ...metav1.OwnerReference) {
	f.T.Helper()
	_, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Create(f.T.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
}

func (f *fixture) exists(name string) bool {
	f.T.Helper()
	_, err := f.Get(runtest.ConfigMaps, name)
	return err == nil
}

// Prune deletes exactly the child the reconciler dropped: not a look-alike without the
// ownerReference, not one without ork's label, not another CR's, not one annotated
// orkestra.orkspace.io/prune: "false". ork's own delete costs no call.
func TestPruneRemovesExactlyTheDroppedChild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.CRName() == "other" {
			return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("other-cm", nil)}})
		}
		res := []any{configMapEntry("keep", nil)}
		if phase(c) < 2 {
			res = append(res, configMapEntry("drop", nil),
				configMapEntry("pinned", map[string]any{run.PruneAnnotation: "false"}))
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": res})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Extra: pruneOn}), nil)
	web := f.CreateCR("web", map[string]any{"phase": 1})
	f.CreateCR("other", map[string]any{})
	f.WaitReady("web", "True")
	f.WaitReady("other", "True")
	for _, name := range []string{"keep", "drop", "pinned", "other-cm"} {
		f.Eventually(name+" created", func() (bool, error) { return f.exists(name), nil })
	}
	managedBy := map[string]string{run.ManagedByLabel: run.ManagedByValue}
	f.createConfigMap("lookalike", managedBy)
	f.createConfigMap("unlabelled", nil, metav1.OwnerReference{APIVersion: f.Group + "/v1", Kind: "App",
		Name: "web", UID: web.GetUID(), Controller: ptr.To(true)})
	f.waitPassesDone(ep)
	before := f.triggers("child")

	f.PatchSpec("web", `{"spec":{"phase":2}}`)
	f.Eventually("drop pruned", func() (bool, error) { return !f.exists("drop"), nil })
	// Events of one type arrive in order: once a foreign edit of keep has triggered a call,
	// the delete of drop has been handled too.
	f.waitPassesDone(ep)
	f.editChild(runtest.ConfigMaps, "keep", `{"metadata":{"labels":{"team":"a"}}}`)
	ep.NextMatching(t, "after the edit of keep", func(c call) bool { return c.CRName() == "web" && c.Trigger == "resync" })
	f.waitPassesDone(ep)

	for _, name := range []string{"keep", "pinned", "lookalike", "unlabelled", "other-cm"} {
		if !f.exists(name) {
			t.Errorf("configmap %s was deleted; only drop may be pruned", name)
		}
	}
	if got := f.triggers("child") - before; got != 1 {
		t.Errorf("%v child triggers after the prune, want 1 (the edit of keep): ork's own delete costs no call", got)
	}
	f.Eventually("a Reconciled Event that counts the pruned child", func() (bool, error) {
		for _, e := range f.Events("web") {
			if e.Reason == "Reconciled" && strings.Contains(e.Message, "1 pruned") {
				return true, nil
			}
		}
		return false, nil
	})
}

// An error result prunes nothing (even with an empty resources list), nor does a success
// without resources ("no opinion"); a present and empty list prunes every child.
func TestPruneNothingOnErrorOrAbsentResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		switch phase(c) {
		case 2:
			return runtest.JSONResponse(map[string]any{"result": "error", "error": "backend down", "resources": []any{}})
		case 3:
			return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "3"}})
		case 4:
			return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{}})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("a", nil), configMapEntry("b", nil)}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Extra: pruneOn}), nil)
	f.CreateCR("web", map[string]any{"phase": 1})
	f.WaitReady("web", "True")
	f.Eventually("a and b", func() (bool, error) { return f.exists("a") && f.exists("b"), nil })

	f.PatchSpec("web", `{"spec":{"phase":2}}`)
	f.WaitReady("web", "False")
	ep.NextMatching(t, "a retry of the error", func(c call) bool { return phase(c) == 2 && c.Trigger == "requeue" })
	f.waitPassesDone(ep)
	if !f.exists("a") || !f.exists("b") {
		t.Fatal("an error result pruned children")
	}

	f.PatchSpec("web", `{"spec":{"phase":3}}`)
	f.Eventually("phase 3 reconciled", func() (bool, error) {
		s, _, _ := unstructured.NestedString(f.GetCR("web").Object, "status", "phase")
		return s == "3", nil
	})
	f.waitPassesDone(ep)
	if !f.exists("a") || !f.exists("b") {
		t.Fatal("a result without resources pruned children")
	}

	f.PatchSpec("web", `{"spec":{"phase":4}}`)
	f.Eventually("a and b pruned by an empty list", func() (bool, error) { return !f.exists("a") && !f.exists("b"), nil })
}

// A child the reconciler dropped (pruned) and then lists again, while its deletion is held
// by a finalizer: ork does not report it applied onto the terminating object; once it is
// gone, its deletion is news (no longer ork's own prune) and it is created again.
func TestPrunedChildListedAgainIsCreatedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		rs := []any{}      // present and empty in phase 1: prune (absent would mean "no opinion")
		if phase(c) != 1 { // phase 1 drops it
			rs = append(rs, configMapEntry("web-config", nil))
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": rs})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Extra: pruneOn}), nil)
	f.CreateCR("web", map[string]any{"phase": 0})
	f.WaitReady("web", "True")
	f.Eventually("web-config", func() (bool, error) { return f.exists("web-config"), nil })
	f.editChild(runtest.ConfigMaps, "web-config", `{"metadata":{"finalizers":["test.ork/hold"]}}`)
	t.Cleanup(func() { // on failure, let the namespace go
		_, _ = f.Dyn.Resource(runtest.ConfigMaps).Namespace(f.NS).Patch(context.Background(), "web-config", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	f.PatchSpec("web", `{"spec":{"phase":1}}`)
	f.Eventually("the prune under way", func() (bool, error) {
		cm, err := f.Get(runtest.ConfigMaps, "web-config")
		return err == nil && cm.GetDeletionTimestamp() != nil, nil
	})
	f.PatchSpec("web", `{"spec":{"phase":2}}`) // listed again
	f.Eventually("Ready=False while it is being deleted", func() (bool, error) {
		c := runtest.ReadyCondition(f.GetCR("web"))
		msg, _ := c["message"].(string)
		if c != nil && c["status"] == "False" && strings.Contains(msg, "being deleted") {
			return true, nil
		}
		return false, fmt.Errorf("Ready %v", c)
	})
	f.editChild(runtest.ConfigMaps, "web-config", `{"metadata":{"finalizers":null}}`)
	f.Eventually("web-config created again", func() (bool, error) {
		cm, err := f.Get(runtest.ConfigMaps, "web-config")
		c := runtest.ReadyCondition(f.GetCR("web"))
		return err == nil && cm.GetDeletionTimestamp() == nil && c != nil && c["status"] == "True", nil
	})
}
