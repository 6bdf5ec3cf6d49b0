package run_test

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// ork runs as the ServiceAccount of `ork rbac gen --leader-elect --lease-name --install-crds
// --watch-namespace`: every right narrowed to a name or a namespace is enough (the preflight
// passes, the Lease is taken, the CRD applied, a CR converges), and a CR outside the watched
// namespace is never called.
func TestWatchNamespaceRunsUnderItsNarrowedRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outside, second := env.Namespace(t), env.Namespace(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), CRDFile: f.WriteCRD("App", "apps")})
	name := "ork-" + f.NS
	watched := []string{f.NS, second}
	gen := rbacgen.Options{Name: name, Namespace: f.NS, LeaderElect: true, LeaseName: name + "-leader",
		InstallCRDs: true, WatchNamespaces: watched}
	rbac, err := rbacgen.Generate(set, gen)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing cluster-wide for a namespaced type: the ClusterRole keeps the access reviews
	// and the CRD, by name.
	for _, r := range rbac.ClusterRole.Rules {
		if g := r.APIGroups[0]; g != "authorization.k8s.io" && (g != "apiextensions.k8s.io" || len(r.ResourceNames) != 1) {
			t.Errorf("the ClusterRole grants %+v", r)
		}
	}
	manifest, err := rbac.YAML("e2e")
	if err != nil {
		t.Fatal(err)
	}
	env.Kubectl(t, manifest, "apply", "-f", "-")
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(set, gen) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, f.NS, name, attrs...)

	createStray(t, f, outside)
	f.Start(set, env.ServiceAccountConfig(f.NS, name), func(o *run.Options) {
		o.LeaderElect, o.LeaseName, o.InstallCRDs, o.WatchNamespaces = true, gen.LeaseName, true, watched
	})
	f.CreateCR("web", map[string]any{"replicas": 2})
	f.WaitReady("web", "True")
	if _, err := f.Get(runtest.Deployments, "web"); err != nil {
		t.Errorf("child not applied under the narrowed role: %v", err)
	}
	// The second watched namespace has caches and a Role of its own.
	web2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.GVR.GroupVersion().String(), "kind": "App",
		"metadata": map[string]any{"name": "web2"}, "spec": map[string]any{"replicas": 1},
	}}
	if _, err := f.Dyn.Resource(f.GVR).Namespace(second).Create(t.Context(), web2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("Ready=True on "+second+"/web2", func() (bool, error) {
		u, err := f.Dyn.Resource(f.GVR).Namespace(second).Get(t.Context(), "web2", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := runtest.ReadyCondition(u)
		return c != nil && c["status"] == "True", nil
	})
	if _, err := f.Dyn.Resource(runtest.Deployments).Namespace(second).Get(t.Context(), "web2", metav1.GetOptions{}); err != nil {
		t.Errorf("child not applied in the second watched namespace: %v", err)
	}
	lease, err := env.Clientset.CoordinationV1().Leases(f.NS).Get(t.Context(), gen.LeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		t.Errorf("the Lease %s/%s is not held: %v", f.NS, gen.LeaseName, err)
	}
	assertNeverCalled(t, f, ep, outside)
	if logs := strings.ToLower(f.Logs.String()); strings.Contains(logs, "forbidden") {
		t.Errorf("ork logged a forbidden error under the narrowed role:\n%s", f.Logs.String())
	}
}

// A child the reconciler puts in a namespace ork does not watch is refused before anything
// is applied: ork could neither see it nor write it there.
func TestWatchNamespaceRefusesAChildOutsideIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outside := env.Namespace(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "service", "fields": map[string]any{"name": "here", "port": 80}},
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "there", "namespace": outside},
				"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}},
		}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	// ork runs as the admin here, who may list everywhere: only its informers' scope keeps
	// it from the stray CR.
	createStray(t, f, outside)
	f.Start(set, nil, func(o *run.Options) { o.WatchNamespaces = []string{f.NS} })
	f.CreateCR("web", nil)
	cr := f.WaitReady("web", "False")
	assertNeverCalled(t, f, ep, outside)
	cond := runtest.ReadyCondition(cr)
	if msg, _ := cond["message"].(string); !strings.HasPrefix(msg, "InvalidResource: nothing applied: ") || !strings.Contains(msg, "namespace "+outside+" is not watched") {
		t.Errorf("Ready %v: want a message saying nothing was applied as the child's namespace is not watched", cond)
	}
	f.MustNotExist(runtest.Services, "here") // all or nothing
}

// A cluster-scoped CRD cannot be watched by namespace: ork refuses to start.
func TestWatchNamespaceRejectsAClusterScopedCRD(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{Cluster: true})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: "http://127.0.0.1:1/"})
	_, err := run.New(set, run.Options{RESTConfig: env.Config, WatchNamespaces: []string{f.NS}})
	if err == nil || !strings.Contains(err.Error(), "crd app is cluster-scoped") {
		t.Fatalf("got %v, want an error naming the cluster-scoped crd app", err)
	}
}

// createStray creates the CR "stray" in namespace, outside the watched set, before ork
// starts.
func createStray(t *testing.T, f *fixture, namespace string) {
	t.Helper()
	stray := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.GVR.GroupVersion().String(), "kind": "App",
		"metadata": map[string]any{"name": "stray"}, "spec": map[string]any{"replicas": 1},
	}}
	if _, err := f.Dyn.Resource(f.GVR).Namespace(namespace).Create(t.Context(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// assertNeverCalled checks, once a CR in the watched namespace has been reconciled, that the
// stray CR was not: it existed before ork listed anything, so had ork watched its namespace,
// its call would have come no later than the watched CR's (both are queued by the caches'
// first list or add event; the watched one was created after ork was ready). Nor did ork
// write its status or an Event there.
func assertNeverCalled(t *testing.T, f *fixture, ep *endpoint, namespace string) {
	t.Helper()
	for _, c := range ep.Recorded() {
		if c.CRName() == "stray" {
			t.Errorf("the reconciler was called for a CR outside --watch-namespace: %s", c.Raw)
		}
	}
	got, err := f.Dyn.Resource(f.GVR).Namespace(namespace).Get(t.Context(), "stray", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if runtest.ReadyCondition(got) != nil {
		t.Errorf("ork wrote a status on a CR outside --watch-namespace: %v", got.Object["status"])
	}
	if evs, err := env.Clientset.CoreV1().Events(namespace).List(t.Context(), metav1.ListOptions{}); err != nil || len(evs.Items) != 0 {
		t.Errorf("Events in the unwatched namespace (%v): %+v", err, evs)
	}
}

// A cluster-scoped child type has no namespace to narrow to: under --watch-namespace ork
// still caches it across the cluster (a cache per namespace could not list it) and applies it.
func TestWatchNamespaceWatchesAClusterScopedChildTypeClusterWide(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env.InstallCRD(t, f.WriteCRDWith("Zone", "zones", runtest.CRDOptions{Cluster: true}))
	zone := "zone-" + f.NS
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{map[string]any{
			"apiVersion": f.Group + "/v1", "kind": "Zone", "metadata": map[string]any{"name": zone},
		}}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{f.Group + "/zones"}})
	f.Start(set, nil, func(o *run.Options) { o.WatchNamespaces = []string{f.NS} })
	f.CreateCR("web", nil)
	f.WaitReady("web", "True")
	zones := f.GVR.GroupVersion().WithResource("zones")
	if _, err := f.Dyn.Resource(zones).Get(t.Context(), zone, metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster-scoped child was not applied: %v", err)
	}
}
