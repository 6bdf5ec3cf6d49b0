package runtest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orkspace/ork/internal/rbacgen"
)

// ApplyRBAC creates the objects of rbac gen's output with the clientset (no kubectl
// needed); the cluster-wide ones are deleted when the test ends.
func ApplyRBAC(t testing.TB, cs kubernetes.Interface, r *rbacgen.Result) {
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
