// Package preflight checks, before `ork run` starts its controllers, that the current
// identity holds every permission `ork rbac gen` would grant for the run, with
// SelfSubjectAccessReviews.
package preflight

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"

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

// Check asks the apiserver, through reviews, for every permission of perms (each in its
// namespace), as one step of the run's progress, and fails with the full list of what is
// missing (a *MissingPermissionsError).
func Check(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, perms []rbacgen.Permission,
	step func(format string, a ...any) func(error)) error {
	done := step("preflight: checking %d permissions with SelfSubjectAccessReviews", len(perms))
	err := reviewAll(ctx, reviews, perms)
	done(err)
	return err
}

// reviewAll fails with every permission the current identity lacks.
func reviewAll(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, perms []rbacgen.Permission) error {
	var missing []rbacgen.Permission
	for _, p := range perms {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: new(p.Attributes()),
		}}
		res, err := reviews.Create(ctx, review, metav1.CreateOptions{})
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
