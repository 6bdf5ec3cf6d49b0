package runtest

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rbacgen"
)

// GrantGeneratedRBAC gives the ServiceAccount name in the fixture's namespace the RBAC of
// `ork rbac gen` for set, alone, and waits until the apiserver's authorizer allows each of
// its permissions: an engine started with f.Env.ServiceAccountConfig(f.NS, name) then runs
// as a release installed with that RBAC would.
func (f *Fixture) GrantGeneratedRBAC(set *katalog.Set, name string) {
	f.T.Helper()
	opts := rbacgen.Options{Name: name, Namespace: f.NS}
	r, err := rbacgen.Generate(set, opts)
	if err != nil {
		f.T.Fatal(err)
	}
	applyRBAC(f.T, f.Env.Clientset, r)
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(set, opts) {
		attrs = append(attrs, p.Attributes())
	}
	f.Env.WaitAllowed(f.T, f.NS, name, attrs...)
}

// applyRBAC creates the objects of rbac gen's output with the clientset (no kubectl
// needed); the cluster-wide ones are deleted when the test ends.
func applyRBAC(t testing.TB, cs kubernetes.Interface, r *rbacgen.Result) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := cs.CoreV1().ServiceAccounts(r.ServiceAccount.Namespace).Create(ctx, r.ServiceAccount, metav1.CreateOptions{})
	must(err)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, r.ClusterRole, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), r.ClusterRole.Name, metav1.DeleteOptions{})
	})
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, r.ClusterRoleBinding, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), r.ClusterRoleBinding.Name, metav1.DeleteOptions{})
	})
	for _, role := range r.Roles {
		_, err = cs.RbacV1().Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{})
		must(err)
	}
	for _, b := range r.RoleBindings {
		_, err = cs.RbacV1().RoleBindings(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		must(err)
	}
}
