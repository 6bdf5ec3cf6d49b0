package rbacgen

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// A rollout needs its ConfigMap (by name), Events on it, and the candidate's auth Secret; a
// Katalog without a candidate needs none of them.
func TestCandidateRights(t *testing.T) {
	dir := t.TempDir()
	write := func(name, candidate string) string {
		p := filepath.Join(dir, name)
		doc := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ` + name + `}
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "https://reconciler.internal/reconcile"
            managedResources: [{group: apps, plural: deployments}]
` + candidate
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	with := write("with", `            candidate:
              endpoint: "https://v2.internal/reconcile"
              mode: shadow
              auth: {secretRef: {name: v2-token, key: token}}
`)
	res, err := Generate(load(t, with), Options{Name: "web", Namespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	role := roleIn(res, "ops")
	if role == nil {
		t.Fatal("no Role in ork's namespace")
	}
	wantCM := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"web-rollout"}, Verbs: []string{"get", "update", "patch"}}
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return equalRule(r, wantCM) }) {
		t.Errorf("Role in ops lacks %v:\n%v", wantCM, role.Rules)
	}
	for _, r := range []struct{ resource, verb string }{{"configmaps", "create"}, {"events", "create"}} {
		if !grants(role.Rules, r.resource, r.verb) {
			t.Errorf("Role in ops does not grant %s %s", r.verb, r.resource)
		}
	}
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, "secrets") && slices.Contains(r.ResourceNames, "v2-token")
	}) {
		t.Errorf("Role in ops does not grant the candidate's Secret v2-token:\n%v", role.Rules)
	}

	without, err := Generate(load(t, write("without", "")), Options{Name: "web", Namespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if r := roleIn(without, "ops"); r != nil && grants(r.Rules, "configmaps", "get") {
		t.Errorf("a Katalog without a candidate is granted ConfigMaps:\n%v", r.Rules)
	}
}

func equalRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.Verbs, b.Verbs)
}
