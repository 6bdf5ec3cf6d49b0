package run_test

import (
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run"
)

// --install-crds: ork server-side applies the Katalog's crdFile, waits until the API
// serves it, then watches and reconciles its custom resources.
func TestInstallCRDsBeforeWatching(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A group nobody installed: only ork can make it exist.
	f.group = "installed-" + f.group
	f.gvr.Group = f.group
	crdFile := filepath.Base(f.writeCRD("App", "apps"))
	if _, err := f.dyn.Resource(f.gvr).Namespace(f.ns).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("listing %s before ork ran: %v, want 404", f.gvr, err)
	}
	ep := newEndpoint(t, okWithChildren)
	set := f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, crdFile: crdFile})

	f.start(set, nil, func(o *run.Options) { o.InstallCRDs = true })
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := f.dyn.Resource(crds).Get(t.Context(), "apps."+f.group, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the CRD ork should have installed: %v", err)
	}
	applied := false
	for _, mf := range crd.GetManagedFields() {
		applied = applied || (mf.Manager == run.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !applied {
		t.Errorf("CRD managedFields %v, want a server-side apply by %s", crd.GetManagedFields(), run.FieldManager)
	}

	cr := f.createCR("web", map[string]any{"replicas": 2})
	f.waitReady("web", "True")
	dep, err := f.get(deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	assertOwnedByOrk(t, dep, cr)
}
