package bundle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	calls []string // path, the custom resource's namespace/name and the Authorization header
}

func (c *callRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Object struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
		} `json:"object"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.calls = append(c.calls, r.URL.Path+" "+req.Object.Metadata.Namespace+"/"+req.Object.Metadata.Name+" "+r.Header.Get("Authorization"))
	c.mu.Unlock()
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

	args, p := runRendered(t, ork, manifest, ns)
	for _, want := range []string{"--endpoint=app=" + endpoint, "--endpoint-timeout=app=1s", "--auth-secret=app=" + secretNS + "/values-token:tok"} {
		if !slices.Contains(args, want) {
			t.Fatalf("the Deployment's args lack %s: %q", want, args)
		}
	}

	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	apps := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}).Namespace(ns)
	for _, cr := range []string{"web", "slow"} {
		createApp(t, apps, group, cr)
	}
	eventually(t, "web Ready through the values' endpoint", func(ctx context.Context) (bool, error) {
		c, err := readyCondition(ctx, p, apps, "web")
		return c != nil && c["status"] == "True", err
	})
	for _, call := range rec.seen() {
		if !strings.HasPrefix(call, "/from-values ") || !strings.HasSuffix(call, " Bearer "+reconcilerToken) {
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
		c, err := readyCondition(ctx, p, apps, "slow")
		if c == nil || err != nil {
			return false, err
		}
		status, _ = yaml.Marshal(c)
		msg, _ := c["message"].(string)
		return c["status"] == "False" && strings.Contains(msg, "RemoteTimeout: POST "+endpoint+": no response within 1s"), nil
	})
}

// runRendered runs the Deployment of a rendered chart as its pod would (see
// TestBundleRunsAsTheClusterWould): the ConfigMap's files at the mount path, the
// container's arguments, a real token of its ServiceAccount, POD_NAMESPACE. ork is stopped
// with SIGTERM when the test ends, and must exit 0. It returns the arguments as rendered.
func runRendered(t *testing.T, ork string, manifest []byte, ns string) ([]string, *testkit.Process) {
	t.Helper()
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
	rendered := deploy.Spec.Template.Spec.Containers[0].Args
	var args []string
	for _, a := range rendered {
		args = append(args, strings.Replace(a, bundle.MountPath, filepath.Join(root, bundle.MountPath), 1))
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

	return rendered, p
}

func createApp(t *testing.T, apps dynamic.ResourceInterface, group, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "App", "metadata": map[string]any{"name": name}, "spec": map[string]any{"size": "1"},
	}}
	if _, err := apps.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// readyCondition is the custom resource's Ready condition, nil while it has none; ork
// exiting fails the test.
func readyCondition(ctx context.Context, p *testkit.Process, apps dynamic.ResourceInterface, name string) (map[string]any, error) {
	select {
	case <-p.Exited():
		return nil, fmt.Errorf("ork exited: %v", p.Err())
	default:
	}
	got, err := apps.Get(ctx, name, metav1.GetOptions{})
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

// Two releases of one chart side by side, each in its own namespace with its own
// watchNamespaces and endpoint: their cluster-scoped objects do not collide, and each
// converges the custom resources of its own namespace only, through its own endpoint.
func TestTwoReleasesOfOneChartSideBySide(t *testing.T) {
	env.Require(t)
	t.Parallel()
	helmPath := helmBin(t)
	ork := buildOrk(t)
	rec := &callRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)

	name := uniq("ork-2rel")
	group := name + ".example.com"
	set := load(t, testKatalog(t, t.TempDir(), group, "http://app-reconciler.nowhere.svc:8088/reconcile", ""))
	b, err := bundle.Generate(set, bundle.Options{Name: name, Namespace: name, Version: "1.2.3"})
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
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	type release struct {
		name, ns, team string
		manifest       []byte
		p              *testkit.Process
	}
	rels := []*release{{name: "ra", ns: name + "-a", team: name + "-team-a"}, {name: "rb", ns: name + "-b", team: name + "-team-b"}}
	clusterScoped := map[string]string{} // kind/name -> release
	for _, r := range rels {
		for _, n := range []string{r.ns, r.team} {
			env.Kubectl(t, nil, "create", "namespace", n)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = testenvKubectl(ctx, nil, "delete", "namespace", n, "--wait=false")
			})
		}
		r.manifest = []byte(helm(t, helmPath, "template", r.name, dir, "--namespace", r.ns, "--include-crds",
			"--set", "endpoints.app="+srv.URL+"/"+r.name, "--set", "watchNamespaces={"+r.team+"}"))
		for _, o := range parseObjects(t, r.manifest) {
			if o.GetNamespace() != "" || o.GetKind() == "CustomResourceDefinition" {
				continue // the CRD is the chart's, shared as Helm shares crds/
			}
			k := o.GetKind() + "/" + o.GetName()
			if other, dup := clusterScoped[k]; dup {
				t.Errorf("releases %s and %s both render the cluster-scoped %s", other, r.name, k)
			}
			clusterScoped[k] = r.name
		}
		cleanupBundle(t, r.manifest)
		env.Kubectl(t, r.manifest, "apply", "--server-side", "-f", "-")
		env.Kubectl(t, nil, "create", "secret", "generic", "reconciler-token", "-n", r.ns, "--from-literal=token="+reconcilerToken)
	}
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+group)
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}
	for _, r := range rels {
		full := r.name + "-" + name
		var attrs []authorizationv1.ResourceAttributes
		for _, p := range rbacgen.Permissions(set, rbacgen.Options{Name: full, Namespace: r.ns, LeaderElect: true, WatchNamespaces: []string{r.team}}) {
			attrs = append(attrs, p.Attributes())
		}
		env.WaitAllowed(t, r.ns, full, attrs...)
		_, r.p = runRendered(t, ork, r.manifest, r.ns)
		createApp(t, dyn.Resource(gvr).Namespace(r.team), group, "web")
	}
	for _, r := range rels {
		eventually(t, r.team+"/web Ready", func(ctx context.Context) (bool, error) {
			c, err := readyCondition(ctx, r.p, dyn.Resource(gvr).Namespace(r.team), "web")
			return c != nil && c["status"] == "True", err
		})
	}
	// Each custom resource reached its own release's endpoint only.
	byPath := map[string]int{}
	for _, call := range rec.seen() {
		path, cr, _ := strings.Cut(call, " ")
		ns, _, _ := strings.Cut(cr, "/")
		want := map[string]string{rels[0].team: "/ra", rels[1].team: "/rb"}[ns]
		if path != want {
			t.Errorf("a call %q: a custom resource of %s reached %s, want %s", call, ns, path, want)
		}
		byPath[path]++
	}
	if byPath["/ra"] == 0 || byPath["/rb"] == 0 {
		t.Errorf("calls by endpoint: %v, want both releases'", byPath)
	}
}
