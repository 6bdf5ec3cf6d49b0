package bundle_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/testkit"
)

// watchRecorder is an HTTP proxy in front of the apiserver that keeps what one ork asked
// for and received about ConfigMaps (the child type both operators share): the label
// selectors of its lists and watches, and every byte the apiserver streamed back. What an
// informer caches arrives through exactly these responses.
type watchRecorder struct {
	url string
	// caPEM is the CA of the proxy's certificate: client-go sends no token over plain http.
	caPEM []byte

	mu        sync.Mutex
	selectors []string
	body      bytes.Buffer
}

func newWatchRecorder(t *testing.T) *watchRecorder {
	t.Helper()
	upstream, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(&rest.Config{Host: env.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	r := &watchRecorder{}
	proxy := &httputil.ReverseProxy{Transport: transport, FlushInterval: -1} // watches stream
	proxy.Rewrite = func(pr *httputil.ProxyRequest) {
		pr.SetURL(upstream) // the Host header too
		req := pr.Out
		req.Header.Del("Accept-Encoding")                                                   // plain bytes, so the recording can be searched
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps") { // a list or watch, not a create
			r.mu.Lock()
			r.selectors = append(r.selectors, req.URL.Query().Get("labelSelector"))
			r.mu.Unlock()
		}
	}
	proxy.ModifyResponse = func(res *http.Response) error {
		if strings.HasSuffix(res.Request.URL.Path, "/configmaps") {
			res.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(res.Body, lockedWriter{r}), res.Body}
		}
		return nil
	}
	srv := httptest.NewTLSServer(proxy)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	r.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return r
}

type lockedWriter struct{ r *watchRecorder }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.r.body.Write(p)
}

// saw reports whether s was in any ConfigMap response streamed to this ork.
func (r *watchRecorder) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Contains(r.body.Bytes(), []byte(s))
}

func (r *watchRecorder) labelSelectors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.selectors...)
}

// operator is one Katalog's bundle, applied, and its command line run as its pod would.
type operator struct {
	name     string
	group    string
	set      *katalog.Set
	bundle   *bundle.Bundle
	manifest []byte
	rec      *watchRecorder
	gvr      schema.GroupVersionResource
}

// newOperator writes a Katalog named name (its own CRD group, ConfigMap children) and
// generates its bundle in namespace ns with the default name: the Katalog's.
func newOperator(t *testing.T, name, ns, endpoint string, caPEM []byte) *operator {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	group := name + ".example.com"
	path := testKatalog(t, dir, group, endpoint, "ca.pem")
	k, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k = bytes.Replace(k, []byte("metadata: {name: bundle-e2e}"), []byte("metadata: {name: "+name+"}"), 1)
	if err := os.WriteFile(path, k, 0o600); err != nil {
		t.Fatal(err)
	}
	set := load(t, path)
	def, err := bundle.DefaultName(set)
	if err != nil || def != name {
		t.Fatalf("DefaultName = %q, %v; want %s", def, err, name)
	}
	b, err := bundle.Generate(set, bundle.Options{Name: def, Namespace: ns, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return &operator{name: name, group: group, set: set, bundle: b, manifest: manifest,
		gvr: schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}}
}

// apply applies the bundle and waits until the apiserver's own controllers are done with
// it (the CRD Established, the FlowSchema's status written) and its RBAC is in force.
func (o *operator) apply(t *testing.T, ns string) {
	t.Helper()
	env.Kubectl(t, o.manifest, "apply", "--server-side", "-f", "-")
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+o.group)
	env.Kubectl(t, nil, "wait", "--for=condition=Dangling=False", "--timeout=60s", "flowschema/"+o.name+"-leader-election")
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(o.set, rbacgen.Options{Name: o.name, Namespace: ns, LeaderElect: true}) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, ns, o.name, attrs...)
}

// run starts the Deployment's command line as the pod would run it (see
// TestBundleRunsAsTheClusterWould), with a real token of its own ServiceAccount, through
// its watchRecorder. It is stopped with SIGTERM when the test ends, and must exit 0.
func (o *operator) run(t *testing.T, ork, ns string) {
	t.Helper()
	o.rec = newWatchRecorder(t)
	root, deploy := podOnDisk(t, o.bundle)
	var args []string
	for _, a := range deploy.Spec.Template.Spec.Containers[0].Args {
		args = append(args, strings.Replace(a, bundle.MountPath, filepath.Join(root, bundle.MountPath), 1))
	}
	tr, err := env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), deploy.Spec.Template.Spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: o.rec.url, CertificateAuthorityData: o.rec.caPEM}
	cfg.AuthInfos["ork"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "ork"}
	cfg.CurrentContext = "e2e"
	kubeconfig := filepath.Join(root, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(ork, args...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "KUBECONFIG=" + kubeconfig,
		"ORK_HEALTH_ADDR=" + addr, "ORK_METRICS_ADDR=" + addr, "POD_NAMESPACE=" + ns}
	p := testkit.Start(t, cmd)
	logs := p.Output
	t.Cleanup(func() {
		grace := time.Duration(*deploy.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		if inTime, err := p.Terminate(grace); !inTime {
			t.Errorf("%s still ran after its grace period", o.name)
		} else if err != nil {
			t.Errorf("%s exited with %v after SIGTERM, want 0", o.name, err)
		}
		if t.Failed() {
			t.Logf("%s: ork %s\n%s", o.name, strings.Join(args, " "), logs.String())
		}
	})
	eventually(t, o.name+" ready", func(ctx context.Context) (bool, error) {
		select {
		case <-p.Exited():
			t.Fatalf("%s exited: %v\n%s", o.name, p.Err(), logs.String())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
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

// Two operators, each from its own Katalog (its own name, CRD and reconciler; both write
// ConfigMaps), installed side by side in one namespace with their default names: applying
// the second bundle changes no object of the first; each runs as its own ServiceAccount,
// holds its own Lease and converges its own custom resource; and neither ork ever receives
// the other's children (its ConfigMap lists and watches select on its operator label), not
// when they are created, nor when they change.
func TestTwoBundlesSideBySide(t *testing.T) {
	env.Require(t)
	t.Parallel()
	ork := buildOrk(t)
	ns := uniq("ork-side")
	srvA, caA := tlsReconciler(t)
	srvB, caB := tlsReconciler(t)
	a := newOperator(t, uniq("ork-a"), ns, srvA.URL+"/reconcile", caA)
	b := newOperator(t, uniq("ork-b"), ns, srvB.URL+"/reconcile", caB)
	// Cleanups run last first: a's objects and the shared Namespace, then what is left of b's.
	cleanupBundle(t, b.manifest)
	cleanupBundle(t, a.manifest)

	a.apply(t, ns)
	before := resourceVersions(t, a.manifest)
	if len(before) != len(a.bundle.Objects) {
		t.Fatalf("the apiserver has %d of a's %d objects", len(before), len(a.bundle.Objects))
	}
	b.apply(t, ns)
	if d := cmp.Diff(before, resourceVersions(t, a.manifest)); d != "" {
		t.Errorf("applying b's bundle changed a's objects (-before +after resourceVersion):\n%s", d)
	}
	for _, o := range a.bundle.Objects {
		if o.GetKind() != "Namespace" && o.GetName() == b.name {
			t.Errorf("a's %s is named after b", o.GetKind())
		}
	}
	env.Kubectl(t, nil, "create", "secret", "generic", "reconciler-token", "-n", ns, "--from-literal=token="+reconcilerToken)

	a.run(t, ork, ns)
	b.run(t, ork, ns)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*operator{a, b} {
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": o.group + "/v1", "kind": "App", "metadata": map[string]any{"name": o.name}, "spec": map[string]any{"size": "1"},
		}}
		if _, err := dyn.Resource(o.gvr).Namespace(ns).Create(t.Context(), cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*operator{a, b} {
		eventually(t, o.name+"'s CR Ready with its child labelled", func(ctx context.Context) (bool, error) {
			cr, err := dyn.Resource(o.gvr).Namespace(ns).Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
			ready := false
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
					ready = true
				}
			}
			child, err := env.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, o.name+"-child", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return ready && child.Labels[naming.OperatorLabel] == o.name, nil
		})
		lease, err := env.Clientset.CoordinationV1().Leases(ns).Get(t.Context(), o.name, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			t.Errorf("%s holds no Lease %s: %v", o.name, o.name, err)
		}
	}

	// Each ork's child cache receives its own children, through a selector on its name.
	for _, o := range []*operator{a, b} {
		eventually(t, o.name+"'s cache to receive its child", func(context.Context) (bool, error) {
			return o.rec.saw(o.name + "-child"), nil
		})
		sels := o.rec.labelSelectors()
		if len(sels) == 0 {
			t.Fatalf("%s never listed ConfigMaps", o.name)
		}
		for _, s := range sels {
			// The one list at start of the children an older ork wrote (no operator label
			// at all): ork labels only those its own CRDs' custom resources control.
			if s == naming.ManagedByLabel+"="+naming.ManagedBy+",!"+naming.OperatorLabel {
				continue
			}
			// And the one list at start of the children an ork under the old default name
			// wrote (docs/naming.md): relabelled only when its own CRDs' custom resources
			// control them.
			if s == naming.ManagedByLabel+"="+naming.ManagedBy+","+naming.OperatorLabel+"="+naming.DefaultOperator && o.name != naming.DefaultOperator {
				continue
			}
			if !strings.Contains(s, naming.OperatorLabel+"="+o.name) {
				t.Errorf("%s lists or watches ConfigMaps with labelSelector %q, not its operator label", o.name, s)
			}
		}
	}
	// The other's children change: first a's, then b's, each with a marker. A watch streams
	// events in order, so once b's ork received the marker on its own child, it would have
	// received a's before, had it watched a's children (and likewise the other way round).
	for _, o := range []*operator{a, b} {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"edited":"marker-%s"}}}`, o.name)
		if _, err := env.Clientset.CoreV1().ConfigMaps(ns).Patch(t.Context(), o.name+"-child", types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*operator{a, b} {
		eventually(t, o.name+" to receive the edit of its child", func(context.Context) (bool, error) {
			return o.rec.saw("marker-" + o.name), nil
		})
	}
	for _, pair := range [][2]*operator{{a, b}, {b, a}} {
		self, other := pair[0], pair[1]
		for _, s := range []string{other.name + "-child", "marker-" + other.name} {
			if self.rec.saw(s) {
				t.Errorf("%s's ork received %q, a child of %s: its cache holds the other operator's children", self.name, s, other.name)
			}
		}
	}
}
