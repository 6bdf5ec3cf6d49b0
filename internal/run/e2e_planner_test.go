package run_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/remotecheck"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/simulate"
)

// One planner: for the same answer, ork simulate --remote and ork remote check plan byte for
// byte the children ork run applies. Each child's applied annotation is the digest of the
// whole object as planned (namespace, ownerReferences, owner annotation, labels, the
// reconciler's fields), so equal digests are equal objects. Cluster-scoped children and a
// cluster-scoped CR take their scope from Kubernetes' built-in types offline, as ork run
// does from discovery: a ClusterRole of a CR in a namespace is written cluster-scoped, owned
// by annotation; a cluster-scoped CR may own a Namespace.
func TestSimulateAndRemoteCheckPlanWhatTheEngineApplies(t *testing.T) {
	t.Parallel()
	t.Run("namespaced CR", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		role := clusterObject(t, f, clusterroles, "reader-"+f.NS)
		planWhatTheEngineApplies(t, f, []string{"apps/deployments", "/services", "/configmaps", "rbac.authorization.k8s.io/clusterroles"}, []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 2, "port": 8080}},
			map[string]any{"type": "service", "fields": map[string]any{"name": "web-svc", "port": 80, "targetPort": 8080}},
			// A full object with labels of its own and a reconciler's (non-controller) owner.
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
				"name": "web-config", "labels": map[string]any{"tier": "web"},
				"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "peer", "uid": "peer-uid"}},
			}, "data": map[string]any{"a": "b"}},
			role.entry,
		}, []child{{runtest.Deployments, f.NS, "web"}, {runtest.Services, f.NS, "web-svc"}, {runtest.ConfigMaps, f.NS, "web-config"}, role.child})
	})
	t.Run("cluster-scoped CR", func(t *testing.T) {
		t.Parallel()
		f := newFixtureWith(t, runtest.CRDOptions{Cluster: true})
		role := clusterObject(t, f, clusterroles, "reader-"+f.NS)
		team := clusterObject(t, f, namespaces, "team-"+f.NS)
		planWhatTheEngineApplies(t, f, []string{"/configmaps", "rbac.authorization.k8s.io/clusterroles", "/namespaces"}, []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-config", "namespace": f.NS}},
			role.entry, team.entry,
		}, []child{{runtest.ConfigMaps, f.NS, "web-config"}, role.child, team.child})
	})
}

var (
	clusterroles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// child names an object ork run applies; namespace "" for a cluster-scoped one.
type child struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

type clusterChild struct {
	entry map[string]any
	child child
}

// clusterObject is a reconciler's entry for a cluster-scoped object of gvr (a ClusterRole or
// a Namespace), deleted at cleanup: nothing collects cluster-scoped children of a test.
func clusterObject(t *testing.T, f *fixture, gvr schema.GroupVersionResource, name string) clusterChild {
	t.Cleanup(func() {
		_ = f.Dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	kind := map[string]string{"clusterroles": "ClusterRole", "namespaces": "Namespace"}[gvr.Resource]
	return clusterChild{
		entry: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": kind, "metadata": map[string]any{"name": name}},
		child: child{gvr: gvr, name: name},
	}
}

// planWhatTheEngineApplies runs ork run on f's CR "web" with a reconciler answering
// entries, then ork simulate --remote and ork remote check on the same CR, and compares the
// digests of want as each planned them.
func planWhatTheEngineApplies(t *testing.T, f *fixture, managed []string, entries []any, want []child) {
	answer := func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": entries})
	}
	ep := runtest.NewEndpoint(t, answer)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managed,
		Payload: "              children:\n                enabled: true\n"})
	f.Start(set, nil)
	f.CreateCR("web", map[string]any{})
	cr := f.WaitReady("web", "True")
	applied := map[string]string{} // "ConfigMap/web-config" -> the digest ork run wrote
	for _, c := range want {
		u, err := f.Dyn.Resource(c.gvr).Namespace(c.namespace).Get(t.Context(), c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		applied[u.GetKind()+"/"+c.name] = u.GetAnnotations()[naming.AppliedAnnotation]
	}

	// The same CR, uid included, is what both offline tools start from.
	crFile := filepath.Join(f.Dir, "cr.yaml")
	b, err := yaml.Marshal(cr.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "reconciler-token", Namespace: f.NS}, StringData: map[string]string{"token": runtest.TestToken}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(secret)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []*unstructured.Unstructured{{Object: raw}}

	rep, err := simulate.Run(t.Context(), set, simulate.Options{CRD: "app", CRFile: crFile, Cycles: 2, Remote: &simulate.RemoteOptions{Secrets: secrets}})
	if err != nil {
		t.Fatal(err)
	}
	simulated := map[string]string{}
	for _, o := range rep.Objects {
		if _, ok := applied[o.GetKind()+"/"+o.GetName()]; ok {
			simulated[o.GetKind()+"/"+o.GetName()] = o.GetAnnotations()[naming.AppliedAnnotation]
		}
	}
	sameDigests(t, "ork simulate --remote", applied, simulated)

	check, err := remotecheck.Run(t.Context(), set, remotecheck.Options{CRD: "app", CR: cr, Secrets: manifest.NewSecrets("test", secrets...)})
	if err != nil {
		t.Fatal(err)
	}
	if !check.Conformant {
		t.Fatalf("remote check: not conformant: %+v", check.Violations)
	}
	// The second round of the check sends back, in prepared.children, the children as it
	// planned them.
	checked := map[string]string{}
	for _, c := range ep.Recorded() {
		if dry, _, _ := unstructured.NestedBool(c.Body, "prepared", "dryRun"); !dry {
			continue
		}
		children, _, _ := unstructured.NestedMap(c.Body, "prepared", "children")
		for _, byName := range children {
			for name, obj := range byName.(map[string]any) {
				u := unstructured.Unstructured{Object: obj.(map[string]any)}
				checked[u.GetKind()+"/"+name] = u.GetAnnotations()[naming.AppliedAnnotation]
			}
		}
	}
	sameDigests(t, "ork remote check", applied, checked)
}

func sameDigests(t *testing.T, tool string, engine, offline map[string]string) {
	t.Helper()
	for ref, want := range engine {
		if want == "" {
			t.Errorf("ork run wrote %s without its applied annotation", ref)
		}
		if got := offline[ref]; got != want {
			t.Errorf("%s planned %s with digest %q, ork run applied %q", tool, ref, got, want)
		}
	}
}
