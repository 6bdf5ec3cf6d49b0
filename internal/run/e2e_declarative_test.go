package run_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/runtest"
)

// The declarative reconciler runs in the same engine: onCreate children are created once
// and then left alone, onReconcile children are applied on every pass.
func TestDeclarativeReconcilerInTheEngine(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: declarative-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile:
          default: true
        onCreate:
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
              replicas: "{{ .spec.replicas }}"
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data:
                level: "{{ .spec.level }}"
`, f.Group)
	set := f.LoadKatalog(doc)
	f.Start(set, nil)
	cr := f.CreateCR("site", map[string]any{"image": "nginx:1.27", "replicas": 2, "level": "info"})
	f.WaitReady("site", "True")
	f.WaitEvent("site", corev1.EventTypeNormal, "Reconciled")

	dep, err := f.Get(runtest.Deployments, "site")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := f.Get(runtest.ConfigMaps, "site-settings")
	if err != nil {
		t.Fatal(err)
	}
	assertWrittenByOrk(t, dep, cr, metav1.ManagedFieldsOperationUpdate) // created, not applied

	assertOwnedByOrk(t, cm, cr)

	// Someone scales the onCreate Deployment and edits the onReconcile ConfigMap.
	for _, p := range []struct {
		gvr   schema.GroupVersionResource
		name  string
		patch string
	}{{runtest.Deployments, "site", `{"spec":{"replicas":5}}`}, {runtest.ConfigMaps, "site-settings", `{"data":{"level":"hacked"}}`}} {
		if _, err := f.Dyn.Resource(p.gvr).Namespace(f.NS).Patch(t.Context(), p.name, types.MergePatchType, []byte(p.patch),
			metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	}
	f.Eventually("the onReconcile ConfigMap restored", func() (bool, error) {
		cm, err := f.Get(runtest.ConfigMaps, "site-settings")
		if err != nil {
			return false, err
		}
		level, _, _ := unstructured.NestedString(cm.Object, "data", "level")
		return level == "info", nil
	})
	dep, err = f.Get(runtest.Deployments, "site")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 5 {
		t.Errorf("onCreate deployment replicas = %d after the edit, want 5: onCreate never updates", r)
	}
}
