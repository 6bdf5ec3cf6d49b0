package run_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/run/runtest"
)

// The example reconcilers shipped in examples/remote, run for real behind ork.
func TestExampleReconcilers(t *testing.T) {
	goReconciler := reconcilertest.BuildGo(t, &bins) // before t.Parallel, as in the SIGTERM test
	t.Parallel()
	for _, lang := range []string{"go", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			f := newFixtureID(t, t.Name())
			var endpoint string
			switch lang {
			case "go":
				endpoint = reconcilertest.StartGo(t, goReconciler, runtest.TestToken)
			case "python":
				endpoint = reconcilertest.StartPython(t, runtest.TestToken)
			}
			f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: endpoint}), nil)
			cr := f.CreateCR("shop", map[string]any{"image": "nginx:1.27", "replicas": 2, "port": 8080})
			got := f.WaitReady("shop", "True")
			if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
				t.Errorf("status.phase = %q, want Ready from the %s reconciler", phase, lang)
			}
			dep, err := f.Get(runtest.Deployments, "shop")
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
				t.Errorf("deployment replicas = %d, want 2", r)
			}
			svc, err := f.Get(runtest.Services, "shop-svc")
			if err != nil {
				t.Fatal(err)
			}
			assertOwnedByOrk(t, dep, cr)
			assertOwnedByOrk(t, svc, cr)
		})
	}
}
