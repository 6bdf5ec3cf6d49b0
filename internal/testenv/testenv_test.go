package testenv_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

var widgets = schema.GroupVersionResource{Group: "testenv.orkspace.io", Version: "v1", Resource: "widgets"}

func TestKubectlTalksToTheControlPlaneThroughTheKubeconfig(t *testing.T) {
	e := env.Require(t)
	out := e.Kubectl(t, nil, "version", "-o", "json")
	var v struct {
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	if v.ServerVersion.GitVersion != testenv.K8sVersion {
		t.Errorf("server version %q, want %q", v.ServerVersion.GitVersion, testenv.K8sVersion)
	}
}

func TestCustomResourceStatusGoesThroughTheSubresource(t *testing.T) {
	e := env.Require(t)
	crd := e.InstallCRD(t, "testdata/widgets.crd.yaml")
	if crd.Spec.Versions[0].Subresources.Status == nil {
		t.Fatal("CRD has no status subresource")
	}
	ns := e.Namespace(t)
	dyn := dynamic.NewForConfigOrDie(e.Config).Resource(widgets).Namespace(ns)

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "testenv.orkspace.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(1)},
	}}
	w, err := dyn.Create(t.Context(), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CR: %v", err)
	}
	// Through the main resource a status change is dropped ...
	_ = unstructured.SetNestedField(w.Object, "Ignored", "status", "phase")
	if w, err = dyn.Update(t.Context(), w, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update CR: %v", err)
	}
	if _, found, _ := unstructured.NestedString(w.Object, "status", "phase"); found {
		t.Errorf("status written through the main resource: %v", w.Object["status"])
	}
	// ... and through /status it is kept.
	_ = unstructured.SetNestedField(w.Object, "Ready", "status", "phase")
	if _, err := dyn.UpdateStatus(t.Context(), w, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	got, err := dyn.Get(t.Context(), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
		t.Errorf("status.phase = %q, want Ready", phase)
	}
}

func TestServerSideApplyRecordsTheFieldManager(t *testing.T) {
	e := env.Require(t)
	ns := e.Namespace(t)
	deploy := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
	  "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
	  "spec":{"containers":[{"name":"web","image":"registry.invalid/web:1"}]}}}}`)
	force := true
	got, err := e.Clientset.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.ApplyPatchType, deploy,
		metav1.PatchOptions{FieldManager: "orkestra", Force: &force})
	if err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	var managers []string
	for _, mf := range got.ManagedFields {
		managers = append(managers, mf.Manager+"/"+string(mf.Operation))
	}
	if !strings.Contains(strings.Join(managers, " "), "orkestra/Apply") {
		t.Errorf("managedFields managers %v, want orkestra/Apply", managers)
	}
	// A second manager applying a conflicting field without force is refused.
	conflicting := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
	  "spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.invalid/web:2"}]}}}}`)
	_, err = e.Clientset.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.ApplyPatchType, conflicting,
		metav1.PatchOptions{FieldManager: "someone-else"})
	if !apierrors.IsConflict(err) {
		t.Errorf("conflicting apply: got %v, want a 409 conflict", err)
	}
}

func TestImpersonatedServiceAccountIsForbiddenOutsideItsRole(t *testing.T) {
	e := env.Require(t)
	e.InstallCRD(t, "testdata/widgets.crd.yaml")
	ns := e.Namespace(t)
	ctx := t.Context()
	admin := e.Clientset
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "limited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "limited", Namespace: ns}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	e.WaitAllowed(t, ns, "limited", authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "configmaps"})

	cfg := e.ServiceAccountConfig(ns, "limited")
	sa := kubernetes.NewForConfigOrDie(cfg)
	if _, err := sa.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list configmaps as the ServiceAccount: %v", err)
	}
	forbidden := map[string]error{}
	_, forbidden["list secrets"] = sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	_, forbidden["create configmap"] = sa.CoreV1().ConfigMaps(ns).Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, forbidden["list configmaps in default"] = sa.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	_, forbidden["list widgets"] = dynamic.NewForConfigOrDie(cfg).Resource(widgets).Namespace(ns).List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: got %v, want 403 Forbidden", what, err)
		}
	}
}
