package run_test

import (
	"net"
	"net/http"
	"os/exec"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The example reconcilers shipped in examples/remote, run for real behind ork.
func TestExampleReconcilers(t *testing.T) {
	goReconciler := goBuild(t, "github.com/orkspace/ork/examples/remote/reconciler-go") // before t.Parallel, as in the SIGTERM test
	t.Parallel()
	for _, lang := range []string{"go", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			f := newFixtureID(t, t.Name())
			addr := freeAddr(t)
			var cmd *exec.Cmd
			switch lang {
			case "go":
				cmd = exec.Command(goReconciler, "-addr", addr)
			case "python":
				python, err := exec.LookPath("python3")
				if err != nil {
					t.Skip("python3 is not installed")
				}
				cmd = exec.Command(python, "../../examples/remote/reconciler-python/reconciler.py", "--addr", addr)
			}
			cmd.Env = append(cmd.Environ(), "RECONCILER_TOKEN="+testToken)
			cmd.Stdout, cmd.Stderr = f.logs, f.logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			f.eventually("the reconciler listening on "+addr, func() (bool, error) {
				res, err := http.Get("http://" + addr + "/reconcile")
				if err != nil {
					return false, nil
				}
				res.Body.Close()
				return true, nil
			})

			f.start(f.writeKatalog(remoteSpec{endpoint: "http://" + addr + "/reconcile"}), nil)
			cr := f.createCR("shop", map[string]any{"image": "nginx:1.27", "replicas": 2, "port": 8080})
			got := f.waitReady("shop", "True")
			if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
				t.Errorf("status.phase = %q, want Ready from the %s reconciler", phase, lang)
			}
			dep, err := f.get(deployments, "shop")
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
				t.Errorf("deployment replicas = %d, want 2", r)
			}
			svc, err := f.get(services, "shop-svc")
			if err != nil {
				t.Fatal(err)
			}
			assertOwnedByOrk(t, dep, cr)
			assertOwnedByOrk(t, svc, cr)
		})
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago; the example
// reconcilers take an address, not a listener.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
