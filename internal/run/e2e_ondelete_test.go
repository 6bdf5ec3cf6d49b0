package run_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/runtest"
)

// Declarative onDelete deletes only what the CR controls (or marks), and once: an object of
// the expected name that someone else made is left alone, and one made again while the CR
// still terminates (another finalizer holds it) is not deleted on the next pass.
func TestOnDeleteDeletesOnlyWhatTheCRControlsAndOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ondelete-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile:
          default: true
          resync: 1s
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data: {level: info}
        onDelete:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data: {}
            - name: "{{ .metadata.name }}-foreign"
              data: {}
`, f.Group)
	set := f.LoadKatalog(doc)
	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	// Someone else's ConfigMap with the name onDelete lists.
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site-foreign"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Start(set, nil)
	cr := f.CreateCR("site", map[string]any{})
	// Another controller's finalizer keeps the CR terminating after its delete.
	if _, err := f.CRs().Patch(t.Context(), "site", types.MergePatchType, []byte(`{"metadata":{"finalizers":["test.ork/hold"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = f.CRs().Patch(t.Context(), "site", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	f.WaitReady("site", "True")
	if err := f.CRs().Delete(t.Context(), "site", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the controlled ConfigMap deleted", func() (bool, error) {
		_, err := f.Get(runtest.ConfigMaps, "site-settings")
		return apierrors.IsNotFound(err), nil
	})
	// Made again, with ork's label, while the CR still terminates.
	again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site-settings", Labels: map[string]string{"app.kubernetes.io/managed-by": "orkestra"}}}
	if _, err := cms.Create(t.Context(), again, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Two more passes (the resync runs every second): each would delete it again.
	passes := func() float64 {
		return testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "success", "stable"))
	}
	from := passes()
	f.Eventually("two more passes", func() (bool, error) { return passes() >= from+2, nil })
	if _, err := f.Get(runtest.ConfigMaps, "site-settings"); err != nil {
		t.Errorf("site-settings made again while %s terminates was deleted on a later pass (%v): onDelete runs once", cr.GetName(), err)
	}
	if _, err := f.Get(runtest.ConfigMaps, "site-foreign"); err != nil {
		t.Errorf("site-foreign, not made by ork, was deleted by onDelete: %v", err)
	}
}

// A child in another namespace than its CR's (no ownerReference can reach it) carries the
// CR's uid in orkestra.orkspace.io/owner, and onDelete deletes it by that mark.
func TestOnDeleteDeletesTheMarkedChildInAnotherNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	shared := env.Namespace(t)
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ondelete-marked-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %[1]s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile:
          default: true
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-shared"
              namespace: %[2]s
              data: {level: info}
        onDelete:
          configMaps:
            - name: "{{ .metadata.name }}-shared"
              namespace: %[2]s
              data: {}
`, f.Group, shared)
	set := f.LoadKatalog(doc)
	f.Start(set, nil)
	cr := f.CreateCR("site", map[string]any{})
	f.WaitReady("site", "True")
	cms := env.Clientset.CoreV1().ConfigMaps(shared)
	cm, err := cms.Get(t.Context(), "site-shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations["orkestra.orkspace.io/owner"]; got != string(cr.GetUID()) {
		t.Errorf("child in namespace %s: annotation orkestra.orkspace.io/owner = %q, want the CR's uid %s", shared, got, cr.GetUID())
	}
	if len(cm.OwnerReferences) != 0 {
		t.Errorf("child in another namespace has ownerReferences %v, want none (they cannot cross namespaces)", cm.OwnerReferences)
	}
	if err := f.CRs().Delete(t.Context(), "site", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the marked child deleted", func() (bool, error) {
		_, err := cms.Get(t.Context(), "site-shared", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
