package scaffold

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

// The README's local development, end to end on the real apiserver, for the reconciler on
// each SDK: the reconciler started on this machine with the README's token, the token
// Secret applied, `ork run --install-crds --namespace NS --endpoint CRD=URL` with the Katalog
// as written (its endpoint the in-cluster Service, which nothing here serves), and the
// sample custom resource becomes Ready with its Deployment and Service.
func TestLocalDevelopmentConverges(t *testing.T) {
	e := env.Require(t)
	orkBin := bins.Build(t, "./cmd/ork")
	for _, r := range remotes {
		t.Run(string(r), func(t *testing.T) { localDevelopment(t, e, orkBin, r) })
	}
}

// localRuns are the README's commands that start each reconciler on this machine.
var localRuns = map[Remote]string{
	RemoteGo:     "(cd reconciler && go test ./... && RECONCILER_TOKEN=change-me go run . -addr 127.0.0.1:8088)",
	RemotePython: "(cd reconciler && python3 -m unittest && RECONCILER_TOKEN=change-me python3 reconciler.py --addr 127.0.0.1:8088)",
	RemoteTS:     "(cd reconciler && npm ci && npm test && RECONCILER_TOKEN=change-me node build/reconciler.js --addr 127.0.0.1:8088)",
}

func localDevelopment(t *testing.T, e *testenv.Env, orkBin string, r Remote) {
	ns := e.Namespace(t)
	// A group of its own per flavour: the CRD stays in the shared apiserver after the test.
	o := Options{Remote: r, Group: "local-e2e-" + string(r) + ".example.com", Namespace: ns}
	dir := write(t, o)
	// The commands below are the README's, on a free port instead of 8088.
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		localRuns[r],
		"kubectl apply -f secret.yaml",
		"ork run --install-crds --namespace " + ns + " -f katalog.yaml --endpoint webapp=http://127.0.0.1:8088/reconcile",
		"kubectl apply -f cr.yaml",
	} {
		if !strings.Contains(string(readme), "\n"+line+"\n") {
			t.Errorf("README.md lacks the line %q", line)
		}
	}

	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(filepath.Join(dir, "secret.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("secret.yaml: %v", err)
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := dyn.Resource(secrets).Namespace(ns).Create(t.Context(), objs[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	addr := testkit.FreeAddr(t)
	rec := startReconciler(t, r, filepath.Join(dir, "reconciler"), addr, "RECONCILER_TOKEN=change-me").Output
	waitHTTP(t, "http://"+addr+"/readyz", rec)
	ork := start(t, orkBin, nil, "run", "--install-crds", "--namespace", ns,
		"-f", filepath.Join(dir, "katalog.yaml"), "--endpoint", "webapp=http://"+addr+"/reconcile",
		"--kubeconfig", e.Kubeconfig, "--health-addr=", "--metrics-addr=")

	crs, err := manifest.Read(filepath.Join(dir, "cr.yaml"))
	if err != nil || len(crs) != 1 {
		t.Fatalf("cr.yaml: %v", err)
	}
	cr := crs[0]
	cr.SetNamespace(ns)
	gvr := schema.GroupVersionResource{Group: o.Group, Version: "v1", Resource: "webapps"}
	// ork installs the CRD at start; the create waits until the apiserver serves it. Both
	// take a few seconds; the bound stops a broken start from hanging the test.
	var got *unstructured.Unstructured
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if got == nil {
			if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{}); err != nil {
				return false, nil
			}
		}
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, cr.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = u
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s never became Ready: %v\nlast seen: %v\nork:\n%s\nreconciler:\n%s", cr.GetName(), err, got, ork.String(), rec.String())
	}
	for _, child := range []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"}, {Version: "v1", Resource: "services"},
	} {
		if _, err := dyn.Resource(child).Namespace(ns).Get(t.Context(), cr.GetName(), metav1.GetOptions{}); err != nil {
			t.Errorf("%s %s: %v", child.Resource, cr.GetName(), err)
		}
	}
	if !strings.Contains(rec.String(), "reconcile "+ns+"/"+cr.GetName()) {
		t.Errorf("the local reconciler logged no call for %s:\n%s", cr.GetName(), rec.String())
	}
}

// start runs bin with args and extra environment until the test ends, its output in the
// returned buffer.
func start(t *testing.T, bin string, env []string, args ...string) *testkit.SyncBuffer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return testkit.Start(t, cmd).Output
}

// waitHTTP waits until url answers 200; start-up is well under a second, the bound only
// stops a process that never listens from hanging the test.
func waitHTTP(t *testing.T, url string, logs fmt.Stringer) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s: %v\n%s", url, err, logs.String())
	}
}
