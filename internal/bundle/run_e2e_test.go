package bundle_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/testkit"
)

const reconcilerToken = "bundle-e2e-token"

// tlsReconciler is a loopback remote reconciler over TLS with a certificate of its own CA:
// ork reaches it only if the bundle carried tls.caFile into the pod. Each CR gets a
// ConfigMap child holding its args.
func tlsReconciler(t *testing.T) (*httptest.Server, []byte) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+reconcilerToken {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		var req struct {
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
			Args map[string]any `json:"args"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"result": "ok",
			"status": map[string]any{"phase": "Ready"},
			"resources": []any{map[string]any{"type": "configmap", "fields": map[string]any{
				"name": req.Object.Metadata.Name + "-child", "data": map[string]any{"size": fmt.Sprint(req.Args["size"])},
			}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// buildOrk builds ork as a user would, with go build, once per test binary.
func buildOrk(t *testing.T) string {
	t.Helper()
	if raceBuild {
		return bins.Build(t, "./cmd/ork", "-race")
	}
	return bins.Build(t, "./cmd/ork")
}

// saKubeconfig writes a kubeconfig that authenticates with a real token of the
// ServiceAccount (TokenRequest), as the pod's projected token would: no impersonation.
func saKubeconfig(t *testing.T, dir, namespace, name string) (string, *rest.Config) {
	t.Helper()
	tr, err := env.Clientset.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["ork"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "ork"}
	cfg.CurrentContext = "e2e"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	rc := &rest.Config{Host: env.Config.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}
	return path, rc
}

// Run the bundle as the cluster would: the Deployment's container arguments (the image's
// entrypoint is ork), the Katalog files from the ConfigMap at the mount path, a real token
// of the bundle's ServiceAccount and POD_NAMESPACE as the downward API sets it. ork passes
// its preflight under exactly the bundle's RBAC, reconciles a CR through a TLS reconciler
// whose CA came in the ConfigMap, renews its Lease in the leader-election priority level,
// and stops cleanly on SIGTERM within the pod's grace period.
func TestBundleRunsAsTheClusterWould(t *testing.T) {
	env.Require(t)
	t.Parallel()
	ork := buildOrk(t)
	srv, caPEM := tlsReconciler(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "ca.pem"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	name := uniq("ork-run")
	group := name + ".example.com"
	katalogPath := testKatalog(t, src, group, srv.URL+"/reconcile", "ca.pem")
	set := load(t, katalogPath)
	b, err := bundle.Generate(set, bundle.Options{Name: name, Namespace: name, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	cleanupBundle(t, manifest)
	env.Kubectl(t, manifest, "apply", "--server-side", "-f", "-")
	env.Kubectl(t, nil, "create", "secret", "generic", "reconciler-token", "-n", name, "--from-literal=token="+reconcilerToken)
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+group)
	// The RBAC authorizer sees new bindings through informers: wait until all of it is in.
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(set, rbacgen.Options{Name: name, Namespace: name, LeaderElect: true}) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, name, name, attrs...)

	// The pod, on disk: the ConfigMap's files at the mount path, the container's command.
	root, deploy := podOnDisk(t, b)
	c := deploy.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 0 {
		t.Fatalf("the container sets command %q; the image's entrypoint is ork", c.Command)
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, strings.Replace(a, bundle.MountPath, filepath.Join(root, bundle.MountPath), 1))
	}
	podEnv := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			podEnv[e.Name] = name // what the downward API gives a pod of the Deployment's namespace
		}
	}
	kubeconfig, saConfig := saKubeconfig(t, root, name, name)
	// The pod's ports are ork's defaults (the bundle leaves them unset); a test host may
	// have 8080 taken, so the settings move them, /metrics beside /healthz.
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(ork, args...)
	cmd.Dir = root // no ork.yaml here, nor in HOME
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "KUBECONFIG=" + kubeconfig,
		"ORK_HEALTH_ADDR=" + addr, "ORK_METRICS_ADDR=" + addr}
	for k, v := range podEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := testkit.Start(t, cmd)
	logs := p.Output
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ork %s\n%s", strings.Join(args, " "), logs.String())
		}
	})
	running := func() error {
		select {
		case <-p.Exited():
			return fmt.Errorf("ork exited: %v", p.Err())
		default:
			return nil
		}
	}

	// Ready: the preflight passed (a missing permission exits 1) and the caches synced.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		eventually(t, "ork to serve "+p, func(ctx context.Context) (bool, error) {
			if err := running(); err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+p, nil)
			if err != nil {
				return false, err
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, err
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK, nil
		})
	}

	// A CR converges through the TLS reconciler.
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "App", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"size": "3"},
	}}
	if _, err := dyn.Resource(gvr).Namespace(name).Create(t.Context(), cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the CR Ready with its child", func(ctx context.Context) (bool, error) {
		if err := running(); err != nil {
			t.Fatal(err)
		}
		got, err := dyn.Resource(gvr).Namespace(name).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		ready := false
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				ready = true
			}
		}
		child, err := env.Clientset.CoreV1().ConfigMaps(name).Get(ctx, "web-child", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ready && child.Data["size"] == "3" && len(child.OwnerReferences) == 1 && child.OwnerReferences[0].UID == got.GetUID(), nil
	})

	// The Lease renewals run in the leader-election priority level: the apiserver names the
	// FlowSchema and level that handled a request in its response headers.
	fs, err := env.Clientset.FlowcontrolV1().FlowSchemas().Get(t.Context(), name+"-leader-election", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := env.Clientset.FlowcontrolV1().PriorityLevelConfigurations().Get(t.Context(), bundle.LeaderElectionPriorityLevel, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(saConfig)
	if err != nil {
		t.Fatal(err)
	}
	leaseURL := strings.TrimSuffix(env.Config.Host, "/") + "/apis/coordination.k8s.io/v1/namespaces/" + name + "/leases/" + name
	var headers http.Header
	eventually(t, "the Lease request in the leader-election level", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, leaseURL, nil)
		if err != nil {
			return false, err
		}
		res, err := client.Do(req)
		if err != nil {
			return false, err
		}
		res.Body.Close()
		headers = res.Header
		if res.StatusCode != http.StatusOK || res.Header.Get("X-Kubernetes-PF-FlowSchema-UID") != string(fs.UID) ||
			res.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(pl.UID) {
			return false, fmt.Errorf("GET %s: %s, FlowSchema %q (want %s), priority level %q (want %s)", leaseURL, res.Status,
				res.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), fs.UID, res.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), pl.UID)
		}
		return true, nil
	})
	t.Logf("Lease GET as ork's ServiceAccount: FlowSchema %s, priority level %s",
		headers.Get("X-Kubernetes-PF-FlowSchema-UID"), headers.Get("X-Kubernetes-PF-PriorityLevel-UID"))

	// Nothing extra: the ClusterRole in the cluster is `ork rbac gen --leader-elect`'s.
	out, err := exec.CommandContext(t.Context(), ork, "rbac", "gen", "-f", katalogPath, "--leader-elect",
		"--name", name, "--namespace", name, "-o", "json").Output()
	if err != nil {
		t.Fatalf("ork rbac gen: %v", err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	var want rbacv1.ClusterRole
	if err := json.Unmarshal(out, &list); err != nil || len(list.Items) < 3 {
		t.Fatalf("ork rbac gen -o json: %v\n%s", err, out)
	}
	// And its Roles (the Lease's and the Secret's, in ork's namespace).
	for _, item := range list.Items[3:] {
		var role rbacv1.Role
		if err := json.Unmarshal(item, &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "Role" {
			continue
		}
		live, err := env.Clientset.RbacV1().Roles(role.Namespace).Get(t.Context(), role.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(role.Rules, live.Rules); d != "" {
			t.Errorf("the bundle's Role %s/%s differs from ork rbac gen --leader-elect's (-rbac gen +cluster):\n%s", role.Namespace, role.Name, d)
		}
	}
	if err := json.Unmarshal(list.Items[1], &want); err != nil {
		t.Fatal(err)
	}
	got, err := env.Clientset.RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want.Rules, got.Rules); d != "" {
		t.Errorf("the bundle's ClusterRole differs from ork rbac gen --leader-elect (-rbac gen +cluster):\n%s", d)
	}
	for _, bad := range []string{"forbidden", "level=ERROR"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("ork logged %q under the bundle's RBAC", bad)
		}
	}

	// SIGTERM, as the kubelet sends it: ork drains and exits 0 within the grace period.
	grace := time.Duration(*deploy.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if inTime, err := p.Terminate(grace); !inTime {
		t.Errorf("ork still ran %s after SIGTERM: the kubelet would have killed it", grace)
	} else if err != nil {
		t.Errorf("ork exited with %v after SIGTERM, want 0", err)
	}
}

// podOnDisk lays out b's pod as ork sees it: the ConfigMap's files under the mount path of a
// fresh root. It returns the root and the Deployment.
func podOnDisk(t *testing.T, b *bundle.Bundle) (string, *appsv1.Deployment) {
	t.Helper()
	root := t.TempDir()
	mount := filepath.Join(root, bundle.MountPath)
	if err := os.MkdirAll(mount, 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range configData(t, b) {
		if err := os.WriteFile(filepath.Join(mount, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root, deploymentOf(t, b)
}
