package testenv

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitAllowed blocks until the ServiceAccount namespace/name may do each of attrs. The
// RBAC authorizer reads roles and bindings from informer caches, so a binding that was just
// created can still be denied for some milliseconds, and each role and binding arrives on
// its own: a test that creates RBAC and then acts under it must wait for all of it, or it
// is flaky.
func (e *Env) WaitAllowed(t testing.TB, namespace, name string, attrs ...authorizationv1.ResourceAttributes) {
	t.Helper()
	cfg := e.ServiceAccountConfig(namespace, name)
	for _, a := range attrs {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: cfg.Impersonate.UserName, Groups: cfg.Impersonate.Groups, ResourceAttributes: &a,
		}}
		var last *authorizationv1.SubjectAccessReview
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true,
			func(ctx context.Context) (bool, error) {
				res, err := e.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
				if err != nil {
					return false, err
				}
				last = res
				return res.Status.Allowed, nil
			})
		if err != nil {
			reason := ""
			if last != nil {
				reason = last.Status.Reason
			}
			t.Fatalf("testenv: %s never became allowed to %+v (%q): %v", cfg.Impersonate.UserName, a, reason, err)
		}
	}
}
