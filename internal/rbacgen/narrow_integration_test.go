package rbacgen_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rbacgen"
)

// crdManifest is a minimal namespaced CRD in group.
func crdManifest(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group)
}

// narrowKatalog writes a Katalog whose CRD has a crdFile in group and whose token is the
// static Secret token in secretNamespace.
func narrowKatalog(t *testing.T, group, secretNamespace string) *katalog.Set {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crdManifest(group)), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: narrow}
spec:
  crds:
    widget:
      crdFile: ./crd.yaml
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "https://reconciler.example.com/reconcile"
            managedResources: [{group: "", plural: configmaps}]
            auth: {secretRef: {name: token, namespace: %s, key: token}}
`, secretNamespace)
	path := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{path})
	if err != nil || katalog.HasErrors(findings) {
		t.Fatalf("load: %v %v", err, findings)
	}
	return set
}

// Every right docs/rbac.md narrows, asked of the apiserver for its name and namespace (allowed)
// and for its neighbours (denied), then exercised as the ServiceAccount: the Lease in ork's
// namespace by its name only, the Katalog's CRD only (a server-side apply that creates it
// is authorised as patch and create of that name), the static Secret only.
func TestNarrowedRightsAllowTheirNameAndNamespaceOnly(t *testing.T) {
	e := env.Require(t)
	ns, secretNS := e.Namespace(t), e.Namespace(t)
	group := ns + ".ork.test"
	crdName := "widgets." + group
	set := narrowKatalog(t, group, secretNS)
	opts := rbacgen.Options{Name: ns, Namespace: ns, LeaderElect: true, InstallCRDs: true}
	res, err := rbacgen.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := res.YAML("test")
	if err != nil {
		t.Fatal(err)
	}
	e.Kubectl(t, manifest, "apply", "-f", "-")
	waitForRBAC(t, e, ns, rbacgen.Permissions(set, opts))

	lease := func(verb, name, namespace string) rbacgen.Permission {
		return rbacgen.Permission{Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Name: name, Namespace: namespace}
	}
	crd := func(verb, name string) rbacgen.Permission {
		return rbacgen.Permission{Verb: verb, Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: name}
	}
	secret := func(verb, name, namespace string) rbacgen.Permission {
		return rbacgen.Permission{Verb: verb, Resource: "secrets", Name: name, Namespace: namespace}
	}
	for _, tt := range []struct {
		what  string
		p     rbacgen.Permission
		allow bool
	}{
		{"get its Lease", lease("get", ns, ns), true},
		{"update its Lease", lease("update", ns, ns), true},
		{"create a Lease in its namespace", lease("create", "", ns), true},
		{"update its Lease's name in kube-system", lease("update", ns, "kube-system"), false},
		{"create a Lease in kube-system", lease("create", "", "kube-system"), false},
		{"update another operator's Lease", lease("update", "other-operator", ns), false},
		{"get another operator's Lease", lease("get", "other-operator", ns), false},
		{"delete its Lease", lease("delete", ns, ns), false},
		{"update Leases cluster-wide", lease("update", ns, ""), false},
		{"get its CRD", crd("get", crdName), true},
		{"patch its CRD", crd("patch", crdName), true},
		{"create its CRD by name (server-side apply)", crd("create", crdName), true},
		{"patch another CRD", crd("patch", "webapps.myorg.io"), false},
		{"create a CRD with no name (POST)", crd("create", ""), false},
		{"delete its CRD", crd("delete", crdName), false},
		{"get its Secret", secret("get", "token", secretNS), true},
		{"get another Secret there", secret("get", "other", secretNS), false},
		{"get its Secret's name in another namespace", secret("get", "token", ns), false},
		{"list Secrets there", secret("list", "", secretNS), false},
		{"get its Secret cluster-wide", secret("get", "token", ""), false},
	} {
		if got := allowed(t, e.Clientset, ns, ns, tt.p.Namespace, tt.p); got != tt.allow {
			t.Errorf("%s (%+v): allowed %v, want %v", tt.what, tt.p, got, tt.allow)
		}
	}

	// As the ServiceAccount. The CRD does not exist yet: ork's server-side apply creates it.
	ctx := t.Context()
	cfg := e.ServiceAccountConfig(ns, ns)
	sa := kubernetes.NewForConfigOrDie(cfg)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crds := dynamic.NewForConfigOrDie(cfg).Resource(crdGVR)
	apply := func(manifest string) error {
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
			t.Fatal(err)
		}
		_, err := crds.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "orkestra", Force: true})
		return err
	}
	t.Cleanup(func() {
		// t.Context is cancelled in Cleanup.
		_ = dynamic.NewForConfigOrDie(e.Config).Resource(crdGVR).Delete(context.Background(), crdName, metav1.DeleteOptions{})
	})
	if err := apply(crdManifest(group)); err != nil {
		t.Errorf("server-side apply creating its CRD: %v", err)
	}
	if err := apply(crdManifest("other." + group)); !apierrors.IsForbidden(err) {
		t.Errorf("server-side apply creating another CRD: got %v, want 403", err)
	}
	// Why create is granted: with patch alone, the same apply that creates is refused.
	patchOnly := ns + "-patch-only"
	otherCRD := "widgets.patch-only." + group
	e.Kubectl(t, []byte(fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: %[2]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules: [{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], resourceNames: [%[3]s], verbs: [get, patch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[2]s}]
`, patchOnly, ns, otherCRD)), "apply", "-f", "-")
	t.Cleanup(func() {
		_ = e.Clientset.RbacV1().ClusterRoles().Delete(context.Background(), patchOnly, metav1.DeleteOptions{})
		_ = e.Clientset.RbacV1().ClusterRoleBindings().Delete(context.Background(), patchOnly, metav1.DeleteOptions{})
	})
	e.WaitAllowed(t, ns, patchOnly, crd("patch", otherCRD).Attributes())
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(crdManifest("patch-only."+group)), &u.Object); err != nil {
		t.Fatal(err)
	}
	_, err = dynamic.NewForConfigOrDie(e.ServiceAccountConfig(ns, patchOnly)).Resource(crdGVR).
		Apply(ctx, otherCRD, u, metav1.ApplyOptions{FieldManager: "orkestra", Force: true})
	if !apierrors.IsForbidden(err) {
		t.Errorf("server-side apply creating a CRD with patch but not create on its name: got %v, want 403", err)
	}
	if _, err := sa.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create its Lease: %v", err)
	}
	if _, err := e.Clientset.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other-operator"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := e.Clientset.CoordinationV1().Leases(ns).Get(ctx, "other-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.CoordinationV1().Leases(ns).Update(ctx, other, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("update another operator's Lease: got %v, want 403", err)
	}
}
