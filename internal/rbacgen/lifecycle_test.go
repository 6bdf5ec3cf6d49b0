package rbacgen

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// prune deletes children, finalize writes the CR's metadata.finalizers, and ork finalizers
// release lists the CRs and patches them: the generated role grants each (through the
// managedResources and CR rules every remote CRD gets).
func TestPermissionsCoverPruneAndFinalize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "katalog.yaml")
	if err := os.WriteFile(path, []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: lifecycle}
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "https://reconciler.internal/reconcile"
            prune: true
            finalize: true
            payload: {children: {enabled: true}}
            managedResources: [{group: apps, plural: deployments}, {group: "", plural: persistentvolumeclaims}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	perms := Permissions(load(t, path), Options{})
	for _, want := range []Permission{
		{Verb: "delete", Group: "apps", Resource: "deployments"},
		{Verb: "delete", Resource: "persistentvolumeclaims"},
		{Verb: "list", Group: "myorg.io", Resource: "webapps"},
		{Verb: "patch", Group: "myorg.io", Resource: "webapps"},
		{Verb: "update", Group: "myorg.io", Resource: "webapps"},
		{Verb: "update", Group: "myorg.io", Resource: "webapps", Subresource: "finalizers"},
	} {
		if !slices.Contains(perms, want) {
			t.Errorf("no %+v among the permissions", want)
		}
	}
}
