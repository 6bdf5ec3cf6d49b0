package bundle_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/testkit"
)

// callRecorder is a loopback remote reconciler that keeps the path and token of every call.
// A custom resource named "slow" gets no answer until ork gives up on the call.
type callRecorder struct {
	mu    sync.Mutex
	calls []string // path and Authorization header
}

func (c *callRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.calls = append(c.calls, r.URL.Path+" "+r.Header.Get("Authorization"))
	c.mu.Unlock()
	var req struct {
		Object struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"object"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.Object.Metadata.Name == "slow" {
		<-r.Context().Done() // ork's per-call timeout cancels the request
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
}

func (c *callRecorder) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// The chart's values reach ork's calls: the Katalog names an in-cluster endpoint nothing
// here serves, a 10s timeout and a token Secret that does not exist; the release sets
// endpoints, timeouts and authSecrets (a Secret in another namespace). The rendered chart
// is applied to the apiserver and its Deployment's arguments run as the pod would, with a
// real token of the chart's ServiceAccount: ork passes its preflight under the chart's RBAC
// (get on the values' Secret included), calls the loopback reconciler with the values'
// token, and gives up on a call after the values' timeout.
func TestChartValuesReachOrksCalls(t *testing.T) {
	env.Require(t)
	t.Parallel()
	helmPath := helmBin(t)
	ork := buildOrk(t)
	rec := &callRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)

	name := uniq("ork-values")
	ns, secretNS := name, name+"-sec"
	group := name + ".example.com"
	src := t.TempDir()
	katalogPath := testKatalog(t, src, group, "http://app-reconciler.nowhere.svc:8088/reconcile", "")
	set := load(t, katalogPath)
	b, err := bundle.Generate(set, bundle.Options{Name: name, Namespace: ns, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := b.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	endpoint := srv.URL + "/from-values"
	manifest := []byte(helm(t, helmPath, "template", name, dir, "--namespace", ns, "--include-crds",
		"--set", "endpoints.app="+endpoint, "--set", "timeouts.app=1s",
		"--set", "authSecrets.app.namespace="+secretNS, "--set", "authSecrets.app.name=values-token",
		"--set", "authSecrets.app.key=tok"))

	for _, n := range []string{ns, secretNS} {
		env.Kubectl(t, nil, "create", "namespace", n)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = testenvKubectl(ctx, nil, "delete", "namespace", n, "--wait=false")
		})
	}
	cleanupBundle(t, manifest)
	env.Kubectl(t, manifest, "apply", "--server-side", "-f", "-")
	env.Kubectl(t, nil, "create", "secret", "generic", "values-token", "-n", secretNS, "--from-literal=tok="+reconcilerToken)
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+group)
	// What rbacgen derives for the Katalog as the values change it is what the chart
	// grants: wait until the authorizer has all of it (it sees new bindings through informers).
	ref := &katalog.SecretKeyRef{Namespace: secretNS, Name: "values-token", Key: "tok"}
	overridden := set.WithRemotes(map[string]katalog.RemoteOverride{"app": {Endpoint: endpoint, Timeout: "1s", AuthSecret: ref}})
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(overridden, rbacgen.Options{Name: name, Namespace: ns, LeaderElect: true}) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, ns, name, attrs...)

	// The pod, on disk: the rendered ConfigMap's files at the mount path.
	var deploy appsv1.Deployment
	root := t.TempDir()
	for _, o := range parseObjects(t, manifest) {
		switch o.GetKind() {
		case "Deployment":
			toTyped(t, o, &deploy)
		case "ConfigMap":
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			mount := filepath.Join(root, bundle.MountPath)
			if err := os.MkdirAll(mount, 0o755); err != nil {
				t.Fatal(err)
			}
			for k, v := range data {
				if err := os.WriteFile(filepath.Join(mount, k), []byte(v), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var args []string
	for _, a := range deploy.Spec.Template.Spec.Containers[0].Args {
		args = append(args, strings.Replace(a, bundle.MountPath, filepath.Join(root, bundle.MountPath), 1))
	}
	for _, want := range []string{"--endpoint=app=" + endpoint, "--endpoint-timeout=app=1s", "--auth-secret=app=" + secretNS + "/values-token:tok"} {
		if !strings.Contains(strings.Join(args, "\n")+"\n", want+"\n") {
			t.Fatalf("the Deployment's args lack %s: %q", want, args)
		}
	}
	kubeconfig, _ := saKubeconfig(t, root, ns, deploy.Spec.Template.Spec.ServiceAccountName)
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(ork, args...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "KUBECONFIG=" + kubeconfig,
		"ORK_HEALTH_ADDR=" + addr, "ORK_METRICS_ADDR=" + addr, "POD_NAMESPACE=" + ns}
	p := testkit.Start(t, cmd)
	t.Cleanup(func() {
		if _, err := p.Terminate(30 * time.Second); err != nil {
			t.Errorf("ork exited with %v after SIGTERM, want 0", err)
		}
		if t.Failed() {
			t.Logf("ork %s\n%s", strings.Join(args, " "), p.Output.String())
		}
	})

	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	apps := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}).Namespace(ns)
	for _, cr := range []string{"web", "slow"} {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "App", "metadata": map[string]any{"name": cr}, "spec": map[string]any{"size": "1"},
		}}
		if _, err := apps.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ready := func(ctx context.Context, cr string) (map[string]any, error) {
		select {
		case <-p.Exited():
			t.Fatalf("ork exited: %v", p.Err())
		default:
		}
		got, err := apps.Get(ctx, cr, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" {
				return m, nil
			}
		}
		return nil, nil
	}
	eventually(t, "web Ready through the values' endpoint", func(ctx context.Context) (bool, error) {
		c, err := ready(ctx, "web")
		return c != nil && c["status"] == "True", err
	})
	for _, call := range rec.seen() {
		if call != "/from-values Bearer "+reconcilerToken {
			t.Errorf("a call %q, want the values' path and token", call)
		}
	}
	// The Katalog's 10s would still be waiting; the values' 1s has given up, and says so.
	var status []byte
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("slow's Ready condition:\n%s", status)
		}
	})
	eventually(t, "slow timed out after the values' 1s", func(ctx context.Context) (bool, error) {
		c, err := ready(ctx, "slow")
		if c == nil || err != nil {
			return false, err
		}
		status, _ = yaml.Marshal(c)
		msg, _ := c["message"].(string)
		return c["status"] == "False" && strings.Contains(msg, "RemoteTimeout: POST "+endpoint+": no response within 1s"), nil
	})
}
