package rbacgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

// roleIn is the Role generated in namespace, or nil.
func roleIn(res *Result, namespace string) *rbacv1.Role {
	for _, r := range res.Roles {
		if r.Namespace == namespace {
			return r
		}
	}
	return nil
}

// grants reports whether any rule grants verb on resource (any name, any group).
func grants(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func TestLeaseRightsAreARoleInOrksNamespaceLimitedToTheLeaseName(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		namespace string
		lease     string
	}{
		{"defaults: the lease is named as the role", Options{LeaderElect: true}, DefaultNamespace, DefaultName},
		{"a named lease", Options{LeaderElect: true, Name: "web", Namespace: "ops", LeaseName: "web-leader"}, "ops", "web-leader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Generate(load(t, remoteExample), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if grants(res.ClusterRole.Rules, "leases", "get") || grants(res.ClusterRole.Rules, "leases", "create") {
				t.Errorf("the ClusterRole grants Lease rights: %+v", res.ClusterRole.Rules)
			}
			role := roleIn(res, tt.namespace)
			if role == nil {
				t.Fatalf("no Role in %s; roles %+v", tt.namespace, res.Roles)
			}
			var leaseRules []rbacv1.PolicyRule
			for _, r := range role.Rules {
				if slices.Contains(r.Resources, "leases") {
					leaseRules = append(leaseRules, r)
				}
			}
			want := []rbacv1.PolicyRule{
				// list: the mode fence looks for a sharded ring's live bucket Leases.
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"list", "create"}},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{tt.lease}, Verbs: []string{"get", "update"}},
			}
			if diff := cmp.Diff(want, leaseRules); diff != "" {
				t.Errorf("lease rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStaticSecretIsARoleInItsNamespace(t *testing.T) {
	// The remote example's auth.secretRef is my-reconciler-token in default.
	res, err := Generate(load(t, remoteExample), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if grants(res.ClusterRole.Rules, "secrets", "get") {
		t.Errorf("the ClusterRole grants Secret reads: %+v", res.ClusterRole.Rules)
	}
	role := roleIn(res, "default")
	if role == nil {
		t.Fatalf("no Role in default; roles %+v", res.Roles)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"my-reconciler-token"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("Role in default (-want +got):\n%s", diff)
	}
	if b := res.RoleBindings[0]; b.Namespace != "default" || b.RoleRef.Kind != "Role" || b.Subjects[0].Namespace != DefaultNamespace {
		t.Errorf("binding %+v: want the Role in default bound to the ServiceAccount in %s", b, DefaultNamespace)
	}
}

func TestInstallCRDsIsLimitedToTheKatalogsCRDs(t *testing.T) {
	res, err := Generate(load(t, remoteExample), Options{InstallCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	var crdRules []rbacv1.PolicyRule
	for _, r := range res.ClusterRole.Rules {
		if slices.Contains(r.Resources, "customresourcedefinitions") {
			crdRules = append(crdRules, r)
		}
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
		ResourceNames: []string{"webapps.myorg.io"}, Verbs: []string{"get", "create", "patch"}}}
	if diff := cmp.Diff(want, crdRules); diff != "" {
		t.Errorf("CRD rules (-want +got):\n%s", diff)
	}
}

func TestWatchNamespacesGrantNamespacedTypesThereOnly(t *testing.T) {
	res, err := Generate(load(t, remoteExample, "../../examples/website/katalog.yaml"), Options{WatchNamespaces: []string{"team-b", "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	// Cluster-wide only what has no namespace: the preflight's access reviews.
	want := []rbacv1.PolicyRule{{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}}}
	if diff := cmp.Diff(want, res.ClusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		role := roleIn(res, ns)
		if role == nil {
			t.Fatalf("no Role in %s", ns)
		}
		for _, r := range []struct{ resource, verb string }{
			{"webapps", "watch"}, {"webapps/status", "patch"}, {"websites", "list"}, {"deployments", "create"},
			{"services", "delete"}, {"events", "create"},
		} {
			if !grants(role.Rules, r.resource, r.verb) {
				t.Errorf("Role in %s does not grant %s %s", ns, r.verb, r.resource)
			}
		}
	}
	var namespaces []string
	for i, r := range res.Roles {
		namespaces = append(namespaces, r.Namespace)
		if b := res.RoleBindings[i]; b.Namespace != r.Namespace || b.RoleRef.Name != r.Name {
			t.Errorf("RoleBinding %d %s/%s does not bind Role %s/%s", i, b.Namespace, b.Name, r.Namespace, r.Name)
		}
	}
	// default: the remote example's static Secret, outside the watched set.
	if diff := cmp.Diff([]string{"default", "team-a", "team-b"}, namespaces); diff != "" {
		t.Errorf("Role namespaces (-want +got):\n%s", diff)
	}
}

func TestWatchNamespacesRejectAClusterScopedCRD(t *testing.T) {
	// shared-group's backup CRD is cluster-scoped.
	_, err := Generate(load(t, "testdata/shared-group.katalog.yaml"), Options{WatchNamespaces: []string{"a"}})
	if err == nil || !strings.Contains(err.Error(), "crd backup is cluster-scoped") {
		t.Fatalf("got %v, want an error naming the cluster-scoped crd backup", err)
	}
	if _, err := Generate(load(t, "testdata/shared-group.katalog.yaml"), Options{}); err != nil {
		t.Fatalf("without --watch-namespace: %v", err)
	}
}

func TestWatchNamespacesWarnOfATypeOfUnknownScope(t *testing.T) {
	// custom's ServiceMonitor is neither built in nor a CRD of the Katalog.
	res, err := Generate(load(t, "testdata/custom.katalog.yaml"), Options{WatchNamespaces: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "servicemonitors.monitoring.coreos.com is not known")
	}) {
		t.Errorf("no warning about servicemonitors' scope: %q", res.Warnings)
	}
}

func TestWatchNamespacesKeepClusterScopedChildTypesClusterWide(t *testing.T) {
	path := writeKatalog(t, `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: scoped}
spec:
  crds:
    tenant:
      apiTypes: {group: t.example.com, version: v1, kind: Tenant, plural: tenants}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "https://t.example.com/reconcile"
            managedResources: [{group: "", plural: namespaces}, {group: "", plural: configmaps}]
            auth: {secretRef: {name: token, namespace: "{{ .metadata.namespace }}", key: token}}
`)
	res, err := Generate(load(t, path), Options{WatchNamespaces: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !grants(res.ClusterRole.Rules, "namespaces", "create") || grants(res.ClusterRole.Rules, "configmaps", "create") {
		t.Errorf("want namespaces cluster-wide and configmaps not: %+v", res.ClusterRole.Rules)
	}
	if role := roleIn(res, "a"); role == nil || !grants(role.Rules, "configmaps", "create") || grants(role.Rules, "namespaces", "create") {
		t.Errorf("want configmaps in a's Role and namespaces not: %+v", role)
	}
	// A templated namespace: the Secret's name, in every namespace.
	want := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"token"}, Verbs: []string{"get"}}
	if !slices.ContainsFunc(res.ClusterRole.Rules, func(r rbacv1.PolicyRule) bool { return cmp.Equal(r, want) }) {
		t.Errorf("no %+v in the ClusterRole: %+v", want, res.ClusterRole.Rules)
	}
}

func writeKatalog(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "katalog.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A related entry naming outright a namespace outside --watch-namespace is refused: ork
// would never watch it there. Inside the set, or templated, it is fine.
func TestWatchNamespacesRefuseAConstantRelatedNamespaceOutside(t *testing.T) {
	set := load(t, "testdata/related.katalog.yaml")
	err := CheckWatchScope(set, []string{"team-a"})
	if err == nil || !strings.Contains(err.Error(), `"shared"`) || !strings.Contains(err.Error(), "payload.related[4]") {
		t.Fatalf("CheckWatchScope = %v, want an error naming payload.related[4] and namespace \"shared\"", err)
	}
	if _, err := Generate(set, Options{WatchNamespaces: []string{"team-a"}}); err == nil {
		t.Error("Generate with --watch-namespace team-a accepted the related namespace shared")
	}
	if err := CheckWatchScope(set, []string{"team-a", "shared"}); err != nil {
		t.Errorf("CheckWatchScope with shared watched = %v, want nil", err)
	}
}
