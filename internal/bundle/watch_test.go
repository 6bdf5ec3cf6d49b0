package bundle_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/bundle"
)

func TestWatchNamespacesReachOrkRunAndTheRoles(t *testing.T) {
	b := generate(t, bundle.Options{WatchNamespaces: []string{"team-b", "team-a", "team-b"}}, remoteExample)
	args := deploymentOf(t, b).Spec.Template.Spec.Containers[0].Args
	var watch []string
	for _, a := range args {
		if ns, ok := strings.CutPrefix(a, "--watch-namespace="); ok {
			watch = append(watch, ns)
		}
	}
	if !slices.Equal(watch, []string{"team-a", "team-b"}) {
		t.Errorf("ork run args %q: want --watch-namespace=team-a and =team-b, sorted, once each", args)
	}
	var roles []string
	for _, o := range b.Objects {
		if o.GetKind() == "Role" || o.GetKind() == "RoleBinding" {
			roles = append(roles, o.GetKind()+" "+o.GetNamespace())
		}
	}
	// default: the example's Secret; orkestra-system: the Lease.
	want := []string{"Role default", "RoleBinding default", "Role orkestra-system", "RoleBinding orkestra-system",
		"Role team-a", "RoleBinding team-a", "Role team-b", "RoleBinding team-b"}
	if !slices.Equal(roles, want) {
		t.Errorf("roles %q, want %q", roles, want)
	}
	if cmd := b.Command(); !strings.HasSuffix(cmd, "--watch-namespace team-a --watch-namespace team-b") {
		t.Errorf("command %q does not carry --watch-namespace", cmd)
	}
}

func TestWatchNamespacesRejectAClusterScopedCRD(t *testing.T) {
	_, err := bundle.Generate(load(t, "../rbacgen/testdata/shared-group.katalog.yaml"),
		bundle.Options{WatchNamespaces: []string{"a"}, Version: "1.2.3"})
	if err == nil || !strings.Contains(err.Error(), "crd backup is cluster-scoped") {
		t.Errorf("got %v, want an error naming the cluster-scoped crd backup", err)
	}
}
