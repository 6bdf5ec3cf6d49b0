package run

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/rbacgen"
)

// MissingPermissionsError lists what the current identity may not do but ork run needs.
type MissingPermissionsError struct{ Missing []rbacgen.Permission }

func (e *MissingPermissionsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "preflight: the current identity lacks %d permission(s) that `ork rbac gen` would grant:", len(e.Missing))
	for _, p := range e.Missing {
		res := p.Resource
		if p.Subresource != "" {
			res += "/" + p.Subresource
		}
		group := p.Group
		if group == "" {
			group = `""`
		}
		fmt.Fprintf(&b, "\n  verb=%s group=%s resource=%s", p.Verb, group, res)
		if p.Name != "" {
			fmt.Fprintf(&b, " name=%s", p.Name)
		}
		if p.Namespace != "" {
			fmt.Fprintf(&b, " namespace=%s", p.Namespace)
		}
	}
	b.WriteString("\n(hint: apply the output of `ork rbac gen` and run ork as its ServiceAccount)")
	return b.String()
}

// preflight asks the apiserver, with SelfSubjectAccessReviews, for every permission the
// generated RBAC would grant, each in its namespace (the Lease and static Secrets in theirs,
// the namespaced types in each watched namespace), and fails with the full list of what is
// missing.
func (e *Engine) preflight(ctx context.Context) error {
	perms := rbacgen.Permissions(e.set, rbacgen.Options{
		Name: e.opts.Name, Namespace: e.opts.Namespace, LeaderElect: e.opts.LeaderElect, LeaseName: e.opts.LeaseName,
		ShardBuckets: e.opts.ShardBuckets, ShardName: e.opts.Name,
		InstallCRDs: e.opts.InstallCRDs, WatchNamespaces: e.opts.WatchNamespaces,
		OperationCallbackSecret: e.opts.OperationCallbackSecret,
	})
	done := e.step("preflight: checking %d permissions with SelfSubjectAccessReviews", len(perms))
	err := e.reviewAll(ctx, perms)
	done(err)
	return err
}

// reviewAll fails with every permission the current identity lacks.
func (e *Engine) reviewAll(ctx context.Context, perms []rbacgen.Permission) error {
	var missing []rbacgen.Permission
	for _, p := range perms {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: new(p.Attributes()),
		}}
		res, err := e.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("preflight access review: %w", err)
		}
		if !res.Status.Allowed {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &MissingPermissionsError{Missing: missing}
	}
	return nil
}
