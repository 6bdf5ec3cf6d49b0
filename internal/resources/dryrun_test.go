package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// TestBuiltObjectsPassServerSideDryRun sends every golden build through a real apiserver's
// server-side apply in dry-run mode: what Build makes is what Kubernetes accepts.
func TestBuiltObjectsPassServerSideDryRun(t *testing.T) {
	e := env.Require(t)
	ns := e.Namespace(t)
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.Clientset.Discovery()))
	inputs, err := filepath.Glob(filepath.Join("testdata", "build", "*.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := sigsyaml.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			o, err := Build(raw, OptionsFor(ns, "my-cr"))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			gvk := o.Obj.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				t.Skipf("%s is not served by a bare apiserver (a CRD of another project)", gvk)
			}
			if err != nil {
				t.Fatal(err)
			}
			obj := o.Obj.DeepCopy()
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				obj.SetNamespace(ns)
			}
			if _, err := dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Apply(t.Context(), obj.GetName(), obj,
				metav1.ApplyOptions{FieldManager: "orkestra", Force: true, DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("server-side dry-run rejected the built %s:\n%v", gvk.Kind, err)
			}
		})
	}
}
