package run_test

import (
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// --install-crds: ork server-side applies the Katalog's crdFile, waits until the API
// serves it, then watches and reconciles its custom resources.
func TestInstallCRDsBeforeWatching(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A group nobody installed: only ork can make it exist.
	f.Group = "installed-" + f.Group
	f.GVR.Group = f.Group
	crdFile := filepath.Base(f.WriteCRD("App", "apps"))
	if _, err := f.Dyn.Resource(f.GVR).Namespace(f.NS).List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("listing %s before ork ran: %v, want 404", f.GVR, err)
	}
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), CRDFile: crdFile})

	f.Start(set, nil, func(o *run.Options) { o.InstallCRDs = true })
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := f.Dyn.Resource(crds).Get(t.Context(), "apps."+f.Group, metav1.GetOptions{})
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

	cr := f.CreateCR("web", map[string]any{"replicas": 2})
	f.WaitReady("web", "True")
	dep, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	assertOwnedByOrk(t, dep, cr)
}
