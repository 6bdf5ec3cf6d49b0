package sdk

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

// Each SDK's example reconciler converges the example WebApp through `ork run` on the real
// apiserver: started on loopback with the token Secret's value in RECONCILER_TOKEN_FILE,
// called by ork (the Katalog of examples/remote, its endpoint and Secret pointed at this
// test's), it makes the custom resource Ready, with the status it answers and its
// Deployment and Service applied.
func TestExamplesConvergeThroughOrkRun(t *testing.T) {
	e := env.Require(t)
	orkBin := bins.Build(t, "./cmd/ork")
	for _, ex := range []example{goExample(t), pythonExample(t), tsExample(t)} {
		t.Run(ex.name, func(t *testing.T) { converge(t, e, orkBin, ex) })
	}
}

func converge(t *testing.T, e *testenv.Env, orkBin string, ex example) {
	ns := e.Namespace(t)
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	secret := readOne(t, filepath.Join(examples, "secret.yaml"))
	token, _, err := unstructured.NestedString(secret.Object, "stringData", "token")
	if err != nil || token == "" {
		t.Fatalf("examples/remote/secret.yaml: no stringData.token (%v)", err)
	}
	secret.SetNamespace(ns)
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := dyn.Resource(secrets).Namespace(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeAddr(t)
	cmd := ex.command(t, addr)
	cmd.Env = append(os.Environ(), "RECONCILER_TOKEN_FILE="+tokenFile, "PYTHONDONTWRITEBYTECODE=1")
	rec := testkit.Start(t, cmd)
	rec.WaitListening(t, addr, 30*time.Second)

	// The Katalog as written; the flags point its endpoint at the example and its secretRef
	// at this test's namespace, and keep ork to that namespace.
	ork := testkit.Start(t, exec.Command(orkBin, "run", "--install-crds",
		"-f", filepath.Join(examples, "katalog.yaml"), "--namespace", ns, "--watch-namespace", ns,
		"--endpoint", "webapp=http://"+addr+"/reconcile",
		"--auth-secret", "webapp="+ns+"/"+secret.GetName()+":token",
		"--kubeconfig", e.Kubeconfig, "--health-addr=", "--metrics-addr="))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ork:\n%s\n%s example:\n%s", ork.Output.String(), ex.name, rec.Output.String())
		}
	})

	cr := readOne(t, filepath.Join(examples, "cr.yaml"))
	cr.SetNamespace(ns)
	webapps := schema.GroupVersionResource{Group: "myorg.io", Version: "v1", Resource: "webapps"}
	// ork installs the CRD at start and the create waits until the apiserver serves it; then
	// one reconcile. Seconds on a loaded 2-core machine; the bound only catches a run that
	// never converges, and an exited ork or reconciler stops the wait at once.
	created := false
	testkit.Eventually(t, cr.GetName()+" Ready=True", 100*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
		if err := exitedEarly(ork, rec); err != nil {
			return false, testkit.Permanent(err)
		}
		if !created {
			if _, err := dyn.Resource(webapps).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{}); err != nil {
				return false, err
			}
			created = true
		}
		u, err := dyn.Resource(webapps).Namespace(ns).Get(ctx, cr.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ready(u), nil
	})

	got, err := dyn.Resource(webapps).Namespace(ns).Get(t.Context(), cr.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The example answers this status for examples/remote/cr.yaml (spec.replicas 2).
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
		t.Errorf("status.phase = %q, want Ready", phase)
	}
	if url, _, _ := unstructured.NestedString(got.Object, "status", "url"); url != "http://"+cr.GetName()+"-svc" {
		t.Errorf("status.url = %q, want http://%s-svc", url, cr.GetName())
	}

	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	dep, err := dyn.Resource(deployments).Namespace(ns).Get(t.Context(), cr.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the example's Deployment: %v", err)
	}
	if replicas, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); replicas != 2 {
		t.Errorf("Deployment spec.replicas = %d, want 2", replicas)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if c, _ := first(containers); c["image"] != "nginx:1.27" || len(containers) != 1 {
		t.Errorf("Deployment containers = %v, want one of image nginx:1.27", containers)
	}
	if !ownedBy(dep, got) {
		t.Errorf("Deployment owners = %v, want the WebApp %s", dep.GetOwnerReferences(), got.GetUID())
	}

	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	svc, err := dyn.Resource(services).Namespace(ns).Get(t.Context(), cr.GetName()+"-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the example's Service: %v", err)
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if p, _ := first(ports); fmt.Sprint(p["port"]) != "80" || len(ports) != 1 {
		t.Errorf("Service ports = %v, want one of port 80", ports)
	}
	if !ownedBy(svc, got) {
		t.Errorf("Service owners = %v, want the WebApp %s", svc.GetOwnerReferences(), got.GetUID())
	}
}

// readOne reads the single object of the manifest at path.
func readOne(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Read(path)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: want one object: %d, %v", path, len(objs), err)
	}
	return objs[0]
}

// exitedEarly names the first of ps that has exited: both must run for the whole test.
func exitedEarly(ps ...*testkit.Process) error {
	for _, p := range ps {
		select {
		case <-p.Exited():
			return fmt.Errorf("%s exited: %v", filepath.Base(p.Cmd.Path), p.Err())
		default:
		}
	}
	return nil
}

// ready reports whether u has the condition Ready=True.
func ready(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// first is the first item of list as an object, false when there is none or it is not one.
func first(list []any) (map[string]any, bool) {
	if len(list) == 0 {
		return nil, false
	}
	m, ok := list[0].(map[string]any)
	return m, ok
}

// ownedBy reports whether child has owner among its owner references.
func ownedBy(child, owner *unstructured.Unstructured) bool {
	for _, r := range child.GetOwnerReferences() {
		if r.UID == owner.GetUID() {
			return true
		}
	}
	return false
}
