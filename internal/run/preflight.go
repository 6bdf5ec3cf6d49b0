package run

import (
	"context"

	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/run/preflight"
)

// MissingPermissionsError lists what the current identity may not do but ork run needs.
type MissingPermissionsError = preflight.MissingPermissionsError

// preflight asks the apiserver, with SelfSubjectAccessReviews, for every permission the
// generated RBAC would grant, each in its namespace (the Lease and static Secrets in theirs,
// the namespaced types in each watched namespace), and fails with the full list of what is
// missing (run/preflight).
func (e *Engine) preflight(ctx context.Context) error {
	perms := rbacgen.Permissions(e.set, rbacgen.Options{
		Name: e.opts.Name, Namespace: e.opts.Namespace, LeaderElect: e.opts.LeaderElect, LeaseName: e.opts.LeaseName,
		ShardBuckets: e.opts.ShardBuckets, ShardName: e.opts.Name,
		InstallCRDs: e.opts.InstallCRDs, WatchNamespaces: e.opts.WatchNamespaces,
		OperationCallbackSecret: e.opts.OperationCallbackSecret,
	})
	return preflight.Check(ctx, e.kube.AuthorizationV1().SelfSubjectAccessReviews(), perms, e.step)
}
